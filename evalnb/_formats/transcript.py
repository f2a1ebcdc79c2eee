"""Import plain-text agent transcripts (spec 002's transcript fallback).

When no structured events exist, a transcript is read with the target's command
pattern:

- When some lines start with a shell prompt (``$ `` or ``> ``), each such line is one
  tool call (its ``commands`` is the line without the prompt), whether or not it runs
  the target tool; lines without a prompt are output, so an output line that mentions
  the tool (``usage: notes ...``) is not mistaken for a command.
- Without any prompt, every line with a match of the pattern is one tool call.
  (:func:`evalnb._scoring.commands.transcript_calls` reads it; the interaction
  metrics' transcript fallback reads transcripts the same way.)
- Several target commands on one line are one call; its output is the lines after it,
  up to the next call (kept as ``stdout``).
- Its exit code is **approximate**: N from the first ``Exit code: N`` or
  ``exit status N`` in its output, else 1 when a line contains ``error:``, else 0.
  Every record says so (``exit_codes`` task field ``"approximate"``, and
  ``RunMeta.settings``).
- Lines before the first command are the assistant's text.
- A transcript does not say how the agent ended, so ``natural_stop`` (spec 002's
  completion) is None, unknown: rates over it count known values only. It records no
  LLM calls or tokens, and no prompt (:data:`PROMPT_MISSING`).
- Spec 002's ``no_transcript_errors`` gate is scored on the approximate exit codes.

Each file is one task attempt (task id = file name without its suffix); all files
of one call form one run.

Example:
    >>> import tempfile, pathlib
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "t1.txt"
    >>> _ = p.write_text("I'll add it.\\n$ notes add x\\nerror: no store\\n$ notes init\\n")
    >>> meta, [rec] = read_transcripts([p], "notes")
    >>> [(c.commands, c.exit_code) for c in rec.trace.tool_calls]
    [('notes add x', 1), ('notes init', 0)]
"""

from __future__ import annotations

import codecs
import hashlib
import re
from collections.abc import Sequence
from pathlib import Path

from evalnb._formats.detect import Format, Option, Probe, Run
from evalnb._scoring.commands import transcript_calls
from evalnb._scoring.gates import gate_rows, no_transcript_errors
from evalnb.errors import InputError, read_input
from evalnb.records import (
    AgentTrace,
    ContentBlock,
    Message,
    RunMeta,
    RunSettings,
    Task,
    TaskRecord,
    TaskScore,
    ToolCallResult,
)
from evalnb.records.rust_regex import RustRegex, compile_pattern
from evalnb.records.scenario import NoTranscriptErrors, default_command_pattern

SOURCE = "transcript"
PROMPT_MISSING = "(prompt not recorded: imported from a plain transcript)"
EXIT_RULE = "approximate: 'Exit code: N' / 'exit status N' after the command, else 1 on 'error:'"


def read_transcripts(
    paths: Sequence[str | Path], target: str, *, model: str = "unknown"
) -> tuple[RunMeta, list[TaskRecord]]:
    """Read transcript files as one run of ``model``; ``target`` is the tool's command name."""
    pattern = default_command_pattern(target)
    return _run([(Path(p), read_transcript(p, pattern)) for p in paths], target, model)


def _read(path: Path, target: str) -> list[Run]:
    """One transcript file as a run of one task."""
    return [_run([(path, read_transcript(path, default_command_pattern(target)))], target)]


def _gather(runs: list[Run]) -> list[Run]:
    """Transcripts read one file at a time, as one run."""
    items = [
        (Path(file), record)
        for meta, records in runs
        for file, record in zip(meta.settings.source_files, records, strict=True)
    ]
    return [_run(items, runs[0][0].settings.target or "", runs[0][0].model)]


