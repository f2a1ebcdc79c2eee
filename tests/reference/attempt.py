"""One attempt's rows: its tasks row, LLM calls, tool calls and checks, from its record.

Spec 000 (``AgentTrace``, ``TaskScore``), spec 003 (per-call metrics, base context and
context growth) and spec 002 (gates, judge, outcome), with the README's rules where the
specs are silent:

- An attempt *errored before its work ran* when it has an error and no tool call: its
  checks are not run (``passed`` null) and it scores 0 of its max.
- A token count is null when unknown; a figure whose formula needs an unknown count is
  null (the running total from the first unknown call on, base context when call 1's
  is unknown, growth when call 1's or call N's is), and spec 000's token totals add the
  known counts (the record's own totals where no call's count is known).
- Checks that read the trace (spec 000's table: ``exit_code``, ``stdout_contains``,
  ``stdout_regex``, ``stderr_empty``, ``tool_calls_min``/``max``; spec 002's
  ``no_transcript_errors``) are decided again here from the recorded calls; the others
  (files, commands run by gates, the judge) keep the verdict recorded.
"""

from __future__ import annotations

import re
from itertools import pairwise
from typing import Any

from tests.reference.commands import commands

TASK_FIGURES = [
    "category",
    "turns",
    "tool_call_count",
    "tool_calls_ok",
    "tool_calls_error",
    "natural_stop",
    "total_input_tokens",
    "total_output_tokens",
    "duration_ms",
    "score",
    "max_score",
    "rate",
    "passed",
    "error",
    "llm_call_count",
    "base_context",
    "context_growth_avg",
    "final_cumulative_input",
    "cache_read_tokens",
    "cache_write_tokens",
    "outcome",
    "gates_passed",
    "gates_total",
    "judge_score",
    "composite_score",
    "guidance",
]


def work_never_ran(record: dict[str, Any]) -> bool:
    """README "Errored attempts": an error, and none of its tool calls ran."""
    return record["error"] is not None and not record["trace"]["tool_calls"]


def llm_calls(record: dict[str, Any]) -> list[dict[str, Any]]:
    """The LLM-call rows, in call order, with spec 003's running input total and the
    number of tool calls each response made (its tool_use blocks: call N's response is
    the N-th assistant message)."""
    calls = sorted(record["trace"]["llm_calls"], key=lambda c: c["call_number"])
    replies = [m for m in record["trace"]["messages"] if m["role"] == "assistant"]
    rows, total = [], 0
    for n, call in enumerate(calls):
        known = call["input_tokens"] is not None and total is not None
        total = total + call["input_tokens"] if known else None
        made = sum(b["type"] == "tool_use" for b in replies[n]["content"])
        rows.append({**call, "cumulative_input": total, "tool_calls_made": made})
    return rows


CUT = {"length", "max_tokens"}
"""Stop reasons of a reply cut by the output limit (README "The agent loop")."""


def natural_stop(record: dict[str, Any]) -> bool:
    """Spec 000: the model decided it was done: its last reply asked for no tool and was
    not cut by the output limit. Whatever ends an attempt first leaves a reply that asked
    for tools last, or none (the turn limit, a provider error, a time limit); an error
    after the model stopped (scoring) does not change how it stopped."""
    calls = llm_calls(record)
    return bool(calls) and calls[-1]["tool_calls_made"] == 0 and calls[-1]["stop_reason"] not in CUT


def tool_calls(record: dict[str, Any]) -> list[dict[str, Any]]:
    """The tool-call rows, in call order."""
    return sorted(record["trace"]["tool_calls"], key=lambda c: c["call_index"])


def checks(record: dict[str, Any]) -> list[dict[str, Any]]:
    """The check rows with their verdicts: not run when the work never ran, decided
    again from the trace for the checks that read it, else as recorded."""
    pattern = (record.get("extra") or {}).get("command_pattern")
    rows = []
    for row in record["score"]["results"]:
        passed = row["passed"]
        if work_never_ran(record):
            passed = None
        elif row["layer"] == "expectation":
            passed = _trace_check(row["check"], tool_calls(record), passed)
        elif row["kind"] == "no_transcript_errors":
            passed = not any(c.failed for c in commands(record, pattern))
        rows.append({**row, "passed": passed})
    return rows


