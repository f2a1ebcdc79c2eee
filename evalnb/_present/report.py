"""Reports: a terminal summary, and report.md / report.json / comparison.md on disk.

Every figure comes from :func:`evalnb._analysis.summary.summary` and
:func:`evalnb._analysis.categories.by_category` (computed from per-task rows, never from a source
file's own summary). Reports show both rates, labelled: the *pass rate* (tasks whose
every check passed / tasks) and the *overall rate* (weighted check score / maximum,
spec 000), each with its 95% interval in brackets, clustered by task (a task's epochs,
checks and tool calls are one unit). A category's rate is its overall rate, never called
a pass rate. Runs of CLI-tool scenarios also show spec 002's layers apart: outcome pass
rate, gate pass rate, gates passed and the mean judge score (a composite only where a
scenario configures one; what the judges cost where their calls were recorded); their
tasks show ``gates passed/total`` and the judge score instead of a weighted score. A
model is named with
" (simulated)" when its run is simulated, and with " · <guidance>" when the run
used a guidance version.

Files written by :func:`write_report` (each atomically: temp file + rename):

- ``report.md``: per run, the header figures, a by-category table, friction signals
  (:func:`evalnb._analysis.diagnostics.friction`) and every task with every check verdict.
- ``report.json``: ``{"format": "evalnb-report", "version": 1, "summary": [...],
  "by_category": [...], "tables": {"runs": [...], "tasks": [...], ...}}`` with the
  six tidy tables as lists of row objects; :func:`evalnb._analysis.load.load` reads it back.
- ``comparison.md``: spec 000's "Current Baseline" table (one column per baseline run:
  :func:`evalnb._analysis.baseline.baseline_runs`, the latest run of each model family,
  guidance version and simulated or not), its "Per-Category Rates" table, a paired
  comparison of every pair of those runs on the same dataset
  (:func:`evalnb._analysis.compare.compare_all`: shared tasks, difference, interval, p
  and Holm-adjusted p; report.html shows the same pairs), and a trend table for every
  model family run on several dates, with task counts and partial runs marked.

Example:
    >>> print(terminal_report(Runs.empty()))
    No runs.
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import polars as pl

from evalnb import _display as fmt
from evalnb._analysis.baseline import baseline_runs
from evalnb._analysis.categories import by_category
from evalnb._analysis.compare import compare_all
from evalnb._analysis.comparison import power_note
from evalnb._analysis.cost import Prices
from evalnb._analysis.diagnostics import friction
from evalnb._analysis.pass_at_k import pass_at_k
from evalnb._analysis.report_file import REPORT_FORMAT, REPORT_VERSION
from evalnb._analysis.runs import Runs
from evalnb._analysis.stats import SMALL_N
from evalnb._analysis.summary import summary
from evalnb._store import utc_now
from evalnb._store.tables import TABLES

CI_NOTE = (
    "Brackets: 95% interval clustered by task (Agresti-Coull on the effective sample size, "
    "small-sample corrected; a task's epochs, checks and tool calls count as one unit)."
)

PAIRED_NOTE = (
    "Every two baseline runs (the latest run of each model family, guidance version and "
    "simulated or not) that ran the same dataset, paired on the tasks both have (per-task "
    "figures first; errored attempts left out and counted). Holm p adjusts for every "
    "comparison in the table: read a difference as real only where it is at most 0.05."
)
"""The paragraph above the paired comparisons, in comparison.md and report.html alike."""


def terminal_report(runs: Runs, prices: Prices | None = None) -> str:
    """Per task PASS/FAIL with score/max (and error), then each run's summary.

    Example:
        >>> from evalnb.records import RunMeta, Task, TaskRecord, TaskScore, ScoreResult
        >>> from evalnb._store.tables import tables_from_records
        >>> rec = TaskRecord(task=Task(id="t1", category="c", prompt="p"),
        ...     score=TaskScore(task_id="t1", score=1, max_score=2, results=[
        ...         ScoreResult(check="exit_code:0", passed=True, weight=1),
        ...         ScoreResult(check="stderr_empty", passed=False, weight=1)]))
        >>> meta = RunMeta(run_id="r", provider="sim", model="m", simulated=True)
        >>> text = terminal_report(Runs(**tables_from_records(meta, [rec])))
        >>> print(text.splitlines()[1])
          FAIL  t1  1/2
    """
    if runs.runs.height == 0:
        return "No runs."
    summaries, categories = _figures(runs, prices)
    blocks = []
    for row in summaries.iter_rows(named=True):
        note = _partial_note(row)
        lines = [f"== {_label(row)} · run {row['run_id']}" + (f" · {note}" if note else "") + " =="]
        tasks = runs.tasks.filter(pl.col("run_id") == row["run_id"])
        several_epochs = tasks.get_column("epoch").n_unique() > 1
        names = [
            f"{t}#{e}" if several_epochs else t for t, e in tasks.select("task_id", "epoch").rows()
        ]
        width = max(map(len, names), default=0)
        for name, task in zip(names, tasks.iter_rows(named=True), strict=True):
            line = f"  {_verdict(task)}  {name:<{width}}  {_task_score(task)}"
            if task["error"]:
                line += f"  error: {_one_line(task['error'])}"
            lines.append(line)
        lines += ["", "  Summary", *(f"    {k}: {v}" for k, v in _header(row))]
        cats = categories.filter(pl.col("run_id") == row["run_id"]).sort("category")
        lines.append("    By category (overall rate, tasks passed):")
        lines += [
            f"      {c['category']}: {fmt.rate(c['rate'])}  {_category_passed(c, ' passed')}"
            for c in cats.iter_rows(named=True)
        ]
        blocks.append("\n".join(lines))
    return "\n\n".join(blocks) + "\n\n" + CI_NOTE


def write_report(runs: Runs, out_dir: str | Path, prices: Prices | None = None) -> dict[str, Path]:
    """Write report.md, report.json and comparison.md into ``out_dir``; return their paths.

    Example:
        >>> import tempfile
        >>> paths = write_report(Runs.empty(), tempfile.mkdtemp())
        >>> sorted(paths)
        ['comparison.md', 'report.json', 'report.md']
    """
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    summaries, categories = _figures(runs, prices)
    texts = {
        "report.md": report_markdown(runs, summaries, categories),
        "report.json": json.dumps(
            report_json(runs, summaries, categories), ensure_ascii=False, default=str
        ),
        "comparison.md": comparison_markdown(summaries, categories, runs),
    }
    paths = {}
    for name, text in texts.items():
        paths[name] = out / name
        _write_atomic(paths[name], text)
    return paths


def report_markdown(runs: Runs, summaries: pl.DataFrame, categories: pl.DataFrame) -> str:
    """The text of report.md (see the module docstring).

    Example:
        >>> report_markdown(Runs.empty(), summary(Runs.empty()), by_category(Runs.empty()))
        '# evalnb report\\n\\nNo runs.\\n'
    """
    parts = ["# evalnb report", ""]
    if summaries.height == 0:
        return "\n".join([*parts, "No runs.", ""])
    parts += [CI_NOTE, ""]
    signals = friction(runs)
    for row in summaries.iter_rows(named=True):
        run_id = row["run_id"]
        run = runs.runs.filter(pl.col("run_id") == run_id).row(0, named=True)
        parts += [f"## {_label(row)}", "", _run_line(run), ""]
        if run["status"] == "partial":
            missing = run.get("missing_tasks")
            lacks = f" It lacks {missing} task(s)." if missing is not None else ""
            parts += [f"**Partial run**: only the tasks present are counted.{lacks}", ""]
        elif note := _partial_note(run):  # running, with attempts still to finish
            parts += [f"**Running** ({note}): only the tasks finished are counted.", ""]
        parts += [*_table(["Metric", "Value"], [list(kv) for kv in _header(row)]), ""]
        cats = categories.filter(pl.col("run_id") == run_id).sort("category")
        parts += ["### By category", ""]
        parts += _table(
            ["Category", "Tasks", "Passed", "Pass rate", "Overall rate (score/max)"],
            [
                [
                    c["category"],
                    str(c["tasks"]),
                    _category_passed(c),
                    fmt.rate_interval(c["pass_rate"], c["pass_rate_lo"], c["pass_rate_hi"]),
                    f"{fmt.rate(c['rate'])} "
                    f"({fmt.number(c['score'])}/{fmt.number(c['max_score'])})",
                ]
                for c in cats.iter_rows(named=True)
            ],
        )
        parts += ["", "### Friction signals", ""]
        parts += _table(
            ["Kind", "Signal", "Value", "Threshold", "Status", "Message"],
            [
                [
                    s["kind"],
                    s["signal"],
                    fmt.number(s["value"]),
                    fmt.number(s["threshold"]),
                    {True: "**flagged**", False: "ok", None: "unknown"}[s["flagged"]],
                    s["message"] or "",
                ]
                for s in signals.filter(pl.col("run_id") == run_id).iter_rows(named=True)
            ],
        )
        parts += ["", "### Tasks", "", *_task_details(runs, run_id)]
    return "\n".join(parts)


def comparison_markdown(
    summaries: pl.DataFrame, categories: pl.DataFrame, runs: Runs | None = None
) -> str:
    """The text of comparison.md: spec 000's baseline and per-category tables, plus trends.

    With ``runs``, also the paired comparison of every two baseline runs
    (:func:`evalnb._analysis.baseline.baseline_runs`).

    Example:
        >>> comparison_markdown(summary(Runs.empty()), by_category(Runs.empty()))
        '# Comparison\\n\\nNo runs.\\n'
    """
    parts = ["# Comparison", ""]
    if summaries.height == 0:
        return "\n".join([*parts, "No runs.", ""])
    rows = summaries.with_columns(
        pl.Series("label", [_label(r) for r in summaries.iter_rows(named=True)]),
        pl.Series("family", [_label(r, "model_family") for r in summaries.iter_rows(named=True)]),
        pl.col("started_at").str.slice(0, 10).alias("date"),
    )
    by_time = rows.sort("started_at", nulls_last=False, maintain_order=True)
    latest = rows.filter(pl.col("run_id").is_in(baseline_runs(summaries)))
    labels = latest.get_column("label").to_list()
    parts += [
        "## Current Baseline",
        "",
        "Latest run of each model family (guidance versions and simulated runs apart):",
        "",
    ]
    parts += [
        f"- {r['label']}: run {r['run_id']} ({r['date'] or 'date unknown'}, "
        f"{r['total_tasks']} tasks" + (f", {note}" if (note := _partial_note(r)) else "") + ")"
        for r in latest.iter_rows(named=True)
    ]
    if latest.get_column("total_tasks").n_unique() > 1:
        parts += ["", "**The runs have different numbers of tasks: compare with care.**"]
    metric_rows = [
        [name, *(dict(_header(r))[name] for r in latest.iter_rows(named=True))]
        for name in BASELINE_ROWS
    ]
    partial = [bool(_partial_note(r)) for r in latest.iter_rows(named=True)]
    heads = [
        f"{label} {PARTIAL_MARK}" if p else label for label, p in zip(labels, partial, strict=True)
    ]
    parts += ["", *_table(["Metric", *heads], metric_rows), ""]
    if any(partial):
        parts += [f"{PARTIAL_MARK} partial run: its figures cover only the tasks present.", ""]
    parts += [CI_NOTE, ""]
    parts += ["### Per-Category Rates", ""]
    parts += [
        "Cells: the category's overall rate (weighted check score / maximum, "
        "not a pass rate) with its 95% interval clustered by task, then tasks passed / tasks.",
        "",
    ]
    cats = categories.join(latest.select("run_id", "label"), on="run_id")
    cells = {(c["category"], c["label"]): c for c in cats.iter_rows(named=True)}
    cat_rows = [
        [
            cat,
            *(
                f"{fmt.rate_interval(c['rate'], c['rate_lo'], c['rate_hi'])} "
                f"({c['passed']}/{c['tasks']})"
                if (c := cells.get((cat, label)))
                else fmt.MISSING
                for label in labels
            ),
        ]
        for cat in sorted({c for c, _ in cells})
    ]
    parts += [*_table(["Category", *labels], cat_rows), ""]
    if runs is not None:
        parts += _paired_section(compare_all(runs, latest.get_column("run_id").to_list()))
    parts += _trend(by_time)
    return "\n".join(parts)


BASELINE_ROWS = (
    "Tasks passed",
    "Pass rate",
    "Overall rate",
    "Tool calls (ok/err)",
    "Tool call success",
    "Avg turns/task",
    "Tokens (in/out)",
    "Duration",
    "Cost",
)
"""Rows of the comparison table: spec 000's "Current Baseline" rows plus pass rate and cost."""


