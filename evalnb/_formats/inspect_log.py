"""Read Inspect AI eval logs (``.eval`` and ``.json``) as evalnb runs.

The header through ``inspect_ai``'s own reader, the samples through
:mod:`evalnb._formats.inspect_sample` (only the fields mapped below, validated). Needs
the ``inspect`` extra (``pip install 'evalnb[inspect]'``); without it reading a log
raises :class:`~evalnb.errors.SetupError` with that install command.

One log is one evalnb run: a log holds one task run by one evaluated model
(``eval.model``). The mapping (the README's "Inspect AI" section has the full table):

- **tasks**: one per sample and epoch: ``task_id`` = the sample ``id``, ``epoch`` =
  the sample ``epoch``, ``category`` = the Inspect task name, ``prompt`` = the input's
  text, ``system`` = the first system message. ``error`` is ``sample.error``'s message,
  or ``limit: <type> (<limit>)`` when a limit (messages, tokens, time, ...) ended the
  sample: such a task is errored, counted and failed, never dropped (Inspect leaves
  errored samples out of its metrics, so its accuracy can differ from the pass rate).
  A sample that did not error and that no scorer scored (no ``scores``) has no
  verdict: ``passed`` is null, and the summary counts it in ``unscored_tasks``,
  outside the pass rate. ``duration_ms`` is ``total_time``, null when the log has
  none. ``score_<scorer>`` columns hold each score's value as a number
  (``score_<scorer>_<key>`` for dict values), as Inspect's ``samples_df``.
- **the agent and the grader**: the evaluated model's calls are the agent's. A model
  event of another model role (``role`` set, such as ``grader``), or any model or tool
  event inside a scorer (a ``span_begin`` of type ``scorer``/``scorers`` and every
  span under it, matched by the event's ``span_id``; in logs before spans, between a
  ``step`` begin and end of type ``scorer``), is the grader's: left out and counted
  in the task's ``grader_calls`` (a ``model_graded_fact`` scorer on the evaluated
  model itself would otherwise double the turns and tokens).
- **llm_calls**: one per model event of the agent. ``input_tokens`` is the whole
  prompt (:func:`whole_input`): Inspect's ``input_tokens`` is the uncached part since
  inspect_ai 0.3.184 ("Normalize handling of cached tokens in ``ModelUsage``"), but
  before it the OpenAI-style providers (OpenAI's chat, responses and o1 APIs, the
  OpenAI-compatible providers, Grok) reported ``input_tokens`` with the cache reads
  included, beside ``input_tokens_cache_read``; Anthropic's never included them (and
  the others recorded no cache reads). The version is the log's
  ``eval.packages["inspect_ai"]`` (a ``0.3.184.devN`` build counts as before 0.3.184;
  a log without it too) and the provider ``eval.model``'s prefix; the run's
  ``sandbox_version`` keeps the version. ``input_tokens_cache_read`` →
  ``cache_read_tokens``, ``input_tokens_cache_write`` → ``cache_write_tokens``.
  ``latency_ms`` is the event's ``working_time``; ``stop_reason`` the output's.
  ``turns`` is the number of these calls; the task's token totals are their sums (the
  sample's ``model_usage`` of the evaluated model, read the same way, when no event
  has usage, unless a grader ran: ``model_usage`` then holds its tokens too, and the
  totals are unknown, null); ``natural_stop`` is True when the sample neither errored nor hit a
  limit and its last call stopped with ``stop``.
- **a sample without events** (a log written without them): one LLM call per
  assistant message (no tokens or latency: the totals come from ``model_usage``; the
  last one's stop reason is the sample ``output``'s), and one tool call per tool
  message (``ChatMessageTool``) answering a call an assistant message made: its
  ``commands`` from that call, ``stdout`` its text, ``stderr`` its ``error``'s
  message (``timed_out`` for a ``timeout`` error), the exit code by the rule below.
- **tool_calls**: one per tool event of the agent. ``commands`` is the argument ``cmd``,
  ``command`` or ``commands`` when one of them is a string (a bash-like tool), else
  ``function(<arguments as JSON>)``. ``stdout`` is the result's text, ``stderr`` the
  tool error's message, ``timed_out`` an error of type ``timeout``. ``exit_code``
  (:data:`EXIT_RULE`) is the event's ``metadata["exit_code"]`` (evalnb's own exports),
  else N from a last result line ``Exit code: N`` / ``exit status N`` / ``returncode:
  N``, else 1 when the call has an ``error`` (Inspect's tool error: the call failed;
  counted in the ``exit_codes_inferred`` task field, as Claude Code's ``is_error``),
  else **null**; the run's ``settings.unavailable`` lists ``exit_codes`` when there
  are any. A null exit code is neither ok nor an error: it counts in
  ``tool_calls_unknown``, outside ``tool_call_success_rate``.
- **checks**: one per score (one per key of a dict value, per item of a list value):
  ``check`` = the scorer name (``name.key``), ``kind`` = the scorer name, ``detail`` =
  the value, answer and explanation. The value counts as a number like Inspect's
  ``value_to_float``: ``C`` 1, ``P`` 0.5, ``I`` and ``N`` 0, booleans, numbers, numeric
  strings, ``yes``/``true`` 1 and ``no``/``false`` 0. **A check passes when that
  number is at least 1** (full credit: ``C``, ``True``, 1.0); a partial, a 0.7 or an
  unreadable value fails it. Weight 1 each, layer ``expectation``.

A log written by :func:`evalnb._formats.inspect_write.write_inspect_log` carries evalnb's
run metadata, task fields and check names, weights and layers (and which checks were
not run: ``passed`` null, value ``N``); reading it back gives
the original run (same ``run_id``), so loading both together is refused as a duplicate.

A log written without samples (header only) has nothing to recount: it is an
:class:`~evalnb.errors.InputError` that names the file and quotes the ``results``
Inspect recorded (samples, each scorer's metrics), never an empty run.

Example:
    >>> read_inspect_log("missing.eval")
    Traceback (most recent call last):
    ...
    evalnb.errors.InputError: missing.eval: file not found
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from evalnb._extras import require
from evalnb._formats.detect import Format, Probe
from evalnb._formats.inspect_sample import UNREADABLE, read_samples
from evalnb._gc import paused_gc
from evalnb.errors import InputError
from evalnb.records import (
    AgentTrace,
    ContentBlock,
    LLMCall,
    Message,
    RunMeta,
    RunSettings,
    ScoreResult,
    Task,
    TaskRecord,
    TaskScore,
    ToolCallResult,
    cumulative_inputs,
)

SOURCE = "inspect"
EXIT_RULE = (
    "tool event metadata exit_code, else a last result line 'Exit code: N' / "
    "'exit status N' / 'returncode: N', else 1 for a tool error, else null"
)
PROMPT_MISSING = "(no input text in the Inspect sample)"
BASH_ARGUMENTS = ("cmd", "command", "commands")
ATTACHMENT = "attachment://"
Resolve = Callable[[str], str]
EVALNB_KEY = "evalnb"  # where evalnb's exports keep what Inspect has no field for

CACHE_READS_APART = (0, 3, 184)
"""The inspect_ai release from which ``input_tokens`` excludes cached tokens for every
provider (its changelog: "Normalize handling of cached tokens in ``ModelUsage``")."""
CACHE_READS_APART_ALWAYS = ("anthropic",)
"""Providers whose ``input_tokens`` never included the cache reads."""
SCORING_SCOPES = ("scorer", "scorers")
"""Span and step types inside which the model and tool events are a scorer's."""
_VERSION = re.compile(r"^\s*v?(\d+)\.(\d+)\.(\d+)(.*)$")
_EXIT_LINE = re.compile(r"^(?:exit code|exit status|returncode)\s*[:=]?\s*(-?\d+)\s*$", re.I)
_VALUE_NUMBERS = {"C": 1.0, "P": 0.5, "I": 0.0, "N": 0.0}
_WORD_NUMBERS = {"yes": 1.0, "true": 1.0, "no": 0.0, "false": 0.0}


