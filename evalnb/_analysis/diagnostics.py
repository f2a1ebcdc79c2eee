"""Spec 000 "Interpreting Results" as data: healthy profile, friction signals, cross-model patterns.

- :func:`friction`: per run, each "Healthy profile" criterion and each "Friction
  signal" of spec 000, with its value, threshold (a field of
  :class:`evalnb._analysis.thresholds.Thresholds`) and whether it is flagged.
- :func:`diagnose`: spec 000's "Cross-Model Diagnostics" table as a classifier over
  the task x model matrix (or the category x model matrix).
- :func:`failing_commands` and :func:`common_errors`: the commands and normalised
  stderr messages behind the failures, counted per model.

Example:
    >>> normalise_error("cat: /lib/utils.sh: io error at line 3: 'x'")
    'cat: <path>: io error at line <n>: <q>'
"""

from __future__ import annotations

import operator
import statistics
import warnings
from collections import defaultdict
from collections.abc import Callable
from functools import lru_cache, partial
from typing import Any, Literal, NamedTuple

import polars as pl

from evalnb import _display as fmt
from evalnb._analysis.categories import by_category
from evalnb._analysis.interaction import command_rows
from evalnb._analysis.runs import Runs
from evalnb._analysis.summary import summary
from evalnb._analysis.thresholds import DiagnosisThresholds, Thresholds
from evalnb._analysis.verdicts import PASSED
from evalnb._store.tables import KEYS

FISHER_DRAWS = 20_000
"""Seeded Monte Carlo tables of Fisher's exact test with more than two models."""

DIAGNOSES = (
    "tool limitation",
    "all models fail",
    "model capability difference",
    "not enough attempts",
    "reasoning efficiency gap",
    "cost efficiency gap",
    "consistent",
    "single model",
    "tool missing builtins for domain",
)
"""Every value :func:`diagnose` can put in ``diagnosis``."""


class _Signal(NamedTuple):
    kind: str  # "healthy": flagged when the comparison fails; "friction": when it holds
    name: str
    metric: str  # column of _profiles()
    op: str
    limit: str  # Thresholds field; "" = the median over the runs compared
    label: str
    render: Callable[[float | None], str]
    reading: str = ""  # spec 000's reading of a friction signal


_TURNS = partial(fmt.number, digits=1)

_SIGNALS = [
    _Signal("healthy", "overall_rate", "overall_rate", ">", "overall_rate_min", "overall rate",
            fmt.rate),
    _Signal("healthy", "tool_call_success", "tool_call_success_rate", ">",
            "tool_call_success_min", "tool call success rate", fmt.rate),
    _Signal("healthy", "avg_turns", "avg_turns_per_task", "<", "avg_turns_max",
            "avg turns per task", _TURNS),
    _Signal("healthy", "min_category_rate", "min_category_rate", ">=", "category_rate_min",
            "lowest category rate", fmt.rate),
    _Signal("healthy", "natural_stop", "natural_stop_rate", ">", "natural_stop_min",
            "natural stop rate", fmt.rate),
    _Signal("friction", "low_tool_call_success", "tool_call_success_rate", "<",
            "friction_tool_call_success", "tool call success rate", fmt.rate,
            "Bashkit compatibility gaps"),
    _Signal("friction", "weak_category", "min_category_rate", "<", "friction_category_rate",
            "lowest category rate", fmt.rate, "missing builtins or syntax for that domain"),
    _Signal("friction", "many_turns", "avg_turns_per_task", ">", "friction_avg_turns",
            "avg turns per task", _TURNS, "models retrying due to errors"),
    _Signal("friction", "high_tokens_low_pass", "tokens_per_task", ">", "",
            "tokens per task", fmt.tokens, "stuck in retry loops"),
    _Signal("friction", "no_natural_stop", "no_natural_stop_rate", ">",
            "friction_no_natural_stop", "tasks without natural stop", fmt.rate,
            "turn limit reached, model didn't converge"),
]  # fmt: skip
_COMPARE = {">": operator.gt, "<": operator.lt, ">=": operator.ge}
_NEGATED = {">": "<=", "<": ">=", ">=": "<"}
_FRICTION_SCHEMA: dict[str, Any] = {
    "run_id": pl.Utf8,
    "model": pl.Utf8,
    "kind": pl.Utf8,
    "signal": pl.Utf8,
    "value": pl.Float64,
    "threshold": pl.Float64,
    "flagged": pl.Boolean,
    "healthy": pl.Boolean,
    "message": pl.Utf8,
}


