"""What the readers of agent logs share: one attempt, its usage, its times and its exit codes.

The readers of agent traces (ATIF and Harbor, Codex CLI, Gemini CLI, SWE-agent,
OpenHands, OpenTelemetry spans) each turn one log into an :class:`Attempt`, and
:func:`task_record` turns that into evalnb's :class:`~evalnb.records.TaskRecord` by one
set of rules:

- ``llm_calls`` are numbered 1..N in order and get their running ``cumulative_input``
  (spec 003; unknown from a call whose input count is unknown on); ``input_tokens`` is
  always the whole prompt (cache reads and writes included), as for every evalnb run.
- The task's token totals are the sums over its calls, unless the source recorded
  totals the calls do not add up to (``Attempt.totals``: usage known only per attempt,
  or spent beyond the call rows, e.g. by sub-agents); the task's cache columns then
  come from those totals too.
- Anything the source did not record is null in the ``tasks`` table, never 0: token
  totals, cache parts no call recorded, duration, turns, and ``passed`` when the source
  gives no verdict (no checks).

Example:
    >>> a = Attempt(task_id="t", category="c", prompt="p", turns=2, duration_ms=5.0, llm_calls=[
    ...     LLMCall(call_number=0, input_tokens=100, output_tokens=5),
    ...     LLMCall(call_number=0, input_tokens=160, output_tokens=7)])
    >>> rec = task_record(a)
    >>> [c.cumulative_input for c in rec.trace.llm_calls], rec.trace.total_input_tokens
    ([100, 260], 260)
    >>> rec.extra["recorded"]
    {'passed': None, 'cache_read_tokens': None, 'cache_write_tokens': None}
"""

from __future__ import annotations

import json
import re
import shlex
from collections import Counter
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from evalnb._formats.inspect_log import tool_command
from evalnb.errors import DataQualityWarning, warn
from evalnb.records import (
    AgentTrace,
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

PROMPT_MISSING = "(prompt not recorded in the log)"
"""The ``prompt`` of a task whose log holds no user message."""

_EXIT = re.compile(
    r"^\s*(?:\[exit_code\]|exit code:?|process exited with code|exit status|returncode:?)"
    r"\s*(-?\d+)\s*$",
    re.IGNORECASE | re.MULTILINE,
)


@dataclass
class Usage:
    """Token counts of one call or attempt: ``input_tokens`` is the whole prompt.

    Example:
        >>> (Usage(10, 2, 4) + Usage(5, 1)).cache_read_tokens
        4
    """

    input_tokens: int | None = None
    output_tokens: int | None = None
    cache_read_tokens: int | None = None
    cache_write_tokens: int | None = None

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            *(_add(getattr(self, f), getattr(other, f)) for f in self.__dataclass_fields__)
        )

    def call(self, **fields: Any) -> LLMCall:
        """An :class:`~evalnb.records.LLMCall` with these counts (numbered by
        :func:`task_record`)."""
        return LLMCall(
            call_number=0,
            input_tokens=self.input_tokens,
            output_tokens=self.output_tokens,
            cache_read_tokens=self.cache_read_tokens,
            cache_write_tokens=self.cache_write_tokens,
            **fields,
        )


def _add(a: int | None, b: int | None) -> int | None:
    return b if a is None else a if b is None else a + b


def call_usage(call: LLMCall) -> Usage:
    """The token counts of an LLM call.

    Example:
        >>> call_usage(LLMCall(call_number=1, input_tokens=9)).input_tokens
        9
    """
    return Usage(
        call.input_tokens, call.output_tokens, call.cache_read_tokens, call.cache_write_tokens
    )


@dataclass
class Attempt:
    """One task attempt as an agent log records it (see the module docstring).

    ``checks`` None: the source gives no verdict, so ``passed`` is null (an ``error``
    still fails it). ``totals``: token totals the calls do not add up to (None: the
    sums of the calls). ``turns``, ``duration_ms``, ``natural_stop``: None where unknown.
    """

    task_id: str
    category: str
    prompt: str | None = None
    system: str | None = None
    description: str = ""
    epoch: int = 1
    llm_calls: list[LLMCall] = field(default_factory=list)
    tool_calls: list[ToolCallResult] = field(default_factory=list)
    messages: list[Message] = field(default_factory=list)
    turns: int | None = None
    totals: Usage | None = None
    duration_ms: float | None = None
    natural_stop: bool | None = None
    error: str | None = None
    checks: list[ScoreResult] | None = None
    score: tuple[float, float] | None = None
    extra: dict[str, Any] = field(default_factory=dict)