def _recognises(probe: Probe) -> bool:
    """An ``.eval`` zip archive, or a JSON object with ``version``, ``status`` and an ``eval``."""
    if not probe.is_dir and probe.path.suffix == ".eval":
        return probe.head[:4] == b"PK\x03\x04"
    keys = probe.keys()
    return {"version", "status", "eval"} <= keys and isinstance(probe.doc.get("eval"), dict)


def _read(path: Path) -> list[tuple[RunMeta, list[TaskRecord]]]:
    return [read_inspect_log(path)]


FORMAT = Format("an Inspect AI log", _recognises, read=_read, key="inspect")
"""Both log kinds (``.eval`` and ``.json``); ``evalnb import inspect`` takes either."""


def read_inspect_log(path: str | Path) -> tuple[RunMeta, list[TaskRecord]]:
    """Read one Inspect log as one evalnb run (see the module docstring for the mapping).

    The header (task, model, status, ...) is read by ``inspect_ai``; the samples by
    :func:`~evalnb._formats.inspect_sample.read_samples`, which validates only the fields
    this mapping reads, and so builds much less than ``read_eval_log``.

    Example:
        >>> read_inspect_log("/")
        Traceback (most recent call last):
        ...
        evalnb.errors.InputError: /: file not found
    """
    path = Path(path)
    if not path.is_file():
        raise InputError(path, None, None, "file not found")
    inspect_log = require("inspect_ai.log", "inspect")  # also lets zipfile read zstd
    try:
        header = inspect_log.read_eval_log(str(path), header_only=True)
    except Exception as exc:  # inspect_ai raises many kinds for a broken log
        raise InputError(path, None, None, f"{UNREADABLE}: {exc}") from None
    spec, results = header.eval, header.results
    scorer = results.scores[0].name if results and results.scores else None
    apart = cache_reads_apart(spec.packages.get("inspect_ai"), spec.model)
    with paused_gc():  # attachments: resolved per sample, only where read
        records = read_samples(path, lambda s: _record(s, spec.model, spec.task, apart), scorer)
    if records is None or (not records and results and results.total_samples):
        msg = "the log holds no samples (it was written without them): nothing to analyse"
        raise InputError(path, None, "samples", msg + _recorded_results(results))
    return _run(header, records, path)