def friction(runs: Runs, thresholds: Thresholds | None = None) -> pl.DataFrame:
    """One row per (run, signal): spec 000's healthy-profile criteria and friction signals.

    ``flagged`` is True when a healthy-profile criterion is NOT met or a friction signal
    IS present; ``healthy`` is its negation; both are null when the value is unknown
    (say, a run without tool calls).

    Signals (values from :func:`evalnb._analysis.summary.summary` and
    :func:`~evalnb._analysis.categories.by_category`):

    ====================== ========================================================
    healthy criterion      holds when
    ====================== ========================================================
    overall_rate           overall_rate > overall_rate_min (0.90)
    tool_call_success      tool_call_success_rate > tool_call_success_min (0.80)
    avg_turns              avg_turns_per_task < avg_turns_max (5)
    min_category_rate      lowest category rate >= category_rate_min (0.70)
    natural_stop           natural_stop_rate > natural_stop_min (0.50, "most tasks")
    ====================== ========================================================

    ====================== ========================================================
    friction signal        present when
    ====================== ========================================================
    low_tool_call_success  tool_call_success_rate < friction_tool_call_success (0.75)
    weak_category          lowest category rate < friction_category_rate (0.50)
    many_turns             avg_turns_per_task > friction_avg_turns (7)
    high_tokens_low_pass   tokens per task (input + output) > the median over the
                           runs given (the threshold) and pass_rate <
                           friction_pass_rate (0.50); one run alone is its own median,
                           so it needs other runs to compare with
    no_natural_stop        share of tasks without natural stop >
                           friction_no_natural_stop (0.20)
    ====================== ========================================================

    Parameters
    ----------
    runs : Runs
        The runs, from :func:`evalnb.load`.
    thresholds : Thresholds or None, default None
        The cut-offs (:class:`evalnb.Thresholds`); None: its defaults, the figures in
        brackets above.

    Returns
    -------
    polars.DataFrame
        Columns: run_id, model, kind (``healthy`` / ``friction``), signal, value,
        threshold, flagged, healthy, message; one row per run and signal, the five
        healthy criteria first, in the order of the tables above.

    Raises
    ------
    TypeError
        If an argument is not of its annotated type (say, a dict for ``thresholds``).

    See Also
    --------
    Thresholds : The cut-offs, each one a field to override.
    diagnose : The cross-model diagnostics, per task or category.
    summary : The per-run figures the signals read.

    Examples
    --------
    The flagged signals of two runs: the hasty model misses three healthy criteria and
    shows one friction signal.

    >>> import polars as pl
    >>> from evalnb._examples import example_runs
    >>> friction(example_runs()).filter(pl.col("flagged")).select(
    ...     "run_id", "kind", "signal", pl.col("value").round(3), "threshold")
    shape: (4, 5)
    ┌────────┬──────────┬───────────────────────┬───────┬───────────┐
    │ run_id ┆ kind     ┆ signal                ┆ value ┆ threshold │
    │ ---    ┆ ---      ┆ ---                   ┆ ---   ┆ ---       │
    │ str    ┆ str      ┆ str                   ┆ f64   ┆ f64       │
    ╞════════╪══════════╪═══════════════════════╪═══════╪═══════════╡
    │ hasty  ┆ healthy  ┆ overall_rate          ┆ 0.667 ┆ 0.9       │
    │ hasty  ┆ healthy  ┆ tool_call_success     ┆ 0.684 ┆ 0.8       │
    │ hasty  ┆ healthy  ┆ min_category_rate     ┆ 0.5   ┆ 0.7       │
    │ hasty  ┆ friction ┆ low_tool_call_success ┆ 0.684 ┆ 0.75      │
    └────────┴──────────┴───────────────────────┴───────┴───────────┘

    A stricter cut-off flags the careful model too:

    >>> from evalnb import Thresholds
    >>> friction(example_runs(), Thresholds(avg_turns_max=3)).filter(
    ...     run_id="careful", flagged=True).select("signal", "value", "threshold")
    shape: (1, 3)
    ┌───────────┬───────┬───────────┐
    │ signal    ┆ value ┆ threshold │
    │ ---       ┆ ---   ┆ ---       │
    │ str       ┆ f64   ┆ f64       │
    ╞═══════════╪═══════╪═══════════╡
    │ avg_turns ┆ 4.0   ┆ 3.0       │
    └───────────┴───────┴───────────┘
    """
    limits = thresholds or Thresholds()
    profile = _profiles(runs)
    tokens = profile.get_column("tokens_per_task").drop_nulls().to_list()
    median_tokens = statistics.median(tokens) if tokens else None
    out = []
    for run in profile.iter_rows(named=True):
        for sig in _SIGNALS:
            value = run[sig.metric]
            threshold = getattr(limits, sig.limit) if sig.limit else median_tokens
            holds = None
            if value is not None and threshold is not None:
                holds = _COMPARE[sig.op](value, threshold)
            message = _message(sig, run, value, threshold, holds)
            if sig.name == "high_tokens_low_pass" and holds:
                pass_rate = run["pass_rate"]
                holds = pass_rate is not None and pass_rate < limits.friction_pass_rate
                message += f", pass rate {fmt.rate(pass_rate)}"
            flagged = None if holds is None else holds != (sig.kind == "healthy")
            out.append(
                {
                    "run_id": run["run_id"],
                    "model": run["model"],
                    "kind": sig.kind,
                    "signal": sig.name,
                    "value": value,
                    "threshold": threshold,
                    "flagged": flagged,
                    "healthy": None if flagged is None else not flagged,
                    "message": f"{message}: {sig.reading}" if flagged and sig.reading else message,
                }
            )
    return pl.DataFrame(out, schema=_FRICTION_SCHEMA)