def summary_records(
    runs: Runs, prices: Prices | None = None, k: Sequence[int] = ()
) -> list[dict[str, Any]]:
    """One JSON-ready object per run: spec 000's EvalSummary fields, ``by_category`` nested.

    ``by_category`` maps each category to spec 000's CategorySummary fields (tasks,
    passed, score, max_score, rate) plus its pass rate and interval. For each of ``k``:
    ``pass_at_K``, ``pass_hat_K`` (pass^k) with their ``_lo``/``_hi`` and
    ``pass_at_K_tasks`` (:func:`evalnb._analysis.pass_at_k.pass_at_k`).

    Example:
        >>> summary_records(Runs.empty())
        []
    """
    summaries, categories = _figures(runs, prices)
    nested = {
        run_id: {c.pop("category"): c for c in group.drop("run_id", "model").to_dicts()}
        for (run_id,), group in categories.group_by("run_id")
    }
    at_k: dict[str, dict[str, Any]] = {}
    for row in pass_at_k(runs, k).iter_rows(named=True) if k else ():
        kk = row["k"]
        figures = {f"pass_at_{kk}_tasks": row["tasks"]}
        for name, short in (("pass_at_k", f"pass_at_{kk}"), ("pass_hat_k", f"pass_hat_{kk}")):
            figures |= {short + end: row[name + end] for end in ("", "_lo", "_hi")}
        at_k.setdefault(row["run_id"], {}).update(figures)
    return [
        row | at_k.get(row["run_id"], {}) | {"by_category": nested.get(row["run_id"], {})}
        for row in summaries.to_dicts()
    ]