def _recorded_results(results: Any) -> str:
    """Inspect's own ``results`` of a log, said in words (for a log without samples)."""
    if not results:
        return ""
    scores = "; ".join(
        f"{s.name}: " + ", ".join(f"{m.name} {m.value:.4g}" for m in s.metrics.values())
        for s in results.scores
    )
    return f"; its results (Inspect's summary, not recounted): {results.total_samples} " + (
        f"samples; {scores}" if scores else "samples"
    )


def cache_reads_apart(version: str | None, model: str) -> bool:
    """True when a log's ``input_tokens`` exclude the cache reads (see the module docstring):
    written by inspect_ai 0.3.184 or later, or by Anthropic's provider.

    Example:
        >>> [cache_reads_apart(v, m) for v, m in [("0.3.95.dev16+g6527d0861", "openai/gpt-4o"),
        ...     ("0.3.185", "openai/gpt-4o"), ("0.3.58", "anthropic/claude-3-5-haiku"),
        ...     ("0.3.184.dev3+g1", "grok/grok-4"), (None, "openai/gpt-4o")]]
        [False, True, True, False, False]
    """
    if model.partition("/")[0] in CACHE_READS_APART_ALWAYS:
        return True
    found = _VERSION.match(version or "")
    if found is None:
        return False
    release = tuple(int(found.group(n)) for n in (1, 2, 3))
    pre = re.match(r"[.+-]?(dev|a|b|rc)", found.group(4)) is not None
    return release > CACHE_READS_APART or (release == CACHE_READS_APART and not pre)


def whole_input(
    input_tokens: int, cache_read: int | None, cache_write: int | None, apart: bool
) -> int:
    """The whole prompt of one Inspect usage: ``input_tokens`` plus the cache reads and
    writes, less the reads when ``input_tokens`` already holds them (``apart`` False).

    Example:
        >>> whole_input(15235, 9088, None, apart=False), whole_input(6147, 9088, None, True)
        (15235, 15235)
    """
    reads = (cache_read or 0) if apart else 0
    return input_tokens + reads + (cache_write or 0)


def log_to_run(log: Any, path: str | Path) -> tuple[RunMeta, list[TaskRecord]]:
    """An ``inspect_ai.log.EvalLog`` (with samples) as run metadata and task records.

    Example:
        >>> from inspect_ai.log import EvalLog, EvalSpec, EvalConfig, EvalDataset
        >>> spec = EvalSpec(created="2025-01-01T00:00:00+00:00", task="t", eval_id="e1",
        ...     dataset=EvalDataset(), model="openai/gpt-4o", config=EvalConfig())
        >>> meta, records = log_to_run(EvalLog(eval=spec, samples=[]), "t.eval")
        >>> meta.run_id, meta.provider, meta.model, meta.status, records
        ('inspect-t-e1', 'openai', 'gpt-4o', 'partial', [])
    """
    spec = log.eval
    apart = cache_reads_apart(spec.packages.get("inspect_ai"), spec.model)
    records = [_record(sample, spec.model, spec.task, apart) for sample in log.samples or []]
    return _run(log, records, path)


