"""Spec 000's expectation checks, with bashkit-eval's exact semantics.

Checks read two sources: the agent trace (stdout, stderr, exit codes, call count)
and the sandbox's filesystem after the agent finished (files, directories).

=====================  ==========================================================
check                  passes when
=====================  ==========================================================
``exit_code:N``        the last tool call exited with N (no call counts as -1)
``stdout_contains:t``  ``t`` is a case-sensitive substring of any call's stdout
``stdout_regex:p``     ``re.search(p)`` matches any call's stdout
``stderr_empty``       every call's stderr is empty (true with no calls)
``file_exists:/p``     ``/p`` exists (a directory counts)
``dir_exists:/p``      ``/p`` is a directory
``file_contains:/p:t`` file ``/p`` contains ``t`` (split at the first ``:`` after /p)
``file_line_regex:/p:r`` some line of file ``/p`` matches ``re.search(r)``
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

import re

from evalnb.records import AgentTrace, Expectation, ScoreResult, Task, TaskScore
from evalnb.records.interfaces import Sandbox


def evaluate_check(exp: Expectation, trace: AgentTrace, sandbox: Sandbox | None) -> ScoreResult:
    """Evaluate one expectation against a trace and the sandbox's final filesystem.

    ``sandbox`` may be None only for checks that read the trace alone.

    Example:
        >>> r = evaluate_check(Expectation(check="exit_code:0"), AgentTrace(), None)
        >>> r.passed, r.detail
        (False, 'expected 0, got -1')
    """
    kind, path, value = exp.kind, exp.path, exp.value
    calls = trace.tool_calls
    weight = exp.weight
    if kind == "exit_code":
        last = trace.last_tool_response
        got = last.exit_code if last else -1
        passed, detail = got == int(value), f"expected {value}, got {got}"
    elif kind == "stdout_contains":
        passed = any(value in c.stdout for c in calls)
        detail = "found" if passed else f"{value!r} not found in any tool output"
    elif kind == "stdout_regex":
        pattern = re.compile(value)
        passed = any(pattern.search(c.stdout) for c in calls)
        detail = "matched" if passed else f"pattern {value!r} not matched"
    elif kind == "stderr_empty":
        noisy = [c.call_index for c in calls if c.stderr]
        passed = not noisy
        detail = "stderr empty" if passed else f"stderr not empty in call(s) {noisy}"
    elif kind in ("file_exists", "dir_exists"):
        ftype = _fs(sandbox).file_type(path)
        if kind == "file_exists":
            passed, detail = ftype is not None, "exists" if ftype else "not found"
        else:
            passed = ftype == "directory"
            detail = "directory exists" if passed else f"not a directory ({ftype or 'not found'})"
    elif kind in ("file_contains", "file_line_regex"):
        text = _fs(sandbox).read_text(path)
        if text is None:
            passed, detail = False, f"{path} not found"
        elif kind == "file_contains":
            passed = value in text
            detail = "found in file" if passed else f"{value!r} not found in {path}"
        else:
            pattern = re.compile(value)
            passed = any(pattern.search(line) for line in text.splitlines())
            detail = "a line matched" if passed else f"no line of {path} matches {value!r}"
    elif kind == "tool_calls_min":
        passed, detail = len(calls) >= int(value), f"expected >= {value}, got {len(calls)}"
    elif kind == "tool_calls_max":
        passed, detail = len(calls) <= int(value), f"expected <= {value}, got {len(calls)}"
    elif kind == "llm_judge":
        passed, detail, weight = True, "stub: no judge configured (weight 0)", 0.0
    else:  # pragma: no cover - parse_check rejects unknown kinds at load time
        raise ValueError(f"unknown check kind {kind!r}")
    return ScoreResult(check=exp.check, passed=passed, detail=detail, weight=weight, kind=kind)


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
    results = [evaluate_check(e, trace, sandbox) for e in task.expectations]
    return TaskScore(
        task_id=task.id,
        results=results,
        score=sum(r.weight for r in results if r.passed),
        max_score=sum(r.weight for r in results),
    )


def _fs(sandbox: Sandbox | None) -> Sandbox:
    if sandbox is None:
        raise ValueError("file checks need the sandbox the task ran in")
    return sandbox