def pass_at_k_lines(runs: Runs, k: Sequence[int]) -> str:
    """pass@k and pass^k of each run, one line per run and k, with their intervals.

    Example:
        >>> print(pass_at_k_lines(Runs.empty(), [1]))
        pass@k (at least one of k attempts passes) and pass^k (all k pass), per run:
    """
    lines = ["pass@k (at least one of k attempts passes) and pass^k (all k pass), per run:"]
    for r in pass_at_k(runs, k).iter_rows(named=True):
        lines.append(
            f"  {r['model']} · run {r['run_id']}  k={r['k']}  "
            f"pass@k {fmt.rate_interval(r['pass_at_k'], r['pass_at_k_lo'], r['pass_at_k_hi'])}  "
            f"pass^k {fmt.rate_interval(r['pass_hat_k'], r['pass_hat_k_lo'], r['pass_hat_k_hi'])}  "
            f"(over {r['tasks']} tasks with k or more attempts)"
        )
    return "\n".join(lines)


def report_json(runs: Runs, summaries: pl.DataFrame, categories: pl.DataFrame) -> dict[str, Any]:
    """The report.json document: summaries plus the six tidy tables as row lists.

    Example:
        >>> doc = report_json(Runs.empty(), summary(Runs.empty()), by_category(Runs.empty()))
        >>> doc["format"], sorted(doc["tables"])[:2]
        ('evalnb-report', ['checks', 'llm_calls'])
    """
    return {
        "format": REPORT_FORMAT,
        "version": REPORT_VERSION,
        "generated_at": utc_now(),
        "summary": summaries.to_dicts(),
        "by_category": categories.to_dicts(),
        "tables": {name: getattr(runs, name).to_dicts() for name in TABLES},
    }