def _message(
    sig: _Signal,
    run: dict[str, Any],
    value: float | None,
    threshold: float | None,
    holds: bool | None,
) -> str:
    """``"label value op threshold"``, e.g. ``"tool call success rate 57.1% < 75.0%"``."""
    if holds is None:
        return f"{sig.label} unknown"
    op = sig.op if holds else _NEGATED[sig.op]
    limit = sig.render(threshold) if sig.limit else f"{sig.render(threshold)} (median of runs)"
    text = f"{sig.label} {sig.render(value)} {op} {limit}"
    if sig.metric == "min_category_rate":
        text += f" ({run['weakest_category']})"
    if sig.kind == "healthy" and not holds:
        text += f"; healthy profile: {sig.op} {sig.render(threshold)}"
    return text


def _profiles(runs: Runs) -> pl.DataFrame:
    """Per run: the figures the signals read."""
    lowest = (
        by_category(runs)
        .filter(pl.col("rate").is_not_null())
        .sort("rate", "category")
        .group_by("run_id", maintain_order=True)
        .agg(
            pl.col("rate").first().alias("min_category_rate"),
            pl.col("category").first().alias("weakest_category"),
        )
    )
    with warnings.catch_warnings():  # summary() warns about unpriced models; cost is unused here
        warnings.simplefilter("ignore", UserWarning)
        totals = summary(runs)
    return totals.join(lowest, on="run_id", how="left").select(
        "run_id",
        "model",
        "overall_rate",
        "pass_rate",
        "tool_call_success_rate",
        "avg_turns_per_task",
        "min_category_rate",
        "weakest_category",
        "natural_stop_rate",
        (1 - pl.col("natural_stop_rate")).alias("no_natural_stop_rate"),
        pl.when(pl.col("total_tasks") > 0)
        .then(
            (pl.col("total_input_tokens") + pl.col("total_output_tokens")) / pl.col("total_tasks")
        )
        .alias("tokens_per_task"),
    )


