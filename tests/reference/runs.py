"""Figures over the attempts of runs: spec 000's summary and categories with their
friction signals, spec 003's context growth per run and model, spec 002's interaction
metrics per attempt, run and subcommand, and its layers per run.

Every rate is ``numerator / denominator`` and null when the denominator is 0. Durations
are summed and averaged over the attempts whose duration is known, null when none is
(README "Metrics": a source may not record one).
"""

from __future__ import annotations

import statistics
from collections import defaultdict
from typing import Any

from tests.reference.attempt import task_row
from tests.reference.commands import COUNTS, commands, counts, rates
from tests.reference.folder import Run


def _share(num: float, den: float) -> float | None:
    return num / den if den else None


def _mean(values: list[Any]) -> float | None:
    known = [v for v in values if v is not None]
    return sum(known) / len(known) if known else None


def _known(rows: list[dict[str, Any]], figure: str) -> list[Any]:
    return [r[figure] for r in rows if r[figure] is not None]


def tasks(runs: list[Run]) -> list[dict[str, Any]]:
    """Every attempt's tasks row."""
    return [task_row(run.info, record) for run in runs for record in run.records]


def summary(runs: list[Run]) -> dict[str, dict[str, Any]]:
    """Per run_id: spec 000's ``EvalSummary`` fields, pass rate and errored attempts, and
    spec 002's layers for scenario runs (README "scenario layers")."""
    out = {}
    for run in runs:
        rows = tasks([run])
        n = len(rows)
        ok = sum(r["tool_calls_ok"] for r in rows)
        error = sum(r["tool_calls_error"] for r in rows)
        calls = sum(r["tool_call_count"] for r in rows)
        figures = {
            "model": run.model,
            "total_tasks": n,
            "distinct_tasks": len({r["task_id"] for r in rows}),
            "total_passed": sum(r["passed"] for r in rows),
            "errored_tasks": sum(r["error"] is not None for r in rows),
            "total_score": float(sum(r["score"] for r in rows)),
            "total_max_score": float(sum(r["max_score"] for r in rows)),
            "total_tool_calls": calls,
            "tool_calls_ok": ok,
            "tool_calls_error": error,
            "tool_calls_unknown": calls - ok - error,
            "total_turns": sum(r["turns"] for r in rows),
            "natural_stop_rate": _mean([r["natural_stop"] for r in rows]),
            "total_input_tokens": sum(r["total_input_tokens"] for r in rows),
            "total_output_tokens": sum(r["total_output_tokens"] for r in rows),
            "total_duration_ms": sum(timed) if (timed := _known(rows, "duration_ms")) else None,
        }
        figures |= {
            "pass_rate": _share(figures["total_passed"], n),
            "overall_rate": _share(figures["total_score"], figures["total_max_score"]),
            "tool_call_success_rate": _share(ok, ok + error),
            "avg_turns_per_task": _share(figures["total_turns"], n),
            "avg_tool_calls_per_task": _share(calls, n),
            "avg_duration_ms": _share(figures["total_duration_ms"], len(timed)) if timed else None,
        }
        out[run.run_id] = figures | _layers(rows)
    return out


