"""The cut-offs the analysis flags by: one typed shape, frozen, a misspelt field an error.

- :class:`Thresholds`: spec 000's healthy profile and friction signals
  (:func:`evalnb._analysis.diagnostics.friction`; the charts draw the healthy profile's
  reference lines from it).
- :class:`DiagnosisThresholds`: the cut-offs of spec 000's cross-model diagnostics
  (:func:`evalnb._analysis.diagnostics.diagnose`).
- :class:`GuidanceThresholds`: where "high" starts for spec 002's diagnostic patterns
  (:func:`evalnb._analysis.guidance.compare_guidance`).

Override a field by building one with it: the rest keep their defaults.

Example:
    >>> Thresholds(avg_turns_max=6).avg_turns_max
    6.0
    >>> try:
    ...     GuidanceThresholds(eror_rate=0.3)
    ... except ValueError as error:
    ...     print(error.errors()[0]["type"], error.errors()[0]["loc"])
    extra_forbidden ('eror_rate',)
"""

from __future__ import annotations

from pydantic import ConfigDict, Field

from evalnb.records.base import Record


class Thresholds(Record):
    """The cut-offs of spec 000's healthy profile and friction signals (override any).

    :func:`evalnb.friction` flags a run by them; the charts draw the healthy profile's
    reference lines from them. Frozen: a misspelt field is an error.

    Attributes
    ----------
    overall_rate_min : float, default 0.90
        Healthy: overall rate above this.
    tool_call_success_min : float, default 0.80
        Healthy: tool call success rate above this.
    avg_turns_max : float, default 5.0
        Healthy: average turns per task below this.
    category_rate_min : float, default 0.70
        Healthy: no category rate below this.
    natural_stop_min : float, default 0.50
        Healthy: natural stop on more than this share of tasks.
    friction_tool_call_success : float, default 0.75
        Friction: tool call success rate below this.
    friction_category_rate : float, default 0.50
        Friction: a category rate below this.
    friction_avg_turns : float, default 7.0
        Friction: average turns per task above this.
    friction_pass_rate : float, default 0.50
        Friction: pass rate below this with tokens per task above the median of the runs.
    friction_no_natural_stop : float, default 0.20
        Friction: share of tasks without natural stop above this.

    Raises
    ------
    pydantic.ValidationError
        (a ValueError) On an unknown field or a value not readable as a number.

    See Also
    --------
    friction : The signals these cut-offs flag.

    Examples
    --------
    Override a field: the rest keep their defaults.

    >>> import polars as pl
    >>> from evalnb._examples import example_runs
    >>> from evalnb import friction
    >>> strict = Thresholds(avg_turns_max=3)
    >>> strict.avg_turns_max, strict.overall_rate_min
    (3.0, 0.9)
    >>> friction(example_runs(), strict).filter(signal="avg_turns").select(
    ...     "run_id", "value", "threshold", "flagged")
    shape: (2, 4)
    ┌─────────┬───────┬───────────┬─────────┐
    │ run_id  ┆ value ┆ threshold ┆ flagged │
    │ ---     ┆ ---   ┆ ---       ┆ ---     │
    │ str     ┆ f64   ┆ f64       ┆ bool    │
    ╞═════════╪═══════╪═══════════╪═════════╡
    │ careful ┆ 4.0   ┆ 3.0       ┆ true    │
    │ hasty   ┆ 3.0   ┆ 3.0       ┆ true    │
    └─────────┴───────┴───────────┴─────────┘
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    overall_rate_min: float = Field(0.90, description="healthy: overall rate above this")
    tool_call_success_min: float = Field(0.80, description="healthy: tool call success above")
    avg_turns_max: float = Field(5.0, description="healthy: average turns per task below this")
    category_rate_min: float = Field(0.70, description="healthy: no category rate below this")
    natural_stop_min: float = Field(0.50, description="healthy: natural stop on more than this")
    friction_tool_call_success: float = Field(0.75, description="friction: tool success below")
    friction_category_rate: float = Field(0.50, description="friction: a category rate below")
    friction_avg_turns: float = Field(7.0, description="friction: average turns above this")
    friction_pass_rate: float = Field(
        0.50, description="friction: pass rate below this with tokens per task above the median"
    )
    friction_no_natural_stop: float = Field(
        0.20, description="friction: share of tasks without natural stop above this"
    )


class DiagnosisThresholds(Record):
    """The cut-offs of spec 000's cross-model diagnostics (override any).

    :func:`evalnb.diagnose` classifies tasks and categories by them. Frozen: a misspelt
    field is an error.

    Attributes
    ----------
    category_fail_rate : float, default 0.5
        A category fails for a model with its rate below this (``by="category"``).
    gap_factor : float, default 2.0
        Two figures differ when the largest is more than this x the smallest (the
        reasoning and cost efficiency gaps).
    capability_alpha : float, default 0.05
        Models differ in capability on a task with Fisher's exact p at most this.

    Raises
    ------
    pydantic.ValidationError
        (a ValueError) On an unknown field or a value not readable as a number.

    See Also
    --------
    diagnose : The diagnostics these cut-offs decide.

    Examples
    --------
    With a category cut-off above the hasty model's 50% on two categories, they fail
    for it:

    >>> from evalnb._examples import example_runs
    >>> from evalnb import diagnose
    >>> DiagnosisThresholds(gap_factor=3).gap_factor
    3.0
    >>> diagnose(example_runs(), by="category",
    ...     thresholds=DiagnosisThresholds(category_fail_rate=0.6)).select(
    ...     "category", "passed_by", "failed_by")
    shape: (3, 3)
    ┌─────────────────┬──────────────────────────────┬───────────────┐
    │ category        ┆ passed_by                    ┆ failed_by     │
    │ ---             ┆ ---                          ┆ ---           │
    │ str             ┆ list[str]                    ┆ list[str]     │
    ╞═════════════════╪══════════════════════════════╪═══════════════╡
    │ file_operations ┆ ["sim/careful", "sim/hasty"] ┆ []            │
    │ json_processing ┆ ["sim/careful"]              ┆ ["sim/hasty"] │
    │ text_processing ┆ ["sim/careful"]              ┆ ["sim/hasty"] │
    └─────────────────┴──────────────────────────────┴───────────────┘
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    category_fail_rate: float = Field(
        0.5, description="a category fails for a model with its rate below this"
    )
    gap_factor: float = Field(
        2.0, description="two figures differ when the largest is more than this x the smallest"
    )
    capability_alpha: float = Field(
        0.05,
        description="models differ in capability on a task with Fisher's exact p at most this",
    )