def diagnose(
    runs: Runs,
    by: Literal["task", "category"] = "task",
    thresholds: DiagnosisThresholds | None = None,
) -> pl.DataFrame:
    """Spec 000's cross-model diagnostics, one row per task (or per category).

    Only the latest run of each model takes part (latest ``started_at``, then the
    greatest ``run_id``). A model passes a task when it passed a strict majority of the
    task's epochs (a tie is a fail). Per task, over the models that ran it:

    ================================ =================================================
    diagnosis                        when
    ================================ =================================================
    single model                     fewer than 2 models ran it (nothing to compare)
    tool limitation                  all models fail and their stderr shares at least
                                     one normalised line (:func:`normalise_error`)
    all models fail                  all fail, no stderr line common to all
    model capability difference      some models pass, others fail, and the attempts
                                     show it: Fisher's exact test of independence of
                                     model and pass/fail over the task's attempts
                                     gives p <= ``capability_alpha`` (two models:
                                     the exact two-sided test; more: the
                                     Fisher-Freeman-Halton test, scipy, by
                                     :data:`FISHER_DRAWS` seeded Monte Carlo tables)
    not enough attempts              some pass, others fail, and the test does not
                                     show it (one attempt each never can; two models
                                     split cleanly need 4 attempts each, 4/4 vs 0/4
                                     giving p = 0.029, where 3/3 vs 0/3 gives 0.1)
    reasoning efficiency gap         all pass; mean tool calls per attempt differ by
                                     more than ``gap_factor`` (max > 2 x min)
    cost efficiency gap              all pass; mean tokens (input + output) per attempt
                                     differ by more than 2x
    consistent                       all pass, similar effort
    ================================ =================================================

    ``by="category"``: one row per category: the category "fails" for a model when
    its rate (score / max_score) is below ``category_fail_rate``; all models fail
    -> "tool missing builtins for domain"; some -> "model capability difference" by
    the task level's rule, Fisher's exact test of model against pass/fail over the
    category's attempts (each model's passed attempts of its attempts there, taken as
    independent) at p <= ``capability_alpha``, else "not enough attempts"; none
    -> "consistent" (fewer than 2 models -> "single model"). ``failed_by`` lists the
    models under the cut-off; evidence gives each model's rate, and for a split the
    test.

    Parameters
    ----------
    runs : Runs
        The runs, from :func:`evalnb.load`; only the latest run of each model is read.
    by : {"task", "category"}, default "task"
        One row per task, or per category.
    thresholds : DiagnosisThresholds or None, default None
        The cut-offs (:class:`evalnb.DiagnosisThresholds`: ``capability_alpha``,
        ``gap_factor``, ``category_fail_rate``); None: its defaults.

    Returns
    -------
    polars.DataFrame
        Columns: task_id, category, models, passed_by, failed_by (lists of model
        names), diagnosis, evidence (list of strings: for a split, the test and each
        model's passes and attempts; the shared stderr lines, then the failing commands
        (as blamed by :func:`failing_commands`) and the failed checks of the failing
        models, each with those models; for the gaps, the differing figures) and
        flaky_for, the models whose attempts at the task disagree (some passed, some
        not: a flaky task). ``by="category"``: category, models, passed_by, failed_by,
        diagnosis and evidence.

    Raises
    ------
    ValueError
        If ``by`` is not one of its choices.
    TypeError
        If an argument is not of its annotated type.

    See Also
    --------
    friction : Each run's healthy profile and friction signals.
    failing_commands : The commands blamed for failing tool calls.
    flaky_tasks : The tasks whose attempts disagree.

    Examples
    --------
    Two models, two epochs each: the hasty model fails two tasks, but two attempts
    each are too few for Fisher's test to call it a capability difference.

    >>> from evalnb._examples import example_runs
    >>> diagnose(example_runs()).select("task_id", "diagnosis", "failed_by", "flaky_for")
    shape: (3, 4)
    ┌────────────────────┬─────────────────────┬───────────────┬───────────────┐
    │ task_id            ┆ diagnosis           ┆ failed_by     ┆ flaky_for     │
    │ ---                ┆ ---                 ┆ ---           ┆ ---           │
    │ str                ┆ str                 ┆ list[str]     ┆ list[str]     │
    ╞════════════════════╪═════════════════════╪═══════════════╪═══════════════╡
    │ smoke_count_words  ┆ not enough attempts ┆ ["sim/hasty"] ┆ ["sim/hasty"] │
    │ smoke_jq_fields    ┆ not enough attempts ┆ ["sim/hasty"] ┆ []            │
    │ smoke_make_project ┆ consistent          ┆ []            ┆ []            │
    └────────────────────┴─────────────────────┴───────────────┴───────────────┘

    Per category, no model falls under the category cut-off:

    >>> diagnose(example_runs(), by="category").select("category", "diagnosis")
    shape: (3, 2)
    ┌─────────────────┬────────────┐
    │ category        ┆ diagnosis  │
    │ ---             ┆ ---        │
    │ str             ┆ str        │
    ╞═════════════════╪════════════╡
    │ file_operations ┆ consistent │
    │ json_processing ┆ consistent │
    │ text_processing ┆ consistent │
    └─────────────────┴────────────┘
    """
    if by not in ("task", "category"):
        raise ValueError(f"by must be 'task' or 'category', got {by!r}")
    limits = thresholds or DiagnosisThresholds()
    latest = _latest_runs(runs)
    if by == "category":
        return _diagnose_categories(latest, limits)
    per_model = (
        latest.tasks.group_by("task_id", "model")
        .agg(
            pl.col("category").first(),
            (PASSED.sum() * 2 > pl.len()).alias("passed"),
            pl.len().alias("attempts"),
            PASSED.sum().alias("passes"),
            pl.col("tool_call_count").mean().alias("tool_calls"),
            (pl.col("total_input_tokens") + pl.col("total_output_tokens")).mean().alias("tokens"),
        )
        .sort("task_id", "model")
    )
    stderr = _grouped_sets(_error_lines(latest), "error")
    blamed = _grouped_sets(_blamed_failures(latest), "command")
    checks = _grouped_sets(latest.checks.filter(~pl.col("passed")), "check")
    out = []
    for (task_id,), group in per_model.group_by("task_id", maintain_order=True):
        rows = group.to_dicts()
        diagnosis, evidence = _classify(task_id, rows, stderr, blamed, checks, limits)
        out.append(
            {
                "task_id": task_id,
                "category": rows[0]["category"],
                "models": [r["model"] for r in rows],
                "passed_by": [r["model"] for r in rows if r["passed"]],
                "failed_by": [r["model"] for r in rows if not r["passed"]],
                "diagnosis": diagnosis,
                "evidence": evidence,
                "flaky_for": [r["model"] for r in rows if 0 < r["passes"] < r["attempts"]],
            }
        )
    schema = {"task_id": pl.Utf8} | _DIAGNOSIS_SCHEMA | {"flaky_for": pl.List(pl.Utf8)}
    return pl.DataFrame(out, schema=schema)


