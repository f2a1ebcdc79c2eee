"""Sentences that interpret the data a notebook shows, computed from the runs.

Each function returns Markdown for one notebook section (display it with
``IPython.display.Markdown``): the figures are recomputed here, never written by
hand, so the text stays true when the notebook runs on other results. Models are
named by their group (:mod:`evalnb._present.groups`: seeds and repeated runs pooled).

Example:
    >>> from evalnb._analysis.runs import Runs
    >>> overview(Runs.empty())
    'No runs to describe.'
"""

from __future__ import annotations

import polars as pl

from evalnb import _display as fmt
from evalnb._analysis import diagnostics
from evalnb._analysis.categories import by_category
from evalnb._analysis.compare import compare
from evalnb._analysis.guidance import compare_guidance
from evalnb._analysis.runs import Runs
from evalnb._analysis.summary import summary
from evalnb._present import groups


def suite_line(runs: Runs, everything: Runs) -> str:
    """Which runs a notebook analyses, and how many of the loaded runs it leaves to others.

    Example:
        >>> suite_line(Runs.empty(), Runs.empty())
        'No runs to analyse.'
    """
    if runs.runs.height == 0:
        return "No runs to analyse."
    datasets = ", ".join(sorted(str(d) for d in runs.runs.get_column("dataset").unique()))
    n_groups = groups.group_labels(runs).get_column("group").n_unique()
    line = (
        f"This notebook analyses {runs.runs.height} run(s) of dataset **{datasets}** "
        f"({n_groups} model group(s), seeds and repeated runs pooled)."
    )
    left = everything.runs.height - runs.runs.height
    if left:
        line += f" The other {left} loaded run(s) belong to another suite and are left out."
    return line


def overview(runs: Runs) -> str:
    """Each model's pass rate with its interval and weakest category, then who leads.

    Example:
        >>> overview(Runs.empty())
        'No runs to describe.'
    """
    if runs.runs.height == 0:
        return "No runs to describe."
    pooled = groups.pooled(runs)
    s = summary(pooled).sort("pass_rate", descending=True, nulls_last=True)
    cats = by_category(pooled).sort("pass_rate", "tasks", descending=[False, True])
    lines = []
    for row in s.iter_rows(named=True):
        weakest = cats.filter(run_id=row["run_id"]).head(1)
        line = (
            f"- **{row['run_id']}** passed {row['total_passed']} of {row['total_tasks']} "
            "task attempts: "
            f"{fmt.rate_interval(row['pass_rate'], row['pass_rate_lo'], row['pass_rate_hi'])}"
        )
        if weakest.height and cats.get_column("category").n_unique() > 1:
            w = weakest.row(0, named=True)
            line += (
                f"; its weakest category is {w['category']} at {fmt.rate(w['pass_rate'])}"
                f" ({w['passed']}/{w['tasks']})"
            )
        lines.append(line + ".")
    if s.height > 1:
        ids = s.get_column("run_id")
        lines.append("\n" + _lead(pooled, ids[0], ids[1]))
    return "\n".join(lines)


def _lead(pooled: Runs, best: str, second: str) -> str:
    """Who has the highest pass rate, and what the paired test on shared tasks says of it.

    The test is :func:`evalnb._analysis.compare.compare` (exact McNemar, or sign-flip
    with epochs); "ahead" is said only when it gives p <= 0.05 in the leader's favour.
    """
    head = f"**{best}** has the highest pass rate"
    try:
        c = compare(pooled, best, second)
    except ValueError:
        return f"{head}; it shares no task with **{second}**, so no paired test compares them."
    verdict = (
        f"on the {c.tasks} tasks both ran, the paired {c.test} test gives p = {fmt.p_value(c.p)}"
    )
    if c.p <= 0.05 and c.diff > 0:
        return f"{head}; {verdict}, so it is ahead of **{second}** on these tasks."
    return (
        f"{head}; {verdict}, so these tasks do not show it is better than **{second}**"
        " (notebook 04 compares any two runs)."
    )


