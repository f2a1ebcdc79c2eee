"""Spec 000's expectation checks, with bashkit-eval's exact semantics.

Checks read two sources: the agent trace (stdout, stderr, exit codes, call count)
and the sandbox's filesystem after the agent finished (files, directories).

=====================  ==========================================================
check                  passes when
=====================  ==========================================================
``exit_code:N``        the last tool call exited with N (no call counts as -1)
``stdout_contains:t``  ``t`` is a case-sensitive substring of any call's stdout
``stdout_regex:p``     ``p`` matches somewhere in any call's stdout
``stderr_empty``       every call's stderr is empty (true with no calls)
``file_exists:/p``     ``/p`` exists (a directory counts)
``dir_exists:/p``      ``/p`` is a directory
``file_contains:/p:t`` file ``/p`` contains ``t`` (split at the first ``:`` after /p)
``file_line_regex:/p:r`` some line of file ``/p`` matches ``r`` somewhere
``tool_calls_min:N``   at least N tool calls were made
``tool_calls_max:N``   at most N tool calls were made
``llm_judge:prompt``   weight-0 stub that passes, unless a judge is configured
=====================  ==========================================================

Example:
    >>> from evalnb.records import AgentTrace, Expectation, ToolCallResult
    >>> trace = AgentTrace(tool_calls=[ToolCallResult(commands="ls", stdout="a.txt\\n")])
    >>> evaluate_check(Expectation(check="stdout_contains:a.txt"), trace, None).passed
    True
"""

from __future__ import annotations

from typing import assert_never

from evalnb._scoring.deadline import Deadline, ScoringTimeout
from evalnb.records import AgentTrace, Expectation, ScoreResult, Task, TaskScore
from evalnb.records.interfaces import Sandbox
from evalnb.records.task import (
    DirExists,
    ExitCode,
    FileContains,
    FileExists,
    FileLineRegex,
    LlmJudge,
    StderrEmpty,
    StdoutContains,
    StdoutRegex,
    ToolCallsMax,
    ToolCallsMin,
)


def evaluate_check(exp: Expectation, trace: AgentTrace, sandbox: Sandbox | None) -> ScoreResult:
    """Evaluate one expectation against a trace and the sandbox's final filesystem.

    ``sandbox`` may be None only for checks that read the trace alone.

    Example:
        >>> r = evaluate_check(Expectation(check="exit_code:0"), AgentTrace(), None)
        >>> r.passed, r.detail
        (False, 'expected 0, got -1')
    """
    calls = trace.tool_calls
    weight = exp.weight
    spec = exp.spec
    match spec:
        case ExitCode(code=code):
            last = trace.last_tool_response
            got = last.exit_code if last else -1
            passed, detail = got == code, f"expected {code}, got {got}"
        case StdoutContains(text=text):
            passed = any(text in c.stdout for c in calls)
            detail = "found" if passed else f"{text!r} not found in any tool output"
        case StdoutRegex(pattern=pattern):
            passed = any(pattern.is_match(c.stdout) for c in calls)
            detail = "matched" if passed else f"pattern {pattern.pattern!r} not matched"
        case StderrEmpty():
            noisy = [c.call_index for c in calls if c.stderr]
            passed = not noisy
            detail = "stderr empty" if passed else f"stderr not empty in call(s) {noisy}"
        case FileExists(path=path):
            ftype = _fs(sandbox).file_type(path)
            passed, detail = ftype is not None, "exists" if ftype else "not found"
        case DirExists(path=path):
            ftype = _fs(sandbox).file_type(path)
            passed = ftype == "directory"
            detail = "directory exists" if passed else f"not a directory ({ftype or 'not found'})"
        case FileContains(path=path, text=text):
            content = _fs(sandbox).read_text(path)
            passed = content is not None and text in content
            detail = (
                f"{path} not found"
                if content is None
                else "found in file"
                if passed
                else f"{text!r} not found in {path}"
            )
        case FileLineRegex(path=path, pattern=pattern):
            content = _fs(sandbox).read_text(path)
            passed = content is not None and any(
                pattern.is_match(line) for line in content.splitlines()
            )
            detail = (
                f"{path} not found"
                if content is None
                else "a line matched"
                if passed
                else f"no line of {path} matches {pattern.pattern!r}"
            )
        case ToolCallsMin(n=n):
            passed, detail = len(calls) >= n, f"expected >= {n}, got {len(calls)}"
        case ToolCallsMax(n=n):
            passed, detail = len(calls) <= n, f"expected <= {n}, got {len(calls)}"
        case LlmJudge():
            passed, detail, weight = True, "stub: no judge configured (weight 0)", 0.0
        case _:
            assert_never(spec)
    return ScoreResult(check=exp.check, passed=passed, detail=detail, weight=weight, kind=exp.kind)


def score_task(task: Task, trace: AgentTrace, sandbox: Sandbox | None) -> TaskScore:
    """Score every expectation of ``task``: score = passed weights, max = all weights.

    Example:
        >>> from evalnb.records import AgentTrace, Task
        >>> t = Task(id="t", category="c", prompt="p",
        ...          expectations=[{"check": "exit_code:0"}, {"check": "stderr_empty"}])
        >>> s = score_task(t, AgentTrace(), None)
        >>> s.score, s.max_score, s.all_passed()
        (1.0, 2.0, False)
    """
    return _task_score(task, [evaluate_check(e, trace, sandbox) for e in task.expectations])


def score_task_within(
    task: Task, trace: AgentTrace, sandbox: Sandbox | None, deadline: Deadline
) -> TaskScore:
    """:func:`score_task` within ``deadline`` (:mod:`evalnb._scoring.deadline`): each check
    runs in place (a regex check in linear time: the Rust dialect, RE2), and past the
    deadline a check does not start but fails with the detail ``timed out: ...`` (an
    ``llm_judge`` stub with weight 0, as ever).

    Example:
        >>> import asyncio
        >>> from evalnb.records import Task, ToolCallResult
        >>> t = Task(id="t", category="c", prompt="p", expectations=[
        ...     {"check": "stdout_regex:^(a+)+$"}, {"check": "exit_code:0"}])
        >>> trace = AgentTrace(tool_calls=[ToolCallResult(commands="x", stdout="a" * 34 + "b")])
        >>> async def main():  # a deadline is kept by the event loop that scores
        ...     deadline = Deadline(1)
        ...     return score_task_within(t, trace, None, deadline), deadline.error()
        >>> score, error = asyncio.run(main())
        >>> [r.detail for r in score.results], error
        (["pattern '^(a+)+$' not matched", 'expected 0, got 0'], None)
    """
    results = []
    for exp in task.expectations:
        try:
            deadline.start_check()
            results.append(evaluate_check(exp, trace, sandbox))
        except ScoringTimeout as exc:
            weight = 0.0 if isinstance(exp.spec, LlmJudge) else exp.weight
            detail = deadline.stop(exc)
            results.append(
                ScoreResult(
                    check=exp.check, passed=False, detail=detail, weight=weight, kind=exp.kind
                )
            )
    return _task_score(task, results)


def _task_score(task: Task, results: list[ScoreResult]) -> TaskScore:
    return TaskScore.from_results(task.id, results)


def _fs(sandbox: Sandbox | None) -> Sandbox:
    if sandbox is None:
        raise ValueError("file checks need the sandbox the task ran in")
    return sandbox