class GuidanceThresholds(Record):
    """Where "high" starts for spec 002's diagnostic patterns of guidance versions.

    :func:`evalnb.compare_guidance` flags its patterns by them. Frozen: a misspelt field
    (``eror_rate``) is an error, not silently ignored.

    Attributes
    ----------
    error_rate : float, default 0.2
        A version's error rate is high from this on.
    help : float, default 1.0
        ``--help`` calls per attempt are high from this on.
    retry_rate : float, default 0.3
        A subcommand's retry rate is high from this on.
    retry_min_commands : int, default 3
        A subcommand's retry rate counts from this many runs of it on.
    command_ratio : float, default 2.0
        A completed path is long from this many times the fewest commands.

    Raises
    ------
    pydantic.ValidationError
        (a ValueError) On an unknown field or a value not readable as its type.

    See Also
    --------
    compare_guidance : The patterns these cut-offs flag.

    Examples
    --------
    >>> GuidanceThresholds(error_rate=0.6).error_rate, GuidanceThresholds().help
    (0.6, 1.0)

    With ``help`` above v1's one ``--help`` per attempt, its pattern is no longer
    flagged:

    >>> import polars as pl
    >>> from evalnb import compare_guidance
    >>> from evalnb._examples import example_guidance_runs
    >>> result = compare_guidance(example_guidance_runs(), thresholds=GuidanceThresholds(help=1.5))
    >>> result.diagnosis.filter(pl.col("flagged")).height
    0
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    error_rate: float = Field(0.2, description="a version's error rate is high from this on")
    help: float = Field(1.0, description="--help calls per attempt are high from this on")
    retry_rate: float = Field(0.3, description="a subcommand's retry rate is high from this on")
    retry_min_commands: int = Field(
        3, description="a subcommand's retry rate counts from this many runs of it on"
    )
    command_ratio: float = Field(
        2.0, description="a completed path is long from this many times the fewest commands"
    )