def cross_model(runs: Runs) -> str:
    """How many tasks each spec 000 diagnosis covers, naming the tasks every model failed
    and the flaky ones (a model's attempts at the task disagree: ``flaky_for``).

    Example:
        >>> cross_model(Runs.empty())
        'No tasks to diagnose.'
    """
    diagnosed = diagnostics.diagnose(runs)
    if diagnosed.height == 0:
        return "No tasks to diagnose."
    counts = diagnosed.group_by("diagnosis").len().sort("len", descending=True)
    parts = [f"{n} {d}" for d, n in counts.iter_rows()]
    text = f"Of {diagnosed.height} tasks: " + ", ".join(parts) + "."
    all_fail = diagnosed.filter(pl.col("passed_by").list.len() == 0)
    if diagnosed.get_column("models").list.len().max() == 1:
        text += " Only one model ran these tasks, so no task can be told apart by model."
    elif all_fail.height:
        names = ", ".join(all_fail.get_column("task_id").head(8).to_list())
        more = " …" if all_fail.height > 8 else ""
        text += (
            f" {all_fail.height} task(s) failed for every model ({names}{more}): "
            "look at the tool or the task before blaming a model."
        )
    flaky = diagnosed.filter(pl.col("flaky_for").list.len() > 0)
    if flaky.height:
        named = [
            f"{task_id} ({', '.join(models)})"
            for task_id, models in flaky.select("task_id", "flaky_for").head(8).iter_rows()
        ]
        more = " …" if flaky.height > 8 else ""
        text += (
            f" {flaky.height} task(s) were flaky, a model's attempts there disagreeing: "
            f"{'; '.join(named)}{more}."
        )
    return text


def guidance(runs: Runs) -> str:
    """Per model, how the error rate, first-try success and help-seeking moved between versions.

    Example:
        >>> guidance(Runs.empty())
        'No runs with a guidance version.'
    """
    summary = compare_guidance(runs).summary.filter(pl.col("guidance").is_not_null())
    if summary.height == 0:
        return "No runs with a guidance version."
    lines = []
    for (model,), part in summary.sort("guidance").group_by("model", maintain_order=True):
        if part.height < 2:
            lines.append(f"- **{model}** ran one guidance version only: nothing to compare.")
            continue
        a, b = part.row(0, named=True), part.row(-1, named=True)
        lines.append(
            f"- **{model}**, {a['guidance']} → {b['guidance']}: error rate "
            f"{fmt.rate(a['error_rate'])} → {fmt.rate(b['error_rate'])}, first-try success "
            f"{fmt.rate(a['first_try_success_rate'])} → {fmt.rate(b['first_try_success_rate'])}, "
            f"--help per attempt {fmt.number(a['help_per_attempt'])} → "
            f"{fmt.number(b['help_per_attempt'])}, "
            f"pass rate {fmt.rate(a['pass_rate'])} → {fmt.rate(b['pass_rate'])} "
            f"({b['tasks']} tasks)."
        )
    return "\n".join(lines)


def trend(runs: Runs) -> str:
    """Which models ran one dataset at several dates, and how their pass rate moved.

    Example:
        >>> trend(Runs.empty())
        'No model ran the same dataset (and guidance) at several dates: there is no trend to draw.'
    """
    s = (
        summary(runs)
        .join(runs.runs.select("run_id", "dataset"), on="run_id")
        .filter(pl.col("started_at").is_not_null())
        .sort("started_at")
    )
    series = s.group_by("model", "dataset", "guidance", maintain_order=True).agg(
        pl.col("started_at"), pl.col("pass_rate")
    )
    series = series.filter(pl.col("started_at").list.len() > 1)
    if series.height == 0:
        return (
            "No model ran the same dataset (and guidance) at several dates: "
            "there is no trend to draw."
        )
    lines = []
    for row in series.iter_rows(named=True):
        rates = " → ".join(fmt.rate(v) for v in row["pass_rate"])
        lines.append(
            f"- **{row['model']}** on {row['dataset']}: {len(row['pass_rate'])} runs from "
            f"{row['started_at'][0][:10]} to {row['started_at'][-1][:10]}, pass rate {rates}."
        )
    return "\n".join(lines)
