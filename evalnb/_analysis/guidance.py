"""Compare guidance versions (AGENTS.md v1 vs v2) on spec 002's interaction metrics.

Runs made with ``--guidance NAME=FILE`` carry the version name in the ``guidance``
column of ``runs`` and ``tasks``. :func:`compare_guidance` puts the versions side by
side, pairs them on the scenarios they share, and flags spec 002's diagnostic
patterns.

Metrics (per attempt from :func:`evalnb._analysis.interaction.interaction`, then summed over
the attempts of a group and the rates recomputed from the sums):

- ``pass_rate``: attempts that passed / attempts, as in the run's summary: a scenario
  attempt passes by spec 002's outcome, and an attempt that errored never passes.
- ``completion_rate``, ``error_rate``, ``retry_rate``, ``first_try_success_rate``,
  ``iteration_ratio`` (spec 002, as :mod:`evalnb._analysis.interaction` defines them),
  ``help_per_attempt`` (help invocations / attempts) and ``commands_per_attempt``.

The command pattern is ``pattern`` when given, else each task's own
``command_pattern`` column (scenario runs record it), else every command (bash mode).

Paired differences: for each model and each pair of versions ``(a, b)`` (in order of
first appearance), the tasks both versions ran are paired; the per-task metric
(over that task's epochs) gives ``diff = mean(b - a)`` with the sign-flip test's
p-value, exact for up to 16 differing tasks, and a paired t 95% interval from 10 shared
tasks on (null below)
(:func:`evalnb._analysis.stats.paired_mean_diff`). A task whose metric is null in either
version (no target commands) is left out of that metric's pairs. Several metrics and
pairs are tested at once, so ``p_holm`` gives Holm's adjustment over every p-value of
the table; read significance from it.

Diagnostic patterns (spec 002), per model and version, thresholds the fields of
:class:`evalnb._analysis.thresholds.GuidanceThresholds`:

======================  ==========================================================
pattern                 flagged when
======================  ==========================================================
``high_error_low_help``  error_rate >= ``error_rate`` and help_per_attempt < ``help``
``high_error_high_help`` error_rate >= ``error_rate`` and help_per_attempt >= ``help``
``low_error_high_help``  error_rate < ``error_rate`` and help_per_attempt >= ``help``
``retry_on_commands``    a subcommand run at least ``retry_min_commands`` times has
                         retry_rate >= ``retry_rate``
``long_path_completed``  a task's completed attempts average at least
                         ``command_ratio`` x the fewest commands any completed attempt
                         of that task used (any model, any version)
======================  ==========================================================

Example:
    >>> from evalnb._analysis.runs import Runs
    >>> compare_guidance(Runs.empty()).summary.height
    0
"""

from __future__ import annotations

from dataclasses import dataclass

import polars as pl

from evalnb import _display as fmt
from evalnb._analysis.interaction import command_rows, interaction
from evalnb._analysis.runs import Runs
from evalnb._analysis.stats import holm, paired_mean_diff
from evalnb._analysis.thresholds import GuidanceThresholds
from evalnb._analysis.verdicts import PASSED
from evalnb._store.tables import KEYS, TABLES

CAUSES: dict[str, str] = {
    "high_error_low_help": "The LLM thinks it knows the syntax but doesn't: "
    "the docs may have incorrect examples.",
    "high_error_high_help": "--help output isn't sufficient: "
    "missing examples or unclear argument descriptions.",
    "low_error_high_help": "The docs don't include enough up front, but --help is good: "
    "add more examples to AGENTS.md.",
    "retry_on_commands": "These commands' error messages don't help the LLM correct its approach.",
    "long_path_completed": "The docs describe the commands but not the workflow: "
    'add a "common workflows" section.',
}
"""Spec 002's likely cause for each diagnostic pattern."""

METRICS = [
    "pass_rate",
    "completion_rate",
    "error_rate",
    "retry_rate",
    "first_try_success_rate",
    "iteration_ratio",
    "help_per_attempt",
    "commands_per_attempt",
]
"""The side-by-side and paired metrics, in output order."""

NO_GUIDANCE = "(none)"
"""The version label of runs made without guidance."""


@dataclass
class GuidanceComparison:
    """The result of :func:`compare_guidance`: four polars frames.

    - ``summary``: one row per (model, guidance): attempts, tasks and :data:`METRICS`.
    - ``per_task``: one row per (model, guidance, task_id): the same metrics.
    - ``paired``: one row per (model, version_a, version_b, metric): n_shared,
      mean_a, mean_b, diff (b - a), diff_lo, diff_hi, p_value, p_holm.
    - ``diagnosis``: one row per (model, guidance, pattern): flagged, cause, evidence.
    """

    summary: pl.DataFrame
    per_task: pl.DataFrame
    paired: pl.DataFrame
    diagnosis: pl.DataFrame