_DIAGNOSIS_SCHEMA: dict[str, Any] = {
    "category": pl.Utf8,
    "models": pl.List(pl.Utf8),
    "passed_by": pl.List(pl.Utf8),
    "failed_by": pl.List(pl.Utf8),
    "diagnosis": pl.Utf8,
    "evidence": pl.List(pl.Utf8),
}


def _latest_runs(runs: Runs) -> Runs:
    latest = (
        runs.runs.sort("started_at", "run_id", nulls_last=False)
        .group_by("model", maintain_order=True)
        .last()
        .get_column("run_id")
    )
    return runs.filter(pl.col("run_id").is_in(latest.to_list()))


def _grouped_sets(frame: pl.DataFrame, column: str) -> dict[tuple[str, str], set[str]]:
    """``{(task_id, model): {values of column}}``."""
    out: dict[tuple[str, str], set[str]] = defaultdict(set)
    for task_id, model, value in frame.select("task_id", "model", column).iter_rows():
        out[task_id, model].add(value)
    return out


def _classify(
    task_id: str,
    rows: list[dict[str, Any]],
    stderr: dict[tuple[str, str], set[str]],
    blamed: dict[tuple[str, str], set[str]],
    checks: dict[tuple[str, str], set[str]],
    limits: DiagnosisThresholds,
) -> tuple[str, list[str]]:
    if len(rows) < 2:
        return "single model", []
    failed = [r["model"] for r in rows if not r["passed"]]
    why = _evidence("failing command", task_id, failed, blamed) + _evidence(
        "failed check", task_id, failed, checks
    )
    if len(failed) == len(rows):
        shared = set.intersection(*(stderr.get((task_id, m), set()) for m in failed))
        if shared:
            return "tool limitation", [f"stderr: {line}" for line in sorted(shared)] + why
        return "all models fail", why
    if failed:
        diagnosis, test = _split(rows, limits.capability_alpha)
        return diagnosis, test + why
    for metric, diagnosis, render in (
        ("tool_calls", "reasoning efficiency gap", fmt.number),
        ("tokens", "cost efficiency gap", fmt.tokens),
    ):
        values = [r[metric] for r in rows]
        if None not in values and max(values) > limits.gap_factor * min(values):
            shown = ", ".join(f"{r['model']} {render(r[metric])}" for r in rows)
            return diagnosis, [f"{metric.replace('_', ' ')} per attempt: {shown}"]
    return "consistent", []