def _figures(runs: Runs, prices: Prices | None) -> tuple[pl.DataFrame, pl.DataFrame]:
    """``summary`` and ``by_category``, the summary rows in the runs' order."""
    order = runs.runs.select("run_id").with_row_index("_order")
    summaries = summary(runs, prices=prices).join(order, on="run_id", how="left")
    summaries = summaries.sort("_order").drop("_order")
    return summaries, by_category(runs)


def _unknown(row: dict[str, Any]) -> str:
    """``", N exit code unknown"`` when some tool calls have no recorded exit code.

    Example:
        >>> _unknown({"tool_calls_unknown": 3}), _unknown({"tool_calls_unknown": 0})
        (', 3 exit code unknown', '')
    """
    unknown = row.get("tool_calls_unknown") or 0
    return f", {unknown} exit code unknown" if unknown else ""


def _verdict(task: dict[str, Any]) -> str:
    """PASS, FAIL, or UNSCORED for an attempt without a verdict (null ``passed``, no error).

    Example:
        >>> cases = [(True, None), (None, "x"), (None, None)]
        >>> [_verdict({"passed": p, "error": e}) for p, e in cases]
        ['PASS', 'FAIL', 'UNSCORED']
    """
    if task["passed"] is None and task["error"] is None:
        return "UNSCORED"
    return "PASS" if task["passed"] else "FAIL"