def compare_guidance(
    runs: Runs,
    pattern: str | None = None,
    thresholds: GuidanceThresholds | None = None,
) -> GuidanceComparison:
    """Guidance versions side by side, paired on shared tasks, with diagnostic patterns.

    The metrics, the pairing and the patterns are defined in the module docstring.

    Parameters
    ----------
    runs : Runs
        The runs, from :func:`evalnb.load`: runs made with ``--guidance NAME=FILE``
        carry the version name in their ``guidance`` column (runs without guidance are
        the version ``"(none)"``).
    pattern : str or None, default None
        The command pattern (a regex, Rust dialect, as for :func:`interaction`). None:
        each task's own ``command_pattern`` column (scenario runs record it), else every
        command (bash mode).
    thresholds : GuidanceThresholds or None, default None
        Where "high" starts for each pattern (:class:`evalnb.GuidanceThresholds`);
        None: its defaults.

    Returns
    -------
    GuidanceComparison
        Four polars frames: ``summary``, one row per (model, guidance): attempts, tasks
        and the metrics (pass_rate, completion_rate, error_rate, retry_rate,
        first_try_success_rate, iteration_ratio, help_per_attempt,
        commands_per_attempt); ``per_task``, one row per (model, guidance, task_id):
        the same metrics; ``paired``, one row per (model, version_a, version_b,
        metric): n_shared, mean_a, mean_b, diff (b - a), diff_lo, diff_hi, p_value,
        p_holm; ``diagnosis``, one row per (model, guidance, pattern): flagged, cause,
        evidence.

    Raises
    ------
    ValueError
        If ``pattern`` is not a valid regex of the Rust dialect, naming the argument.
    TypeError
        If an argument is not of its annotated type.

    See Also
    --------
    interaction : The per-attempt metrics it aggregates.
    GuidanceThresholds : The patterns' cut-offs.

    Examples
    --------
    The notes scenarios under ``AGENTS.md`` v1 and v2: with v2 the agent errs less,
    needs no ``--help`` and takes fewer commands.

    >>> import polars as pl
    >>> from evalnb._examples import example_guidance_runs
    >>> result = compare_guidance(example_guidance_runs())
    >>> result.summary.sort("guidance").select("guidance", "attempts",
    ...     pl.col("error_rate", "help_per_attempt", "commands_per_attempt").round(3))
    shape: (2, 5)
    ┌──────────┬──────────┬────────────┬──────────────────┬──────────────────────┐
    │ guidance ┆ attempts ┆ error_rate ┆ help_per_attempt ┆ commands_per_attempt │
    │ ---      ┆ ---      ┆ ---        ┆ ---              ┆ ---                  │
    │ str      ┆ i64      ┆ f64        ┆ f64              ┆ f64                  │
    ╞══════════╪══════════╪════════════╪══════════════════╪══════════════════════╡
    │ v1       ┆ 6        ┆ 0.175      ┆ 1.0              ┆ 6.667                │
    │ v2       ┆ 6        ┆ 0.037      ┆ 0.0              ┆ 4.5                  │
    └──────────┴──────────┴────────────┴──────────────────┴──────────────────────┘

    Paired on the 6 shared tasks (too few for a t interval): after Holm's adjustment
    over the 8 metrics, 6 tasks cannot make a difference significant.

    >>> result.paired.filter(pl.col("metric").is_in(["error_rate", "help_per_attempt"])).select(
    ...     "version_a", "version_b", "metric", "n_shared", pl.col("diff", "p_holm").round(3))
    shape: (2, 6)
    ┌───────────┬───────────┬──────────────────┬──────────┬────────┬────────┐
    │ version_a ┆ version_b ┆ metric           ┆ n_shared ┆ diff   ┆ p_holm │
    │ ---       ┆ ---       ┆ ---              ┆ ---      ┆ ---    ┆ ---    │
    │ str       ┆ str       ┆ str              ┆ i64      ┆ f64    ┆ f64    │
    ╞═══════════╪═══════════╪══════════════════╪══════════╪════════╪════════╡
    │ v1        ┆ v2        ┆ error_rate       ┆ 6        ┆ -0.134 ┆ 0.25   │
    │ v1        ┆ v2        ┆ help_per_attempt ┆ 6        ┆ -1.0   ┆ 0.25   │
    └───────────┴───────────┴──────────────────┴──────────┴────────┴────────┘

    v1 shows spec 002's "low error, high help" pattern:

    >>> result.diagnosis.filter(pl.col("flagged")).select("guidance", "pattern", "evidence").rows()
    [('v1', 'low_error_high_help', 'error_rate 17.5%, help_per_attempt 1')]
    """
    limits = thresholds or GuidanceThresholds()
    attempts, commands = _attempts(runs, pattern)
    summary = _aggregate(attempts, ["model", "guidance"])
    per_task = _aggregate(attempts, ["model", "guidance", "task_id"])
    return GuidanceComparison(
        summary=summary,
        per_task=per_task,
        paired=_paired(per_task),
        diagnosis=_diagnose(summary, attempts, commands, limits),
    )