def _split(rows: list[dict[str, Any]], alpha: float) -> tuple[str, list[str]]:
    """Some models pass, others fail: a capability difference only when the attempts
    show it (Fisher's p at most ``alpha``), else "not enough attempts"; with the evidence."""
    p = _fisher_p(tuple((r["passes"], r["attempts"] - r["passes"]) for r in rows))
    shares = ", ".join(f"{r['model']} {r['passes']}/{r['attempts']}" for r in rows)
    line = f"passed attempts: {shares}; Fisher exact p = {fmt.p_value(p)} across {len(rows)} models"
    shown = p <= alpha
    return ("model capability difference" if shown else "not enough attempts"), [line]


@lru_cache(maxsize=4096)
def _fisher_p(table: tuple[tuple[int, int], ...]) -> float:
    """Fisher's exact p of a models x (passed, failed) table: exact for two models, else
    from :data:`FISHER_DRAWS` Monte Carlo tables seeded alike, so that a table's p is the
    same wherever it occurs (and is computed once: many tasks share a table)."""
    import numpy as np  # scipy and numpy load only when models are compared
    from scipy.stats import MonteCarloMethod, fisher_exact

    if len(table) == 2:
        result = fisher_exact(table)  # exact
    else:
        draws = MonteCarloMethod(n_resamples=FISHER_DRAWS, rng=np.random.default_rng(0))
        result = fisher_exact(table, method=draws)
    return float(np.ravel(result.pvalue)[0])  # scipy gives some tables' p as a 1-element array


def _evidence(
    what: str, task_id: str, failed: list[str], found: dict[tuple[str, str], set[str]]
) -> list[str]:
    """``"what: item (models)"`` for the items found in the failing models' attempts."""
    models_of: dict[str, list[str]] = defaultdict(list)
    for model in failed:
        for item in found.get((task_id, model), ()):
            models_of[item].append(model)
    ordered = sorted(models_of.items(), key=lambda kv: (-len(kv[1]), kv[0]))
    return [f"{what}: {item} ({', '.join(sorted(ms))})" for item, ms in ordered]