def task_row(run_info: dict[str, Any], record: dict[str, Any]) -> dict[str, Any]:
    """The attempt's row of the tasks table (columns :data:`TASK_FIGURES`)."""
    trace = record["trace"]
    calls = llm_calls(record)
    tools = tool_calls(record)
    rows = checks(record)
    inputs = [c["input_tokens"] for c in calls]
    score = 0.0 if work_never_ran(record) else float(sum(r["weight"] for r in rows if r["passed"]))
    max_score = float(sum(r["weight"] for r in rows))
    scenario = record.get("scenario")
    if scenario is not None:
        gates = [r for r in rows if r["layer"] == "gate"]
        judged = [r for r in rows if r["layer"] == "judge"]
        ok = all(r["passed"] is True for r in gates + judged)
        outcome = "pass" if ok and not work_never_ran(record) else "fail"
        evaluated = {
            "outcome": outcome,
            "gates_passed": sum(r["passed"] is True for r in gates),
            "gates_total": len(gates),
            "judge_score": scenario["judge_score"],
            "composite_score": scenario["composite_score"],
        }
        passed = outcome == "pass"
    else:
        evaluated = dict.fromkeys(
            ["outcome", "gates_passed", "gates_total", "judge_score", "composite_score"]
        )
        passed = all(r["passed"] is True for r in rows)
    return {
        "run_id": run_info["run_id"],
        "model": run_info["model"],
        "task_id": record["task"]["id"],
        "epoch": record["epoch"],
        "category": record["task"]["category"],
        "guidance": run_info.get("guidance"),
        "turns": len(calls) if calls else trace["turns"],
        "tool_call_count": len(tools),
        "tool_calls_ok": sum(c["exit_code"] == 0 for c in tools),
        "tool_calls_error": sum(c["exit_code"] not in (0, None) for c in tools),
        "natural_stop": natural_stop(record),
        "total_input_tokens": _total(calls, "input_tokens", trace["total_input_tokens"]),
        "total_output_tokens": _total(calls, "output_tokens", trace["total_output_tokens"]),
        "duration_ms": trace["duration_ms"],
        "score": score,
        "max_score": max_score,
        "rate": score / max_score if max_score else None,
        "passed": passed and record["error"] is None,
        "error": record["error"],
        "llm_call_count": len(calls),
        "base_context": inputs[0] if inputs else None,
        "context_growth_avg": _growth(inputs),
        "final_cumulative_input": calls[-1]["cumulative_input"] if calls else None,
        "cache_read_tokens": _cache(calls, "cache_read_tokens"),
        "cache_write_tokens": _cache(calls, "cache_write_tokens"),
        **evaluated,
    }


def _total(calls: list[dict[str, Any]], name: str, recorded: int) -> int:
    """Spec 000's token total: the calls' known counts, or the record's own total for a
    source without per-call counts (no call has one: a bashkit-eval file, a transcript)."""
    known = [c[name] for c in calls if c[name] is not None]
    return sum(known) if known else recorded


def _growth(inputs: list[int | None]) -> float | None:
    """Spec 003: ``sum(call[i+1] - call[i]) / (N - 1)``, 0 for one call. The sum
    telescopes, so calls 1 and N decide it; it is null when either is unknown."""
    if not inputs or inputs[0] is None or inputs[-1] is None:
        return None
    if len(inputs) == 1:
        return 0.0
    if all(i is not None for i in inputs):
        steps = [b - a for a, b in pairwise(inputs)]
        return sum(steps) / (len(inputs) - 1)
    return (inputs[-1] - inputs[0]) / (len(inputs) - 1)


def _cache(calls: list[dict[str, Any]], name: str) -> int | None:
    """Summed over the calls, an unknown count adding 0; null without calls."""
    return sum(c[name] or 0 for c in calls) if calls else None


def _trace_check(check: str, calls: list[dict[str, Any]], recorded: bool | None) -> bool | None:
    """Spec 000's verdict of a check that reads the trace; ``recorded`` for the others."""
    kind, _, arg = check.partition(":")
    last = calls[-1]["exit_code"] if calls else -1  # README: no call counts as -1
    match kind:
        case "exit_code":
            return last == int(arg)
        case "stdout_contains":
            return any(arg in c["stdout"] for c in calls)
        case "stdout_regex":
            return any(rust_regex(arg).search(c["stdout"]) for c in calls)
        case "stderr_empty":
            return all(c["stderr"] == "" for c in calls)
        case "tool_calls_min":
            return len(calls) >= int(arg)
        case "tool_calls_max":
            return len(calls) <= int(arg)
    return recorded


def rust_regex(pattern: str) -> re.Pattern[str]:
    """``pattern`` with the Rust ``regex`` crate's meaning of ``$`` (bashkit-eval is a Rust
    program): without the ``m`` flag it matches at the very end of the text only, where
    Python's also matches before a final newline. The generated patterns use no other
    feature whose meaning differs."""
    if "(?m" in pattern:
        return re.compile(pattern)
    return re.compile(re.sub(r"(?<!\\)\$", r"\\Z", pattern))