def _attempts(runs: Runs, pattern: str | None) -> tuple[pl.DataFrame, pl.DataFrame]:
    """Per-attempt interaction metrics (with guidance and passed) and the command rows."""
    tasks = runs.tasks
    if pattern is not None or "command_pattern" not in tasks.columns or tasks.height == 0:
        groups = [(pattern, runs)]  # (no tasks: one empty group, not an empty concat)
    else:
        groups = [
            (
                p,
                _subset(runs, tasks.filter(pl.col("command_pattern").eq_missing(p))),
            )
            for p in tasks.get_column("command_pattern").unique(maintain_order=True)
        ]
    metrics = pl.concat([interaction(sub, p) for p, sub in groups], how="vertical_relaxed")
    rows = pl.concat([command_rows(sub, p) for p, sub in groups], how="vertical_relaxed")
    info = tasks.select(*KEYS, pl.col("guidance").fill_null(NO_GUIDANCE), PASSED.alias("passed"))
    attempts = metrics.join(info, on=KEYS, how="left", nulls_equal=True)
    rows = rows.join(info.select(*KEYS, "guidance"), on=KEYS, how="left", nulls_equal=True)
    return attempts, rows


def _subset(runs: Runs, keys: pl.DataFrame) -> Runs:
    keys = keys.select(KEYS).unique()
    return Runs(
        runs=runs.runs.filter(pl.col("run_id").is_in(keys.get_column("run_id").implode())),
        **{
            name: getattr(runs, name).join(keys, on=KEYS, how="semi", nulls_equal=True)
            for name in TABLES[1:]
        },
    )


def _aggregate(attempts: pl.DataFrame, by: list[str]) -> pl.DataFrame:
    total = pl.col("total_commands")

    def rate(numerator: pl.Expr) -> pl.Expr:
        return pl.when(total > 0).then(numerator / total)

    grouped = attempts.group_by(by, maintain_order=True).agg(
        pl.len().cast(pl.Int64).alias("attempts"),
        pl.col("task_id").n_unique().cast(pl.Int64).alias("tasks"),
        pl.col("passed").mean().alias("pass_rate"),
        pl.col("completed").mean().alias("completion_rate"),
        *[
            pl.col(c).sum().cast(pl.Int64)
            for c in (
                "total_commands",
                "unique_commands",
                "error_count",
                "help_invocations",
                "first_try_successes",
            )
        ],
    )
    return grouped.with_columns(
        error_rate=rate(pl.col("error_count")),
        retry_rate=rate(total - pl.col("unique_commands")),
        first_try_success_rate=rate(pl.col("first_try_successes")),
        iteration_ratio=rate(pl.col("unique_commands")),
        help_per_attempt=pl.col("help_invocations") / pl.col("attempts"),
        commands_per_attempt=total / pl.col("attempts"),
    ).select(*by, "attempts", "tasks", *METRICS)


def _paired(per_task: pl.DataFrame) -> pl.DataFrame:
    schema = {
        "model": pl.Utf8,
        "version_a": pl.Utf8,
        "version_b": pl.Utf8,
        "metric": pl.Utf8,
        "n_shared": pl.Int64,
        "mean_a": pl.Float64,
        "mean_b": pl.Float64,
        "diff": pl.Float64,
        "diff_lo": pl.Float64,
        "diff_hi": pl.Float64,
        "p_value": pl.Float64,
        "p_holm": pl.Float64,
    }
    out = []
    for model in per_task.get_column("model").unique(maintain_order=True):
        mine = per_task.filter(pl.col("model") == model)
        versions = mine.get_column("guidance").unique(maintain_order=True).to_list()
        for i, a in enumerate(versions):
            for b in versions[i + 1 :]:
                pairs = mine.filter(pl.col("guidance") == a).join(
                    mine.filter(pl.col("guidance") == b), on="task_id", suffix="_b"
                )
                for metric in METRICS:
                    both = pairs.select(metric, f"{metric}_b").drop_nulls()
                    x, y = both.get_column(f"{metric}_b"), both.get_column(metric)
                    diff, lo, hi, p = paired_mean_diff(x.to_numpy(), y.to_numpy())
                    out.append(
                        {
                            "model": model,
                            "version_a": a,
                            "version_b": b,
                            "metric": metric,
                            "n_shared": both.height,
                            "mean_a": y.mean(),
                            "mean_b": x.mean(),
                            "diff": diff,
                            "diff_lo": lo,
                            "diff_hi": hi,
                            "p_value": p,
                        }
                    )
    adjusted = holm([row["p_value"] for row in out])
    return pl.DataFrame(
        [row | {"p_holm": q} for row, q in zip(out, adjusted, strict=True)], schema=schema
    )