def _passed(row: dict[str, Any], word: str = "") -> str:
    """``passed/total``, over the attempts with a verdict, then ``word``, the unscored
    ones said apart.

    Example:
        >>> _passed({"total_passed": 2, "total_tasks": 5, "unscored_tasks": 2})
        '2/3 (2 unscored: no verdict, outside the pass rate)'
        >>> _passed({"total_passed": 2, "total_tasks": 3, "unscored_tasks": 0}, " passed")
        '2/3 passed'
    """
    unscored = row.get("unscored_tasks") or 0
    text = f"{row['total_passed']}/{row['total_tasks'] - unscored}{word}"
    return text + (f" ({unscored} unscored: no verdict, outside the pass rate)" if unscored else "")


def _category_passed(category: dict[str, Any], word: str = "") -> str:
    """:func:`_passed` of a :func:`~evalnb._analysis.categories.by_category` row.

    Example:
        >>> _category_passed({"passed": 0, "tasks": 10, "unscored_tasks": 10}, " passed")
        '0/0 passed (10 unscored: no verdict, outside the pass rate)'
    """
    return _passed(
        {
            "total_passed": category["passed"],
            "total_tasks": category["tasks"],
            "unscored_tasks": category["unscored_tasks"],
        },
        word,
    )


def _header(row: dict[str, Any]) -> list[tuple[str, str]]:
    """The headline figures of one summary row, labelled as in spec 000's baseline table."""
    ok, err, total = row["tool_calls_ok"], row["tool_calls_error"], row["total_tool_calls"]
    return [
        ("Tasks passed", _passed(row) + _missing(row)),
        ("Tasks (attempts)", f"{row['distinct_tasks']} ({row['total_tasks']})"),
        (
            "Pass rate",
            fmt.rate_interval(row["pass_rate"], row["pass_rate_lo"], row["pass_rate_hi"]),
        ),
        (
            "Overall rate",
            fmt.rate_interval(row["overall_rate"], row["overall_rate_lo"], row["overall_rate_hi"]),
        ),
        (
            "Weighted check score",
            f"{fmt.number(row['total_score'])}/{fmt.number(row['total_max_score'])}",
        ),
        *_layers(row),
        ("Tool calls (ok/err)", f"{total} ({ok}/{err}{_unknown(row)})"),
        (
            "Tool call success",
            fmt.rate_interval(
                row["tool_call_success_rate"],
                row["tool_call_success_rate_lo"],
                row["tool_call_success_rate_hi"],
            ),
        ),
        ("Avg turns/task", fmt.number(row["avg_turns_per_task"], 1)),
        ("Natural stop", fmt.rate(row["natural_stop_rate"])),
        ("Errored tasks", str(row["errored_tasks"])),
        (
            "Tokens (in/out)",
            f"{fmt.tokens(row['total_input_tokens'])}/{fmt.tokens(row['total_output_tokens'])}",
        ),
        ("Duration", fmt.duration(row["total_duration_ms"])),
        ("Cost", _cost(row)),
    ]