def _diagnose_categories(latest: Runs, limits: DiagnosisThresholds) -> pl.DataFrame:
    out = []
    rates = (
        by_category(latest)
        .filter(pl.col("rate").is_not_null())
        .rename({"tasks": "attempts"})  # spec 000's count of a category's tasks: attempts
        .sort("category", "model")
    )
    for (category,), group in rates.group_by("category", maintain_order=True):
        rows = group.select("model", "rate").rows()
        failed = [m for m, rate in rows if rate < limits.category_fail_rate]
        evidence = [f"{m}: rate {fmt.rate(rate)}" for m, rate in rows]
        if len(rows) < 2:
            diagnosis = "single model"
        elif len(failed) == len(rows):
            diagnosis = "tool missing builtins for domain"
        elif failed:
            attempts = group.select("model", pl.col("passed").alias("passes"), "attempts")
            diagnosis, test = _split(attempts.to_dicts(), limits.capability_alpha)
            evidence += test
        else:
            diagnosis = "consistent"
        out.append(
            {
                "category": category,
                "models": [m for m, _ in rows],
                "passed_by": [m for m, _ in rows if m not in failed],
                "failed_by": failed,
                "diagnosis": diagnosis,
                "evidence": evidence,
            }
        )
    return pl.DataFrame(out, schema=_DIAGNOSIS_SCHEMA)


def failing_commands(runs: Runs, top: int = 20) -> pl.DataFrame:
    """The commands most often blamed for failing tool calls, counted per model.

    A failing tool call (exit code not 0) is blamed on each of its simple commands
    (:func:`evalnb._analysis.interaction.command_rows`, bash mode) whose name the call's stderr
    mentions as ``name:`` (``awk: unexpected character``, ``bash: python3: command not
    found``), or, when it names none of them, on its last simple command. Counts are
    failing calls.

    Parameters
    ----------
    runs : Runs
        The runs, from :func:`evalnb.load`.
    top : int, default 20
        How many commands to keep: the most frequent, ties by name.

    Returns
    -------
    polars.DataFrame
        Columns: command (the simple command's name), failures (all models), then one
        column per model (only the columns ``command`` and ``failures`` when no call
        failed).

    Raises
    ------
    TypeError
        If an argument is not of its annotated type.

    See Also
    --------
    common_errors : The most frequent stderr lines, per model.
    command_rows : Every target command with its exit code.

    Examples
    --------
    The careful model's calls never fail; the hasty model's typos do:

    >>> from evalnb._examples import example_runs
    >>> failing_commands(example_runs())
    shape: (3, 3)
    ┌─────────┬──────────┬───────────┐
    │ command ┆ failures ┆ sim/hasty │
    │ ---     ┆ ---      ┆ ---       │
    │ str     ┆ i64      ┆ i64       │
    ╞═════════╪══════════╪═══════════╡
    │ wcc     ┆ 3        ┆ 3         │
    │ jq      ┆ 2        ┆ 2         │
    │ ecoh    ┆ 1        ┆ 1         │
    └─────────┴──────────┴───────────┘
    """
    counts = _blamed_failures(runs).group_by("command", "model").agg(pl.len().alias("n"))
    return _top_per_model(counts, "command", "failures", top)


def common_errors(runs: Runs, top: int = 20) -> pl.DataFrame:
    """The most frequent normalised stderr lines (:func:`normalise_error`), per model.

    Counts are tool calls whose stderr holds the line (a line repeated within one
    call counts once), over all calls, failing or not.

    Parameters
    ----------
    runs : Runs
        The runs, from :func:`evalnb.load`.
    top : int, default 20
        How many lines to keep: the most frequent, ties by text.

    Returns
    -------
    polars.DataFrame
        Columns: error (the normalised line), calls (all models), one column per
        model, example (one original line).

    Raises
    ------
    TypeError
        If an argument is not of its annotated type.

    See Also
    --------
    failing_commands : The commands blamed for failing tool calls.
    diagnose : Cites the stderr lines all failing models share.

    Examples
    --------
    >>> from evalnb._examples import example_runs
    >>> common_errors(example_runs(), top=2).select("error", "calls", "sim/hasty")
    shape: (2, 3)
    ┌─────────────────────────────────┬───────┬───────────┐
    │ error                           ┆ calls ┆ sim/hasty │
    │ ---                             ┆ ---   ┆ ---       │
    │ str                             ┆ i64   ┆ i64       │
    ╞═════════════════════════════════╪═══════╪═══════════╡
    │ bash: line <n>: wcc: command n… ┆ 3     ┆ 3         │
    │ jq: error: could not open file… ┆ 2     ┆ 2         │
    └─────────────────────────────────┴───────┴───────────┘
    >>> common_errors(example_runs()).get_column("example")[0]
    'bash: line 1: wcc: command not found. Did you mean: wc?'
    """
    lines = _error_lines(runs)
    counts = lines.group_by("error", "model").agg(pl.len().alias("n"))
    examples = lines.group_by("error").agg(pl.col("raw").sort().first().alias("example"))
    return _top_per_model(counts, "error", "calls", top).join(
        examples, on="error", how="left", maintain_order="left"
    )