def _diagnose(
    summary: pl.DataFrame,
    attempts: pl.DataFrame,
    commands: pl.DataFrame,
    limits: GuidanceThresholds,
) -> pl.DataFrame:
    retries = _retry_subcommands(commands, limits)
    long_paths = _long_paths(attempts, limits.command_ratio)
    out = []
    for row in summary.iter_rows(named=True):
        key = (row["model"], row["guidance"])
        err, helps = row["error_rate"], row["help_per_attempt"]
        high_err = err is not None and err >= limits.error_rate
        low_err = err is not None and err < limits.error_rate
        high_help = helps >= limits.help
        measured = f"error_rate {fmt.rate(err)}, help_per_attempt {fmt.number(helps)}"
        flags = {
            "high_error_low_help": (high_err and not high_help, measured),
            "high_error_high_help": (high_err and high_help, measured),
            "low_error_high_help": (low_err and high_help, measured),
            "retry_on_commands": (key in retries, retries.get(key, "")),
            "long_path_completed": (key in long_paths, long_paths.get(key, "")),
        }
        out += [
            {
                "model": key[0],
                "guidance": key[1],
                "pattern": name,
                "flagged": flagged,
                "cause": CAUSES[name],
                "evidence": evidence,
            }
            for name, (flagged, evidence) in flags.items()
        ]
    schema = {
        "model": pl.Utf8,
        "guidance": pl.Utf8,
        "pattern": pl.Utf8,
        "flagged": pl.Boolean,
        "cause": pl.Utf8,
        "evidence": pl.Utf8,
    }
    return pl.DataFrame(out, schema=schema)


def _retry_subcommands(
    commands: pl.DataFrame, limits: GuidanceThresholds
) -> dict[tuple[str, str], str]:
    """``(model, guidance) -> "sub retry_rate x (n runs), ..."`` for the flagged subcommands."""
    per_sub = (
        commands.filter(pl.col("subcommand").is_not_null())
        .group_by("model", "guidance", "subcommand", "run_id", "task_id", "epoch")
        .agg(pl.len().alias("n"), pl.col("command").n_unique().alias("unique"))
        .group_by("model", "guidance", "subcommand")
        .agg(pl.col("n").sum(), pl.col("unique").sum())
        .with_columns(retry_rate=(pl.col("n") - pl.col("unique")) / pl.col("n"))
        .filter(
            (pl.col("n") >= limits.retry_min_commands) & (pl.col("retry_rate") >= limits.retry_rate)
        )
        .sort("model", "guidance", "retry_rate", descending=[False, False, True])
    )
    out: dict[tuple[str, str], list[str]] = {}
    for r in per_sub.iter_rows(named=True):
        text = f"{r['subcommand']} retry_rate {fmt.rate(r['retry_rate'])} ({r['n']} runs)"
        out.setdefault((r["model"], r["guidance"]), []).append(text)
    return {k: ", ".join(v) for k, v in out.items()}


def _long_paths(attempts: pl.DataFrame, ratio: float) -> dict[tuple[str, str], str]:
    """``(model, guidance) -> "task n commands vs fewest m, ..."`` for long completed paths."""
    done = attempts.filter(pl.col("completed") & (pl.col("total_commands") > 0))
    fewest = done.group_by("task_id").agg(pl.col("total_commands").min().alias("fewest"))
    flagged = (
        done.group_by("model", "guidance", "task_id", maintain_order=True)
        .agg(pl.col("total_commands").mean().alias("mean"))
        .join(fewest, on="task_id")
        .filter(pl.col("mean") >= ratio * pl.col("fewest"))
    )
    out: dict[tuple[str, str], list[str]] = {}
    for r in flagged.iter_rows(named=True):
        text = f"{r['task_id']} {fmt.number(r['mean'], 1)} commands vs fewest {r['fewest']}"
        out.setdefault((r["model"], r["guidance"]), []).append(text)
    return {k: ", ".join(v) for k, v in out.items()}