def _cost(row: dict[str, Any]) -> str:
    """The run's cost, how much of it the source recorded (the rest priced), and, beside
    a recorded cost, what the price table says for the whole run when that reads
    differently (not for a rounding difference below the cents shown).

    Example:
        >>> _cost({"cost_usd": 1.5, "recorded_cost_usd": 1.0}), _cost({"cost_usd": None})
        ('$1.50 ($1.00 recorded, $0.50 from prices)', 'unknown')
        >>> _cost({"cost_usd": 0.0, "recorded_cost_usd": 0.0, "priced_cost_usd": 0.044})
        '$0.00 recorded (prices: $0.04)'
    """
    total, recorded = row["cost_usd"], row.get("recorded_cost_usd")
    if total is None:
        return "unknown"
    if recorded is None:
        return f"{fmt.cost(total)} (from prices)"
    rest = total - recorded
    priced = row.get("priced_cost_usd")
    beside = (
        f"prices: {fmt.cost(priced)}"
        if priced is not None and fmt.cost(priced) != fmt.cost(total)
        else ""
    )
    if abs(rest) < 5e-10:
        return f"{fmt.cost(total)} recorded" + (f" ({beside})" if beside else "")
    said = f"{fmt.cost(recorded)} recorded, {fmt.cost(rest)} from prices"
    return f"{fmt.cost(total)} ({said}" + (f"; all at {beside}" if beside else "") + ")"


def _missing(row: dict[str, Any]) -> str:
    """ " (N missing)" after a partial or running run's tasks, where N is known."""
    missing = row.get("missing_tasks")
    return f" ({missing} missing)" if _partial_note(row) and missing else ""


def _layers(row: dict[str, Any]) -> list[tuple[str, str]]:
    """Spec 002's layers of a scenario run, each labelled (none for other runs)."""
    if row.get("outcome_pass_rate") is None:
        return []
    out = [
        ("Outcome pass rate", fmt.rate(row["outcome_pass_rate"])),
        ("Gate pass rate (every gate passed)", fmt.rate(row["gate_pass_rate"])),
        ("Gates passed", f"{row['gates_passed']}/{row['gates_total']}"),
        (
            "Mean judge score",
            "no judge score"
            if row["judge_score_mean"] is None
            else f"{fmt.number(row['judge_score_mean'])} ({row['judge_scored']} scored)",
        ),
    ]
    if row["composite_score_mean"] is not None:
        out.append(("Mean composite score (configured)", fmt.number(row["composite_score_mean"])))
    if row.get("judge_cost_usd") is not None:
        out.append(("Judges' cost (not in Cost)", fmt.cost(row["judge_cost_usd"])))
    return out


def _task_score(task: dict[str, Any]) -> str:
    """``score/max``, or for a scenario task its gates and judge score, apart."""
    if task.get("outcome") is None:
        return f"{fmt.number(task['score'])}/{fmt.number(task['max_score'])}"
    judge = task["judge_score"]
    text = f"gates {task['gates_passed']}/{task['gates_total']}"
    return text + (f" · judge {fmt.number(judge)}" if judge is not None else "")