def _run(items: list[tuple[Path, TaskRecord]], target: str, model: str = "unknown") -> Run:
    """The run of these transcripts (each file one task, named by its file name)."""
    seen: set[str] = set()
    for path, _ in items:
        if path.stem in seen:
            raise InputError(path, None, None, f"task id {path.stem!r} appears twice")
        seen.add(path.stem)
    digest = hashlib.sha256("\n".join(sorted(seen)).encode()).hexdigest()[:8]
    slug = re.sub(r"[^A-Za-z0-9._-]+", "-", model)
    meta = RunMeta(
        run_id=f"transcript-{slug}-{digest}",
        provider="unknown",
        model=model,
        source=SOURCE,
        status="complete",
        task_count=len(items),
        settings=RunSettings(
            target=target,
            command_pattern=default_command_pattern(target),
            exit_codes=EXIT_RULE,
            source_files=[str(p) for p, _ in items],
        ),
    )
    return meta, [record for _, record in items]


def read_transcript(path: str | Path, pattern: str) -> TaskRecord:
    """One transcript file as a task record (see the module docstring).

    Example:
        >>> read_transcript("missing.txt", "x")
        Traceback (most recent call last):
        ...
        evalnb.errors.InputError: missing.txt: file not found
    """
    path = Path(path)
    trace = transcript_trace(read_input(path), pattern)
    rows = gate_rows(
        [NoTranscriptErrors(type="no_transcript_errors")], [no_transcript_errors(trace, pattern)]
    )
    return TaskRecord(
        task=Task(id=path.stem, category=SOURCE, prompt=PROMPT_MISSING),
        trace=trace,
        score=TaskScore.from_results(path.stem, rows),
        extra={"exit_codes": "approximate", "command_pattern": pattern},
    )


def transcript_trace(text: str, pattern: str | RustRegex) -> AgentTrace:
    """A plain-text transcript as a trace: evalnb's one transcript parser.

    The calls are :func:`evalnb._scoring.commands.transcript_calls`'s (output kept as
    ``stdout``, approximate exit codes), the preamble is the assistant's text, and
    ``natural_stop`` is None (unknown). Importing and
    :func:`evalnb._analysis.interaction.interaction_from_transcript` both read it.

    Example:
        >>> trace = transcript_trace("Let me look.\\n$ notes list\\nExit code: 3\\n", "notes")
        >>> [(c.commands, c.exit_code) for c in trace.tool_calls], trace.natural_stop
        ([('notes list', 3)], None)
    """
    regex = compile_pattern(pattern) if isinstance(pattern, str) else pattern
    preamble, found = transcript_calls(text, regex)
    calls = [
        ToolCallResult(
            commands=call.commands,
            stdout="\n".join(call.output) + ("\n" if call.output else ""),
            exit_code=call.exit_code,
            call_index=n,
        )
        for n, call in enumerate(found)
    ]
    messages = (
        [Message(role="assistant", content=[ContentBlock(type="text", text=preamble)])]
        if preamble
        else []
    )
    return AgentTrace(messages=messages, tool_calls=calls, natural_stop=None)


TRANSCRIPT_SUFFIXES = (".txt", ".log")


def _recognises(probe: Probe) -> bool:
    """A ``.txt`` or ``.log`` file of text that is not JSON (JSON lines are other formats)."""
    if probe.is_dir or probe.path.suffix.lower() not in TRANSCRIPT_SUFFIXES:
        return False
    if b"\x00" in probe.head or probe.doc is not None or probe.first_line is not None:
        return False
    try:  # incremental: a character cut at the end of the head is no error
        codecs.getincrementaldecoder("utf-8")().decode(probe.head)
    except UnicodeDecodeError:
        return False
    return True


FORMAT = Format(
    "a plain-text transcript",
    _recognises,
    read=_read,
    key="transcript",
    options=(Option("target", "the tool's command name, which finds its commands", True),),
    gather=_gather,
)
"""Plain-text transcripts (``.txt``, ``.log``): one task per file, one run for all of them."""