def _run(log: Any, records: list[TaskRecord], path: str | Path) -> tuple[RunMeta, list[TaskRecord]]:
    """The run metadata of a log (its header: ``eval``, ``stats``, ``status``) and its records."""
    spec = log.eval
    ours = (spec.metadata or {}).get(EVALNB_KEY)
    unknown = any(c.exit_code is None for r in records for c in r.trace.tool_calls)
    settings = RunSettings(
        source_files=[str(path)],
        exit_codes=EXIT_RULE,
        unavailable=["exit_codes"] if unknown else [],
    )
    if isinstance(ours, dict):
        meta = RunMeta.model_validate(ours)
        meta.settings.source_files = [*meta.settings.source_files, str(path)]
        return meta, records
    provider, _, model = spec.model.partition("/")
    created = str(spec.created) if spec.created else None
    meta = RunMeta(
        run_id=re.sub(r"[^A-Za-z0-9._-]+", "-", f"inspect-{spec.task}-{spec.eval_id}"),
        provider=provider if model else "unknown",
        model=model or provider,
        source=SOURCE,
        dataset=spec.dataset.name if spec.dataset else None,
        epochs=spec.config.epochs or 1,
        started_at=created,
        finished_at=str(log.stats.completed_at) if log.stats.completed_at else None,
        status="complete" if log.status == "success" else "partial",
        task_count=len(records),
        sandbox="inspect_ai",
        sandbox_version=spec.packages.get("inspect_ai"),
        settings=settings,
    )
    return meta, records


def _record(sample: Any, model: str, task_name: str, apart: bool) -> TaskRecord:
    ours = (sample.metadata or {}).get(EVALNB_KEY)
    res = _resolver(sample.attachments or {})
    system = next((_text(m.content, res) for m in sample.messages if m.role == "system"), None)
    if isinstance(ours, dict):
        task = Task.model_validate(ours["task"])
    else:
        prompt = _text(sample.input, res) if isinstance(sample.input, str) else ""
        prompt = prompt or next(
            (_text(m.content, res) for m in sample.messages if m.role == "user"), ""
        )
        task = Task(
            id=str(sample.id),
            category=task_name,
            description=sample.description or "",
            system=system,
            prompt=prompt or PROMPT_MISSING,
        )
    trace, grader_calls, inferred = _trace(sample, res, apart)
    totals = _usage_totals(trace.llm_calls, sample, model, apart, grader_calls)
    if totals is not None:
        trace.total_input_tokens, trace.total_output_tokens = totals
    results, numbers = _checks(sample.scores or {})
    error = _error(sample)
    last = trace.llm_calls[-1].stop_reason if trace.llm_calls else None
    trace.natural_stop = error is None and last == "stop"
    if isinstance(ours, dict):  # evalnb's own export: what Inspect has no field for
        trace = trace.model_copy(update=ours["trace"])
    extra: dict[str, Any] = {
        **numbers,
        "grader_calls": grader_calls,
        "exit_codes_inferred": inferred,
    }
    recorded: dict[str, Any] = {}
    if not sample.scores and error is None:
        recorded["passed"] = None  # no scorer's verdict: unscored
    if totals is None:
        recorded.update(total_input_tokens=None, total_output_tokens=None)
    if recorded:
        extra["recorded"] = recorded
    fields: dict[str, Any] = {}
    if isinstance(ours, dict):
        extra = ours.get("extra", {})
        counts = ours.get("counts")
        if counts:  # the run folder's stored command counts (inspect_write)
            extra = {**extra, "recorded": {**extra.get("recorded", {}), **counts}}
        fields = {k: ours[k] for k in ("scenario", "replay") if ours.get(k) is not None}
    return TaskRecord(
        task=task,
        epoch=sample.epoch,
        trace=trace,
        score=TaskScore.from_results(task.id, results),
        error=error,
        extra=extra,
        **fields,
    )


def _error(sample: Any) -> str | None:
    if sample.error is not None:
        return str(sample.error.message)
    if sample.limit is not None:
        return f"limit: {sample.limit.type} ({sample.limit.limit:g})"
    return None