def _label(row: dict[str, Any], name: str = "model") -> str:
    label = str(row.get(name) or row["model"])
    if row.get("guidance"):
        label += f" · {row['guidance']}"
    return label + (" (simulated)" if row.get("simulated") else "")


def _run_line(r: dict[str, Any]) -> str:
    return (
        f"Run `{r['run_id']}` · provider {r['provider']} · source {r['source']} · "
        f"started {r['started_at'] or 'unknown'} · status {r['status']} · "
        f"max turns {r['max_turns'] if r['max_turns'] is not None else 'unknown'}"
    )


def _task_details(runs: Runs, run_id: str) -> list[str]:
    tasks = runs.tasks.filter(pl.col("run_id") == run_id)
    checks = runs.checks.filter(pl.col("run_id") == run_id)
    lines: list[str] = []
    for t in tasks.iter_rows(named=True):
        lines += [
            f"#### {_verdict(t)} {t['task_id']} (epoch {t['epoch']}, {t['category']}): "
            f"{_task_score(t)}",
            "",
            f"Turns {t['turns']} · tool calls {t['tool_call_count']} "
            f"({t['tool_calls_ok']} ok) · natural stop "
            f"{ {True: 'yes', False: 'no', None: 'unknown'}[t['natural_stop']] } · "
            f"{fmt.duration(t['duration_ms'])}",
            "",
        ]
        if t["error"]:
            lines += [f"Error: {_code(_one_line(t['error']))}", ""]
        mine = checks.filter((pl.col("task_id") == t["task_id"]) & (pl.col("epoch") == t["epoch"]))
        lines += [
            f"- {VERDICTS[c['passed']]} [{c['layer']}] {_code(c['check'])} "
            f"(weight {fmt.number(c['weight'])}): {_one_line(c['detail'] or '')}"
            for c in mine.iter_rows(named=True)
        ] or ["- no check verdicts recorded"]
        lines.append("")
    return lines


VERDICTS = {True: "pass", False: "FAIL", None: "not run"}
"""A check's verdict as the report writes it (``None``: not run, see
:func:`evalnb.records.score.not_run`)."""

PARTIAL_MARK = "†"
SIZE_MARK = "‡"


def _paired_section(pairs: pl.DataFrame) -> list[str]:
    """The paired comparisons of :func:`evalnb._analysis.compare.compare_all` as a table."""
    if pairs.height == 0:
        return []
    rows = [
        [
            f"{r['model_a']} ({r['a']}) − {r['model_b']} ({r['b']})",
            r["metric"],
            f"{r['tasks']} (+{r['tasks_only_a']}/+{r['tasks_only_b']} unshared, "
            f"{r['errored_a']}/{r['errored_b']} errored left out)",
            f"{fmt.rate(r['value_a'])} vs {fmt.rate(r['value_b'])}",
            fmt.points(r["diff"]),
            fmt.MISSING
            if r["diff_lo"] is None
            else f"[{fmt.points(r['diff_lo'])}, {fmt.points(r['diff_hi'])}]",
            f"{fmt.p_value(r['p'])} ({r['test']})",
            fmt.p_value(r["p_holm"]),
        ]
        for r in pairs.iter_rows(named=True)
    ]
    header = ["Pair (A − B)", "Metric", "Shared tasks", "A vs B", "A − B", "95% CI", "p", "Holm p"]
    notes = [
        f"- {r['model_a']} ({r['a']}) − {r['model_b']} ({r['b']}): "
        + power_note(r["tasks"], (r["value_a"] + r["value_b"]) / 2, r["detectable"])
        for r in pairs.filter(pl.col("metric") == "pass rate").iter_rows(named=True)
        if r["tasks"] < SMALL_N
    ]
    return [
        "### Paired comparisons",
        "",
        PAIRED_NOTE,
        "",
        *_table(header, rows),
        "",
        *([*notes, ""] if notes else []),
    ]


