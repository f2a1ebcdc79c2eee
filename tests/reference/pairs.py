"""Paired comparisons' point figures: two runs on their shared tasks (README ``compare``),
and guidance versions side by side (spec 002 "Comparing Guidance Versions").

The tests' p-values and intervals are not recounted here; the figures they rest on are.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from tests.reference.attempt import task_row
from tests.reference.commands import commands, counts, rates
from tests.reference.folder import Run
from tests.reference.runs import _completed, _mean, tasks

EXACT_MAX = 16
"""README: the sign-flip test is exact up to this many tasks that differ."""


def compare(a: Run, b: Run, *, include_errored: bool = False) -> dict[str, Any]:
    """Runs ``a`` and ``b`` paired on the tasks both have, each task's attempts summed.

    Errored attempts are left out (and counted) unless ``include_errored``; a shared task
    with no attempt left on one side is counted as errored; tasks in one run only are
    counted. Shares and rates are over the attempts used.
    """

    def side(run: Run) -> tuple[dict[str, dict[str, float]], set[str], list[dict[str, Any]]]:
        rows = tasks([run])
        used: dict[str, dict[str, float]] = {}
        for r in rows:
            if r["error"] is not None and not include_errored:
                continue
            empty = {"attempts": 0, "passes": 0, "score": 0.0, "max": 0.0}
            t = used.setdefault(r["task_id"], empty)
            t["attempts"] += 1
            t["passes"] += r["passed"]
            t["score"] += r["score"]
            t["max"] += r["max_score"]
        return used, {r["task_id"] for r in rows}, rows

    used_a, ids_a, rows_a = side(a)
    used_b, ids_b, rows_b = side(b)
    shared_ids = ids_a & ids_b
    paired = sorted(set(used_a) & set(used_b))
    if not paired:
        return {"tasks": 0}  # nothing to compare: evalnb refuses the pair
    share_a = {t: used_a[t]["passes"] / used_a[t]["attempts"] for t in paired}
    share_b = {t: used_b[t]["passes"] / used_b[t]["attempts"] for t in paired}
    attempts_a = sum(used_a[t]["attempts"] for t in paired)
    attempts_b = sum(used_b[t]["attempts"] for t in paired)
    passes_a = sum(used_a[t]["passes"] for t in paired)
    passes_b = sum(used_b[t]["passes"] for t in paired)
    score_a, max_a = (sum(used_a[t][k] for t in paired) for k in ("score", "max"))
    score_b, max_b = (sum(used_b[t][k] for t in paired) for k in ("score", "max"))
    one_attempt = all(used_a[t]["attempts"] == 1 == used_b[t]["attempts"] for t in paired)
    differing = sum(share_a[t] != share_b[t] for t in paired)

    def errored(rows: list[dict[str, Any]]) -> int:
        if include_errored:
            return 0
        return sum(r["error"] is not None and r["task_id"] in shared_ids for r in rows)

    rate_a = score_a / max_a if max_a else None
    rate_b = score_b / max_b if max_b else None
    return {
        "tasks": len(paired),
        "tasks_only_a": len(ids_a - ids_b),
        "tasks_only_b": len(ids_b - ids_a),
        "tasks_errored": len(shared_ids) - len(paired),
        "attempts_a": attempts_a,
        "attempts_b": attempts_b,
        "errored_a": errored(rows_a),
        "errored_b": errored(rows_b),
        "a_higher": sum(share_a[t] > share_b[t] for t in paired),
        "b_higher": sum(share_a[t] < share_b[t] for t in paired),
        "tied": sum(share_a[t] == share_b[t] for t in paired),
        "pass_rate_a": passes_a / attempts_a,
        "pass_rate_b": passes_b / attempts_b,
        "diff": passes_a / attempts_a - passes_b / attempts_b,
        "test": "exact McNemar"
        if one_attempt
        else "exact sign-flip"
        if differing <= EXACT_MAX
        else "sign-flip (20,000 draws)",
        "rate_a": rate_a,
        "rate_b": rate_b,
        "rate_diff": rate_a - rate_b if rate_a is not None and rate_b is not None else None,
    }


GUIDANCE_METRICS = [
    "pass_rate",
    "completion_rate",
    "error_rate",
    "retry_rate",
    "first_try_success_rate",
    "iteration_ratio",
    "help_per_attempt",
    "commands_per_attempt",
]
NO_GUIDANCE = "(none)"


def _guidance_rows(runs: list[Run]) -> list[tuple[dict[str, Any], dict[str, int]]]:
    """Each attempt's tasks row (guidance filled in) and its interaction counts, with its
    scenario's own command pattern (every command for a bash task)."""
    out = []
    for run in runs:
        for record in run.records:
            row = task_row(run.info, record)
            row["guidance"] = row["guidance"] or NO_GUIDANCE
            pattern = (record.get("extra") or {}).get("command_pattern")
            out.append((row, counts(commands(record, pattern))))
    return out


def _aggregate(members: list[tuple[dict[str, Any], dict[str, int]]]) -> dict[str, Any]:
    summed = {k: sum(c[k] for _, c in members) for k in members[0][1]}
    n = len(members)
    return {
        "attempts": n,
        "tasks": len({row["task_id"] for row, _ in members}),
        "pass_rate": sum(row["passed"] for row, _ in members) / n,
        "completion_rate": _mean([_completed(row) for row, _ in members]),
        **rates(summed),
        "help_per_attempt": summed["help_invocations"] / n,
        "commands_per_attempt": summed["total_commands"] / n,
    }


def compare_guidance(runs: list[Run]) -> dict[str, dict[Any, dict[str, Any]]]:
    """``summary`` per (model, guidance), ``per_task`` per (model, guidance, task_id) and
    ``paired`` per (model, version_a, version_b, metric) with n_shared, mean_a, mean_b
    and diff = mean(b - a) over the shared tasks whose metric both versions have (both
    orders of each pair of versions are given)."""
    rows = _guidance_rows(runs)
    by_version: dict[tuple[str, str], list[Any]] = defaultdict(list)
    by_task: dict[tuple[str, str, str], list[Any]] = defaultdict(list)
    for row, c in rows:
        by_version[(row["model"], row["guidance"])].append((row, c))
        by_task[(row["model"], row["guidance"], row["task_id"])].append((row, c))
    per_task = {key: _aggregate(m) for key, m in by_task.items()}
    paired = {}
    for model, a in by_version:
        for other, b in by_version:
            if other != model or a == b:
                continue
            for metric in GUIDANCE_METRICS:
                pairs = [
                    (per_task[(model, a, t)][metric], per_task[(model, b, t)][metric])
                    for (m, v, t) in per_task
                    if m == model and v == a and (model, b, t) in per_task
                ]
                pairs = [(x, y) for x, y in pairs if x is not None and y is not None]
                paired[(model, a, b, metric)] = {
                    "n_shared": len(pairs),
                    "mean_a": _mean([x for x, _ in pairs]),
                    "mean_b": _mean([y for _, y in pairs]),
                    "diff": _mean([y - x for x, y in pairs]),
                }
    return {
        "summary": {key: _aggregate(m) for key, m in by_version.items()},
        "per_task": per_task,
        "paired": paired,
    }