def task_record(attempt: Attempt) -> TaskRecord:
    """The attempt as a :class:`~evalnb.records.TaskRecord` (see the module docstring).

    ``score`` (``(score, max_score)``) defaults to the weights of the passed checks and
    of all checks (spec 000).

    Example:
        >>> rec = task_record(Attempt(task_id="t", category="c", duration_ms=None,
        ...     checks=[ScoreResult(check="reward", passed=True)]))
        >>> rec.passed, rec.trace.turns, sorted(rec.extra["recorded"])
        (True, 0, ['cache_read_tokens', 'cache_write_tokens', 'duration_ms', \
'total_input_tokens', 'total_output_tokens', 'turns'])
    """
    calls = attempt.llm_calls
    running = cumulative_inputs(c.input_tokens for c in calls)
    for number, (call, total) in enumerate(zip(calls, running, strict=True), start=1):
        call.call_number = number
        call.cumulative_input = total
    for index, tool in enumerate(attempt.tool_calls):
        tool.call_index = index
    totals = attempt.totals
    summed = Usage()
    for call in calls:
        summed += call_usage(call)
    used = totals if totals is not None else summed
    recorded: dict[str, Any] = {}
    if attempt.checks is None:
        recorded["passed"] = None
    if attempt.turns is None:
        recorded["turns"] = None
    if used.input_tokens is None:
        recorded["total_input_tokens"] = None
    if used.output_tokens is None:
        recorded["total_output_tokens"] = None
    for part in ("cache_read_tokens", "cache_write_tokens"):
        if totals is not None or getattr(summed, part) is None:
            recorded[part] = getattr(used, part)  # not recorded by any call: null, not 0
    if attempt.duration_ms is None:
        recorded["duration_ms"] = None
    checks = attempt.checks or []
    score = TaskScore.from_results(attempt.task_id, checks)
    if attempt.score is not None:  # the source's own sums
        score.score, score.max_score = attempt.score
    return TaskRecord(
        task=Task(
            id=attempt.task_id,
            category=attempt.category,
            description=attempt.description,
            system=attempt.system,
            prompt=attempt.prompt or PROMPT_MISSING,
        ),
        epoch=attempt.epoch,
        trace=AgentTrace(
            messages=attempt.messages,
            tool_calls=attempt.tool_calls,
            llm_calls=calls,
            turns=attempt.turns or 0,
            natural_stop=attempt.natural_stop,
            total_input_tokens=used.input_tokens or 0,
            total_output_tokens=used.output_tokens or 0,
            duration_ms=attempt.duration_ms or 0.0,
        ),
        score=score,
        error=attempt.error,
        extra={**attempt.extra, **({"recorded": recorded} if recorded else {})},
    )


def slug(text: str) -> str:
    """``text`` as one folder name (a run id): runs of other characters become ``-``.

    Example:
        >>> slug("codex-openai/gpt-5 (high)")
        'codex-openai-gpt-5-high-'
    """
    return re.sub(r"[^A-Za-z0-9._-]+", "-", text)


def one_run(
    path: Path,
    record: TaskRecord,
    *,
    source: str,
    provider: str,
    model: str,
    key: str,
    unavailable: list[str],
    **settings: Any,
) -> list[tuple[RunMeta, list[TaskRecord]]]:
    """A log file read as a run of its one task attempt: ``run_id`` =
    ``<source>-<model>-<key>`` (``key`` the log's own session id or name), the source as
    the sandbox, ``settings`` (``exit_codes``, ``sandbox_version``) beside what the format
    does not record.

    Example:
        >>> rec = task_record(Attempt(task_id="t", category="c", turns=0))
        >>> [(m.run_id, m.task_count) for m, _ in one_run(Path("s.json"), rec, source="x",
        ...     provider="p", model="m/1", key="s1", unavailable=["checks"])]
        [('x-m-1-s1', 1)]
    """
    version = settings.pop("sandbox_version", None)
    meta = RunMeta(
        run_id=slug(f"{source}-{model}-{key}"),
        provider=provider,
        model=model,
        source=source,
        sandbox=source,
        sandbox_version=version,
        status="complete",
        task_count=1,
        settings=RunSettings(source_files=[path.name], unavailable=unavailable, **settings),
    )
    return [(meta, [record])]


def number_epochs(attempts: list[Attempt]) -> None:
    """Number each task's attempts 1..n in the order given (epochs).

    Example:
        >>> xs = [Attempt(task_id=t, category="c") for t in "aba"]
        >>> number_epochs(xs); [x.epoch for x in xs]
        [1, 1, 2]
    """
    seen: Counter[str] = Counter()
    for attempt in attempts:
        seen[attempt.task_id] += 1
        attempt.epoch = seen[attempt.task_id]


def most_common(values: list[str | None], default: str = "unknown") -> str:
    """The most frequent of ``values`` (the first seen on a tie), ignoring None.

    Example:
        >>> most_common(["a", "b", "b", None]), most_common([])
        ('b', 'unknown')
    """
    counts = Counter(v for v in values if v)
    return counts.most_common(1)[0][0] if counts else default