def _trend(rows: pl.DataFrame) -> list[str]:
    """A trend table for every model family run on several dates (latest run per date).

    Runs are grouped by ``model_family`` (a dated snapshot joins its model). Each
    family has a "tasks" row (the tasks present; a partial run says so, with the
    number missing where known), then its rates. A rate cell is marked
    :data:`PARTIAL_MARK` when its run is partial and :data:`SIZE_MARK` when its run's
    task set size (tasks present + missing) differs from the family's first date, so
    runs of different sizes never share a line unmarked.
    """
    dated = rows.filter(pl.col("date").is_not_null()).with_columns(
        (pl.col("total_tasks") + pl.col("missing_tasks").fill_null(0)).alias("_size")
    )
    per_day = dated.unique(["family", "date"], keep="last", maintain_order=True)
    repeated = per_day.group_by("family").len().filter(pl.col("len") > 1).get_column("family")
    trend = per_day.filter(pl.col("family").is_in(repeated.to_list()))
    if trend.height == 0:
        return []
    dates = sorted(trend.get_column("date").unique().to_list())
    cells = {(r["family"], r["date"]): r for r in trend.iter_rows(named=True)}
    metrics = (
        ("pass rate", "pass_rate"),
        ("overall rate", "overall_rate"),
        ("tool call success", "tool_call_success_rate"),
    )
    body: list[list[str]] = []
    marks: set[str] = set()
    for family in dict.fromkeys(trend.get_column("family").to_list()):
        runs = [cells.get((family, d)) for d in dates]
        first_size = next(r["_size"] for r in runs if r)
        body.append([f"{family} tasks", *(_task_cell(r) if r else fmt.MISSING for r in runs)])
        for name, col in metrics:
            line = [f"{family} {name}"]
            for r in runs:
                if r is None:
                    line.append(fmt.MISSING)
                    continue
                mark = PARTIAL_MARK if _partial_note(r) else ""
                mark += SIZE_MARK if r["_size"] != first_size else ""
                marks.update(mark)
                line.append(fmt.rate(r[col]) + (f" {mark}" if mark else ""))
            body.append(line)
    notes = {
        PARTIAL_MARK: f"{PARTIAL_MARK} partial run: it lacks tasks, so its rates cover only "
        "the tasks present.",
        SIZE_MARK: f"{SIZE_MARK} a different number of tasks than the family's first date: "
        "not the same task set.",
    }
    legend = [notes[m] for m in (PARTIAL_MARK, SIZE_MARK) if m in marks]
    return ["### Trend", "", *_table(["Metric", *dates], body), "", *legend, ""]


def _task_cell(r: dict[str, Any]) -> str:
    note = _partial_note(r)
    return f"{r['total_tasks']}" + (f" ({note})" if note else "")


def _partial_note(r: dict[str, Any]) -> str:
    """ "partial: N missing" for a partial run, "running: N not finished" for a run in
    progress with N attempts to go, else empty (a run whose figures cover every task).
    Marked runs (:data:`PARTIAL_MARK`) are those with a note."""
    missing = r.get("missing_tasks")
    if r["status"] == "running" and missing:
        return f"running: {missing} not finished"
    if r["status"] != "partial":
        return ""
    return "partial: " + (f"{missing} missing" if missing is not None else "number missing unknown")


def _table(header: list[str], rows: list[list[str]]) -> list[str]:
    if not rows:
        return ["(none)"]
    lines = ["| " + " | ".join(map(_cell, header)) + " |", "|" + "---|" * len(header)]
    return lines + ["| " + " | ".join(map(_cell, r)) + " |" for r in rows]


def _cell(text: str) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def _write_atomic(path: Path, text: str) -> None:
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(text if text.endswith("\n") else text + "\n", encoding="utf-8")
    os.replace(tmp, path)


def _one_line(text: str, limit: int = 200) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def _code(text: str) -> str:
    """``text`` as a Markdown code span, fenced with more backticks than it contains."""
    fence = "`"
    while fence in text:
        fence += "`"
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{fence}{pad}{text}{pad}{fence}"