def _trace(sample: Any, res: Resolve, apart: bool) -> tuple[AgentTrace, int, int]:
    """The agent's trace of a sample (token totals left to :func:`_usage_totals`), how
    many model events were a grader's, and how many exit codes were inferred from a
    tool error."""
    codes = _ExitCodes()
    if not sample.events:
        llm_calls, tool_calls = _from_messages(sample, res, codes)
        graded = 0
    else:
        llm_calls, tool_calls, graded = _from_events(sample.events, res, apart, codes)
    trace = AgentTrace(
        messages=_messages(sample.messages, res),
        tool_calls=tool_calls,
        llm_calls=llm_calls,
        turns=len(llm_calls),
        duration_ms=_ms(sample.total_time),
    )
    return trace, graded, codes.inferred


class _Scopes:
    """The spans and steps seen so far in a sample's events: which events are a scorer's.

    An event inside a ``scorer``/``scorers`` span (its ``span_id``, or any span under
    one) is; so is an event without ``span_id`` while a scorer step or span is open.
    """

    def __init__(self) -> None:
        self.spans: dict[str, tuple[str | None, str | None]] = {}  # id: (type, parent id)
        self.open_scoring = 0

    def see(self, event: Any) -> None:
        """Take a span or step event into account (evalnb's models or Inspect's own)."""
        kind = getattr(event, "type", None)  # Inspect's SpanEndEvent has none
        scoring = kind in SCORING_SCOPES
        if event.event == "span_begin":
            self.spans[event.id] = (kind, event.parent_id)
            self.open_scoring += scoring
        elif event.event == "span_end" and event.id in self.spans:
            self.open_scoring -= self.spans[event.id][0] in SCORING_SCOPES
        elif event.event == "step":
            self.open_scoring += scoring if event.action == "begin" else -scoring

    def scoring(self, event: Any) -> bool:
        """True when ``event`` happened inside a scorer."""
        span = getattr(event, "span_id", None)
        if span is None or span not in self.spans:
            return self.open_scoring > 0
        seen: set[str] = set()
        while span is not None and span not in seen:
            seen.add(span)
            kind, span = self.spans.get(span, (None, None))
            if kind in SCORING_SCOPES:
                return True
        return False


def _from_events(
    events: list[Any], res: Resolve, apart: bool, codes: _ExitCodes
) -> tuple[list[LLMCall], list[ToolCallResult], int]:
    """The agent's LLM and tool calls from the model and tool events, and the grader's
    model events counted."""
    llm_calls: list[LLMCall] = []
    tool_calls: list[ToolCallResult] = []
    native: list[LLMCall] = []  # calls read from Inspect's own fields
    scopes = _Scopes()
    graded = 0
    for event in events:
        if event.event in ("span_begin", "span_end", "step"):
            scopes.see(event)
            continue
        if event.event not in ("model", "tool"):
            continue
        if scopes.scoring(event) or (event.event == "model" and event.role is not None):
            graded += event.event == "model"
            continue
        ours = (event.metadata or {}).get(EVALNB_KEY)
        if isinstance(ours, dict) and event.event == "model":
            llm_calls.append(LLMCall.model_validate(ours))
        elif isinstance(ours, dict):
            tool_calls.append(ToolCallResult.model_validate(ours))
        elif event.event == "model":
            usage = event.output.usage
            inp = (
                whole_input(
                    usage.input_tokens,
                    usage.input_tokens_cache_read,
                    usage.input_tokens_cache_write,
                    apart,
                )
                if usage
                else None
            )
            choice = event.output.choices[0] if event.output.choices else None
            native.append(
                LLMCall(
                    call_number=len(llm_calls) + 1,
                    input_tokens=inp,
                    output_tokens=usage.output_tokens if usage else None,
                    cache_read_tokens=usage.input_tokens_cache_read if usage else None,
                    cache_write_tokens=usage.input_tokens_cache_write if usage else None,
                    latency_ms=_ms(event.working_time),
                    tool_calls_made=len(choice.message.tool_calls or []) if choice else 0,
                    stop_reason=choice.stop_reason if choice else None,
                )
            )
            llm_calls.append(native[-1])
        else:
            number = len(llm_calls) or None
            tool_calls.append(_tool_call(event, len(tool_calls), number, res, codes))
    for call, total in zip(native, cumulative_inputs(c.input_tokens for c in native), strict=True):
        call.cumulative_input = total  # evalnb's own rows (``ours``) keep theirs
    return llm_calls, tool_calls, graded