def parse_time(value: Any) -> tuple[datetime | None, bool]:
    """``(time, naive)``: an ISO 8601 time as UTC, and whether it lacked a zone.

    A time without a zone is a producer's local time (Harbor's job files, OpenHands
    events): it is read as if it were UTC and flagged (``naive`` True), so spans within
    one file stay right while its clock time may be hours off. Anything else is None.

    Example:
        >>> parse_time("2026-02-08T20:48:17.942Z")[0].isoformat()
        '2026-02-08T20:48:17.942000+00:00'
        >>> parse_time("2025-11-19T14:53:27.770074")[1], parse_time("soon")
        (True, (None, False))
    """
    if not isinstance(value, str):
        return None, False
    try:
        parsed = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None, False
    if parsed.tzinfo is None:
        return parsed.replace(tzinfo=UTC), True
    return parsed.astimezone(UTC), False


def span_ms(times: list[datetime]) -> float | None:
    """Milliseconds from the earliest to the latest of ``times`` (None for fewer than 2).

    Example:
        >>> span_ms([parse_time("2026-01-01T00:00:01Z")[0], parse_time("2026-01-01T00:00:00Z")[0]])
        1000.0
    """
    if len(times) < 2:
        return None
    return (max(times) - min(times)).total_seconds() * 1000


def utc_text(time: datetime | None) -> str | None:
    """``time`` as ISO 8601 UTC text ending in ``Z`` (None stays None).

    Example:
        >>> utc_text(parse_time("2026-02-08T21:48:17+01:00")[0])
        '2026-02-08T20:48:17Z'
    """
    return None if time is None else time.strftime("%Y-%m-%dT%H:%M:%SZ")


def warn_local_times(path: str | Path, fields: list[str]) -> None:
    """Warn that ``fields`` of ``path`` hold local times without a zone (read as UTC).

    Example:
        >>> import warnings
        >>> with warnings.catch_warnings(record=True) as w:
        ...     warnings.simplefilter("always")
        ...     warn_local_times("result.json", ["started_at"])
        >>> "without a time zone" in str(w[0].message)
        True
    """
    if fields:
        warn(
            f"{path}: {', '.join(sorted(set(fields)))}: local times without a time zone, "
            "read as UTC (durations are right; clock times may be off by the producer's "
            "offset)",
            DataQualityWarning,
        )


def stated_exit_code(text: str | None) -> int | None:
    """The exit code a tool result states, else None (never guessed).

    Recognised, on a line of their own: ``Exit code: N`` (evalnb, Inspect, Gemini CLI's
    ``Exit Code: N``), ``Process exited with code N`` (Codex), ``[exit_code] N``
    (Harbor's Claude Code converter), ``exit status N`` and ``returncode: N``. The first
    such line counts: the producers put theirs before the command's own output, which
    could hold such a line too.

    Example:
        >>> stated_exit_code("Chunk ID: aa\\nProcess exited with code 2\\nOutput:\\nx")
        2
        >>> stated_exit_code("all good") is None
        True
    """
    if not text:
        return None
    found = _EXIT.search(text)
    return int(found.group(1)) if found else None


def command_text(function: str, arguments: Any, shell: bool = True) -> str:
    """The ``commands`` of a tool call: a shell tool's command line, else ``function({json})``.

    A shell tool names its command ``cmd``, ``command`` or ``commands`` (a string, or a
    list of arguments as Codex's ``shell`` tool sends it), or ``keystrokes`` (Terminus).
    ``shell=False``: the source says the tool is no shell (its ``command`` argument is
    something else, as an editor's ``create``), so the call form is used.

    Example:
        >>> command_text("shell", {"command": ["bash", "-lc", "ls -l"]})
        "bash -lc 'ls -l'"
        >>> command_text("bash_command", {"keystrokes": "ls\\n", "duration": 0.1})
        'ls\\n'
        >>> command_text("read_file", {"path": "a.txt"})
        'read_file({"path": "a.txt"})'
        >>> command_text("str_replace_editor", {"command": "create"}, shell=False)
        'str_replace_editor({"command": "create"})'
    """
    if not isinstance(arguments, dict):
        arguments = {"input": arguments}
    if not shell:
        return f"{function}({json.dumps(arguments, sort_keys=True, default=str)})"
    if isinstance(arguments.get("keystrokes"), str):
        return str(arguments["keystrokes"])
    listed = arguments.get("command")
    if isinstance(listed, list) and all(isinstance(a, str) for a in listed):
        return shlex.join(listed)
    return tool_command(function, arguments)


def json_arguments(text: Any) -> Any:
    """Tool-call arguments sent as a JSON string, parsed (the string itself if not JSON).

    Example:
        >>> json_arguments('{"cmd": "ls"}'), json_arguments("*** Begin Patch")
        ({'cmd': 'ls'}, '*** Begin Patch')
    """
    if not isinstance(text, str):
        return text
    try:
        return json.loads(text)
    except (ValueError, RecursionError):
        return text
