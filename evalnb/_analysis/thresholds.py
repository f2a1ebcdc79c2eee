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

    Example:
        >>> Thresholds(avg_turns_max=6).avg_turns_max
        6.0
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

    Example:
        >>> DiagnosisThresholds(gap_factor=3).gap_factor
        3.0
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

    Example:
        >>> GuidanceThresholds(error_rate=0.6).error_rate, GuidanceThresholds().help
        (0.6, 1.0)
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