def _from_messages(
    sample: Any, res: Resolve, codes: _ExitCodes
) -> tuple[list[LLMCall], list[ToolCallResult]]:
    """LLM and tool calls from the messages of a sample logged without events."""
    llm_calls: list[LLMCall] = []
    tool_calls: list[ToolCallResult] = []
    asked: dict[str, tuple[Any, int]] = {}  # tool call id: (the call, its LLM call)
    for message in sample.messages:
        if message.role == "assistant":
            made = message.tool_calls or []
            llm_calls.append(LLMCall(call_number=len(llm_calls) + 1, tool_calls_made=len(made)))
            asked.update((c.id, (c, len(llm_calls))) for c in made)
        elif message.role == "tool":
            call, number = asked.get(message.tool_call_id or "", (None, None))
            function = call.function if call else message.function or "tool"
            arguments = {
                k: res(v) if isinstance(v, str) else v
                for k, v in (call.arguments if call else {}).items()
            }
            stdout = _text(message.content, res)
            error = message.error
            tool_calls.append(
                ToolCallResult(
                    commands=tool_command(function, arguments),
                    stdout=stdout,
                    stderr=error.message if error else "",
                    exit_code=codes(None, stdout, error),
                    timed_out=error is not None and error.type == "timeout",
                    call_index=len(tool_calls),
                    call_number=number,
                )
            )
    output = sample.output.choices if sample.output else []
    if llm_calls and output:
        llm_calls[-1].stop_reason = output[0].stop_reason
    return llm_calls, tool_calls


def _usage_totals(
    calls: list[LLMCall], sample: Any, model: str, apart: bool, graded: int
) -> tuple[int, int] | None:
    """Token totals from the model events, or the sample's ``model_usage`` without them;
    unknown (None) without them when a grader ran, since ``model_usage`` counts the
    grader's tokens too when it is the evaluated model."""
    if any(c.input_tokens is not None or c.output_tokens is not None for c in calls):
        return sum(c.input_tokens or 0 for c in calls), sum(c.output_tokens or 0 for c in calls)
    if graded:
        return None
    usage = (sample.model_usage or {}).get(model)
    if usage is None:
        return 0, 0
    read, write = usage.input_tokens_cache_read, usage.input_tokens_cache_write
    return whole_input(usage.input_tokens, read, write, apart), usage.output_tokens


def _ms(seconds: float | None) -> float | None:
    return seconds * 1000 if seconds is not None else None


def _tool_call(
    event: Any, index: int, call_number: int | None, res: Resolve, codes: _ExitCodes
) -> ToolCallResult:
    stdout = _text(event.result, res)
    arguments = {k: res(v) if isinstance(v, str) else v for k, v in event.arguments.items()}
    error = event.error
    truncated = event.truncated is not None
    return ToolCallResult(
        commands=tool_command(event.function, arguments),
        stdout=stdout,
        stderr=error.message if error else "",
        exit_code=codes(event.metadata, stdout, error),
        duration_ms=_ms(event.working_time),
        stdout_truncated=truncated,
        timed_out=error is not None and error.type == "timeout",
        call_index=index,
        call_number=call_number,
    )


def tool_command(function: str, arguments: dict[str, Any]) -> str:
    """The ``commands`` of a tool call: a bash-like tool's command string, else a call.

    Example:
        >>> tool_command("bash", {"cmd": "ls -l"})
        'ls -l'
        >>> tool_command("python", {"code": "print(1)"})
        'python({"code": "print(1)"})'
    """
    for key in BASH_ARGUMENTS:
        if isinstance(arguments.get(key), str):
            return str(arguments[key])
    return f"{function}({json.dumps(arguments, sort_keys=True, default=str)})"


class _ExitCodes:
    """The exit-code rule (:data:`EXIT_RULE`) over one sample's tool calls, counting the
    codes inferred from a tool error (1: the call failed) in ``inferred``."""

    def __init__(self) -> None:
        self.inferred = 0

    def __call__(self, metadata: dict[str, Any] | None, stdout: str, error: Any) -> int | None:
        code = _exit_code(metadata, stdout)
        if code is None and error is not None:
            self.inferred += 1
            return 1
        return code