def _layers(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """Spec 002's layers reported apart; null for a run without scenario evaluations.
    An errored attempt counts as an attempt that did not pass."""
    if not any(r["outcome"] is not None for r in rows):
        return dict.fromkeys(
            [
                "outcome_pass_rate",
                "gate_pass_rate",
                "gates_passed",
                "gates_total",
                "judge_scored",
                "judge_score_mean",
                "composite_score_mean",
            ]
        )
    clean = [r for r in rows if r["error"] is None]
    return {
        "outcome_pass_rate": sum(r["outcome"] == "pass" for r in clean) / len(rows),
        "gate_pass_rate": sum(r["gates_passed"] == r["gates_total"] for r in clean) / len(rows),
        "gates_passed": sum(r["gates_passed"] or 0 for r in rows),
        "gates_total": sum(r["gates_total"] or 0 for r in rows),
        "judge_scored": sum(r["judge_score"] is not None for r in rows),
        "judge_score_mean": _mean([r["judge_score"] for r in rows]),
        "composite_score_mean": _mean([r["composite_score"] for r in rows]),
    }


def by_category(runs: list[Run]) -> dict[tuple[str, str], dict[str, Any]]:
    """Per (run_id, category): spec 000's ``CategorySummary`` and the pass rate."""
    groups: dict[tuple[str, str], list[dict[str, Any]]] = defaultdict(list)
    for row in tasks(runs):
        groups[(row["run_id"], row["category"])].append(row)
    out = {}
    for key, rows in groups.items():
        score = sum(r["score"] for r in rows)
        max_score = sum(r["max_score"] for r in rows)
        passed = sum(r["passed"] for r in rows)
        out[key] = {
            "tasks": len(rows),
            "passed": passed,
            "score": score,
            "max_score": max_score,
            "rate": _share(score, max_score),
            "pass_rate": passed / len(rows),
        }
    return out


FIGURES_003 = ["base_context", "context_growth_avg", "final_cumulative_input"]


def context_growth(runs: list[Run], by: str) -> dict[Any, dict[str, Any]]:
    """Spec 003 per attempt (``by="task"``), or per run_id or model: attempts, the share
    whose base context is known, mean calls, and the mean and median of each figure over
    the attempts that have it."""
    rows = tasks(runs)
    if by == "task":
        return {
            (r["run_id"], r["task_id"], r["epoch"]): {
                "calls": r["llm_call_count"],
                "has_call_tokens": r["base_context"] is not None,
                **{f: r[f] for f in FIGURES_003},
            }
            for r in rows
        }
    groups: dict[Any, list[dict[str, Any]]] = defaultdict(list)
    for r in rows:
        groups[r["run_id"] if by == "run" else r["model"]].append(r)
    out = {}
    for key, members in groups.items():
        figures: dict[str, Any] = {
            "tasks": len(members),
            "share_with_call_tokens": _mean([r["base_context"] is not None for r in members]),
            "calls_mean": _mean([r["llm_call_count"] for r in members]),
        }
        for f in FIGURES_003:
            known = [r[f] for r in members if r[f] is not None]
            figures[f"{f}_mean"] = _mean(known)
            figures[f"{f}_median"] = float(statistics.median(known)) if known else None
        out[key] = figures
    return out


def _completed(row: dict[str, Any]) -> bool | None:
    """Spec 002 completion: the agent stopped on its own and nothing errored."""
    if row["natural_stop"] is None:
        return None
    return bool(row["natural_stop"]) and row["error"] is None


def interaction(runs: list[Run], pattern: str | None, by: str) -> dict[Any, dict[str, Any]]:
    """Spec 002 layer 1 per attempt (``by="task"``), per run_id or per (run_id,
    subcommand)."""
    per_attempt = []
    for run in runs:
        for record in run.records:
            row = task_row(run.info, record)
            found = commands(record, pattern)
            per_attempt.append((row, found))
    if by == "task":
        return {
            (row["run_id"], row["task_id"], row["epoch"]): {
                **(c := counts(found)),
                **rates(c),
                "completed": _completed(row),
            }
            for row, found in per_attempt
        }
    if by == "run":  # a run without attempts has no row, as in context_growth
        out = {}
        for run in runs:
            mine = [(row, found) for row, found in per_attempt if row["run_id"] == run.run_id]
            if not mine:
                continue
            summed = {k: sum(counts(found)[k] for _, found in mine) for k in COUNTS}
            completed = [_completed(row) for row, _ in mine]
            out[run.run_id] = {
                "tasks": len(mine),
                "completed_tasks": sum(c is True for c in completed),
                "known_completion": sum(c is not None for c in completed),
                "completion_rate": _mean(completed),
                **summed,
                **rates(summed),
            }
        return out
    groups: dict[tuple[str, str | None], list[Any]] = defaultdict(list)
    attempts: dict[tuple[str, str | None], set[tuple[str, int]]] = defaultdict(set)
    for row, found in per_attempt:
        for command in found:
            key = (row["run_id"], command.subcommand)
            groups[key].append(command)
            attempts[key].add((row["task_id"], row["epoch"]))
    return {
        key: {"tasks": len(attempts[key]), **(c := counts(found)), **rates(c)}
        for key, found in groups.items()
    }


HEALTHY = {  # name: (figure, comparison, threshold): spec 000 "Healthy Profile"
    "overall_rate": ("overall_rate", ">", 0.90),
    "tool_call_success": ("tool_call_success_rate", ">", 0.80),
    "avg_turns": ("avg_turns_per_task", "<", 5.0),
    "min_category_rate": ("min_category_rate", ">=", 0.70),
    "natural_stop": ("natural_stop_rate", ">", 0.50),
}
FRICTION = {  # spec 000 "Friction Signals"
    "low_tool_call_success": ("tool_call_success_rate", "<", 0.75),
    "weak_category": ("min_category_rate", "<", 0.50),
    "many_turns": ("avg_turns_per_task", ">", 7.0),
    "high_tokens_low_pass": ("tokens_per_task", ">", None),  # the median of the runs
    "no_natural_stop": ("no_natural_stop_rate", ">", 0.20),
}
_HOLDS = {">": lambda a, b: a > b, "<": lambda a, b: a < b, ">=": lambda a, b: a >= b}


def friction(runs: list[Run]) -> dict[tuple[str, str], dict[str, Any]]:
    """Per (run_id, signal): value, threshold and whether it is flagged (a healthy
    criterion not met, a friction signal present; null when the value is unknown)."""
    sums = summary(runs)
    categories = by_category(runs)
    profiles = {}
    for run_id, s in sums.items():
        rates_ = [f["rate"] for (r, _), f in categories.items() if r == run_id]
        known = [r for r in rates_ if r is not None]
        stop = s["natural_stop_rate"]
        profiles[run_id] = {
            **s,
            "min_category_rate": min(known) if known else None,
            "no_natural_stop_rate": None if stop is None else 1 - stop,
            "tokens_per_task": _share(
                s["total_input_tokens"] + s["total_output_tokens"], s["total_tasks"]
            ),
        }
    tokens = [p["tokens_per_task"] for p in profiles.values() if p["tokens_per_task"] is not None]
    median = statistics.median(tokens) if tokens else None
    out = {}
    for run_id, p in profiles.items():
        for kind, signals in (("healthy", HEALTHY), ("friction", FRICTION)):
            for name, (figure, op, limit) in signals.items():
                threshold = median if limit is None else limit
                value = p[figure]
                holds = None
                if value is not None and threshold is not None:
                    holds = _HOLDS[op](value, threshold)
                if name == "high_tokens_low_pass" and holds:
                    holds = p["pass_rate"] is not None and p["pass_rate"] < 0.50
                flagged = None if holds is None else (not holds if kind == "healthy" else holds)
                out[(run_id, name)] = {
                    "kind": kind,
                    "value": value,
                    "threshold": threshold,
                    "flagged": flagged,
                }
    return out