def normalise_error(line: str) -> str:
    """A stderr line with case, quoted text, paths and numbers taken out, for grouping.

    Lowercased; ``'...'``/``"..."`` become ``<q>``, paths (words with a ``/``)
    ``<path>``, numbers ``<n>``; whitespace collapsed.

    Example:
        >>> normalise_error('Parse error at line 37, column 10: expected "fi"')
        'parse error at line <n>, column <n>: expected <q>'
    """
    return str(pl.select(_normalised(pl.lit(line))).item())


def _normalised(expr: pl.Expr) -> pl.Expr:
    return (
        expr.str.to_lowercase()
        .str.replace_all(r"'[^']*'|\"[^\"]*\"", "<q>")
        .str.replace_all(r"(?:[\w.~-]*/)+[\w.-]*", "<path>")
        .str.replace_all(r"\b\d+(?:\.\d+)?\b", "<n>")
        .str.replace_all(r"\s+", " ")
        .str.strip_chars()
    )


def _error_lines(runs: Runs) -> pl.DataFrame:
    """One row per (tool call, distinct normalised stderr line): keys, call_index, error, raw."""
    return (
        runs.tool_calls.select(*KEYS, "call_index", raw=pl.col("stderr").str.split("\n"))
        .explode("raw")
        .with_columns(error=_normalised(pl.col("raw")))
        .filter(pl.col("error").is_not_null() & (pl.col("error") != ""))
        .unique([*KEYS, "call_index", "error"], maintain_order=True)
    )


def _blamed_failures(runs: Runs) -> pl.DataFrame:
    """One row per (failing tool call, blamed command name); see :func:`failing_commands`."""
    call = [*KEYS, "call_index"]
    failing = command_rows(runs).filter("failed").select(*call, "command_index", "subcommand")
    stderr = runs.tool_calls.select(*call, "stderr")
    haystack = pl.lit(" ") + pl.col("stderr").fill_null("").str.replace_all(r"\s", " ")
    named = haystack.str.contains(pl.lit(" ") + pl.col("subcommand") + pl.lit(":"), literal=True)
    return (
        failing.join(stderr, on=call, how="left", nulls_equal=True)
        .with_columns(named=named)
        .with_columns(
            blamed=pl.col("named")
            | (
                ~pl.col("named").any().over(call)
                & (pl.col("command_index") == pl.col("command_index").max().over(call))
            )
        )
        .filter("blamed")
        .select(*call, command="subcommand")
        .unique(maintain_order=True)
    )


def _top_per_model(counts: pl.DataFrame, key: str, total: str, top: int) -> pl.DataFrame:
    """Wide table: key, total, one count column per model (0 where none); top rows."""
    totals = counts.group_by(key).agg(pl.col("n").sum().cast(pl.Int64).alias(total))
    if counts.is_empty():
        return totals
    wide = counts.pivot(on="model", index=key, values="n", sort_columns=True)
    models = [c for c in wide.columns if c != key]
    return (
        totals.join(wide, on=key)
        .with_columns(pl.col(models).fill_null(0).cast(pl.Int64))
        .sort([total, key], descending=[True, False])
        .head(top)
    )