def _exit_code(metadata: dict[str, Any] | None, stdout: str) -> int | None:
    code = (metadata or {}).get(EVALNB_KEY, {}).get("exit_code")
    if isinstance(code, int):
        return code
    lines = stdout.rstrip().splitlines()
    found = _EXIT_LINE.match(lines[-1].strip()) if lines else None
    return int(found.group(1)) if found else None


def _resolver(attachments: dict[str, str]) -> Resolve:
    """Swap an ``attachment://<hash>`` reference (a long text Inspect stored once) for its text.

    Resolving only the texts evalnb reads is much faster than ``read_eval_log``'s
    ``resolve_attachments``, which walks every event's full model input.

    Example:
        >>> _resolver({"ab": "long text"})("attachment://ab"), _resolver({})("plain")
        ('long text', 'plain')
    """

    def resolve(text: str) -> str:
        if text.startswith(ATTACHMENT):
            return attachments.get(text.removeprefix(ATTACHMENT), text)
        return text

    return resolve


def _text(value: Any, res: Resolve) -> str:
    """A tool result or message content as text (non-text content named in brackets)."""
    if isinstance(value, str):
        return res(value)
    if isinstance(value, list) or hasattr(value, "type"):  # content blocks, or one block
        return "".join(
            res(getattr(c, "text", None) or f"[{getattr(c, 'type', 'content')}]")
            for c in (value if isinstance(value, list) else [value])
        )
    return "" if value is None else str(value)


def _messages(messages: list[Any], res: Resolve) -> list[Message]:
    out = []
    for m in messages:
        text = _text(m.content, res)
        if m.role == "user":
            out.append(Message(role="user", content=[ContentBlock(type="text", text=text)]))
        elif m.role == "assistant":
            blocks = [ContentBlock(type="text", text=text)] if text else []
            blocks += [
                ContentBlock(
                    type="tool_use",
                    id=c.id,
                    name=c.function,
                    input={k: res(v) if isinstance(v, str) else v for k, v in c.arguments.items()},
                )
                for c in m.tool_calls or []
            ]
            out.append(Message(role="assistant", content=blocks))
        elif m.role == "tool":
            block = ContentBlock(
                type="tool_result",
                tool_use_id=m.tool_call_id,
                content=text,
                is_error=m.error is not None,
            )
            out.append(Message(role="tool_result", content=[block]))
    return out


def score_number(value: Any) -> float | None:
    """An Inspect score value as a number (the rule in the module docstring), or None.

    Example:
        >>> [score_number(v) for v in ("C", "P", "I", True, 0.7, "0.5", "yes", "maybe")]
        [1.0, 0.5, 0.0, 1.0, 0.7, 0.5, 1.0, None]
    """
    if isinstance(value, bool):
        return float(value)
    if isinstance(value, int | float):
        return float(value)
    if isinstance(value, str):
        text = value.strip()
        if text in _VALUE_NUMBERS:
            return _VALUE_NUMBERS[text]
        if text.lower() in _WORD_NUMBERS:
            return _WORD_NUMBERS[text.lower()]
        try:
            return float(text)
        except ValueError:
            return None
    return None


def _checks(scores: dict[str, Any]) -> tuple[list[ScoreResult], dict[str, float | None]]:
    """Check rows and ``score_<name>`` numbers of a sample's scores."""
    results: list[ScoreResult] = []
    numbers: dict[str, float | None] = {}
    for name, score in scores.items():
        ours = (score.metadata or {}).get(EVALNB_KEY)
        value = score.value
        if isinstance(value, dict):
            parts = [(f"{name}.{k}", v) for k, v in value.items()]
        elif isinstance(value, list):
            parts = [(f"{name}.{i}", v) for i, v in enumerate(value)]
        else:
            parts = [(name, value)]
        for check, part in parts:
            number = score_number(part)
            numbers[f"score_{check.replace('.', '_')}"] = number
            if isinstance(ours, dict):
                verdict = number is not None and number >= 1.0  # unless ours says "not run"
                results.append(ScoreResult(**{"passed": verdict, **ours}))
                continue
            said = [f"value={part!r}"]
            said += [f"answer={score.answer!r}"] if score.answer else []
            said += [score.explanation] if score.explanation else []
            results.append(
                ScoreResult(
                    check=check,
                    kind=name,
                    passed=number is not None and number >= 1.0,
                    detail="; ".join(said),
                )
            )
    return results, numbers
