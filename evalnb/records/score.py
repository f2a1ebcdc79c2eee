"""Check verdicts, task scores and the finished task record (spec 000 ``TaskScore``).

Example:
    >>> s = TaskScore(task_id="t", results=[ScoreResult(check="exit_code:0", passed=True)],
    ...               score=1, max_score=1)
    >>> s.all_passed(), s.rate()
    (True, 1.0)
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import ConfigDict, Field, model_validator

from evalnb.records.base import Record
from evalnb.records.task import Task
from evalnb.records.trace import AgentTrace

Layer = Literal["expectation", "gate", "judge"]


class ScoreResult(Record):
    """One check verdict (spec 000 ``ScoreResult``), tagged with its layer and kind.

    ``passed`` is None when the check was not run: the attempt errored before its work
    ran (see :func:`not_run`), so the check is neither passed nor failed.
    """

    check: str
    passed: bool | None
    detail: str = ""
    weight: float = 1.0
    layer: Layer = "expectation"
    kind: str = ""


class TaskScore(Record):
    """Spec 000 ``TaskScore``: score = sum of passed weights, max_score = sum of weights."""

    task_id: str
    results: list[ScoreResult] = Field(default_factory=list)
    score: float = 0.0
    max_score: float = 0.0

    def all_passed(self) -> bool:
        """True when every check passed (vacuously true with no checks); a check not run
        did not pass."""
        return all(r.passed is True for r in self.results)

    def rate(self) -> float | None:
        """``score / max_score``, or None when max_score is 0."""
        return self.score / self.max_score if self.max_score else None


NOT_RUN = "not run"
"""How the ``detail`` of a check that was not run begins."""


def not_run_detail(reason: str) -> str:
    """The ``detail`` of a check not run because the attempt errored with ``reason``.

    Example:
        >>> not_run_detail("task timeout")
        'not run: the attempt errored before any tool call ran (task timeout)'
    """
    return f"{NOT_RUN}: the attempt errored before any tool call ran ({reason})"


def not_run(task_id: str, checks: list[ScoreResult], reason: str) -> TaskScore:
    """The score of an attempt that errored before its work ran: each of ``checks`` (its
    definition: check, weight, layer, kind) recorded as not run (``passed`` None), with
    ``reason`` (the attempt's error) in its detail; 0 of the usual ``max_score``.

    Example:
        >>> s = not_run("t", [ScoreResult(check="exit_code:0", passed=None, weight=2)], "boom")
        >>> s.results[0].passed, s.results[0].detail, s.score, s.max_score
        (None, 'not run: the attempt errored before any tool call ran (boom)', 0.0, 2.0)
    """
    detail = not_run_detail(reason)
    rows = [r.model_copy(update={"passed": None, "detail": detail}) for r in checks]
    return TaskScore(task_id=task_id, results=rows, max_score=sum(r.weight for r in rows))


class ReplayAgreement(Record):
    """How many check verdicts of a replay equal the recording's (per task or per run).

    Example:
        >>> ReplayAgreement(checks_agree=3, checks_compared=4).checks_compared
        4
    """

    model_config = ConfigDict(extra="forbid")

    checks_agree: int = Field(ge=0)
    checks_compared: int = Field(ge=0)


class JudgeRating(Record):
    """One judge's rating of one scenario attempt, and what its call cost in tokens.

    ``judge_score`` is the judge's recomputed weighted score (null when the judge
    failed: ``error`` says why); ``passed`` whether it reached the scenario's
    ``pass_threshold``. The token counts are the judge call's usage as the provider
    reported it (null when it reported none, or the call failed).

    Example:
        >>> JudgeRating(judge_model="openai/gpt-4o-mini", judge_score=0.8, passed=True).passed
        True
    """

    model_config = ConfigDict(extra="forbid")

    judge_model: str
    judge_score: float | None = None
    passed: bool = False
    error: str | None = None
    input_tokens: int | None = None
    output_tokens: int | None = None
    cache_read_tokens: int | None = None
    cache_write_tokens: int | None = None


class ScenarioResult(Record):
    """Spec 002's ``EvaluationResult`` of one scenario attempt: gates, judge, outcome.

    ``outcome`` is Pass iff every gate passed and (no judge, or the judge's weighted
    score reached its threshold); ``outcome_reason`` names what failed.
    ``judge_score`` is null without a judge; ``composite_score`` and
    ``interaction_score`` are null unless the scenario configures a composite.

    ``judges`` holds every judge's rating of the attempt, in the order the judges were
    given (``--judge`` repeated): the first is the judge (``judge_model``, whose score
    is ``judge_score`` and decides the outcome); the others rate the same attempt beside
    it and never change the outcome, the composite or the checks.

    Example:
        >>> ScenarioResult(outcome="pass", gates_passed=2, gates_total=2).judge_score is None
        True
    """

    model_config = ConfigDict(extra="forbid")

    outcome: Literal["pass", "fail"]
    outcome_reason: str | None = None
    gates_passed: int = Field(ge=0)
    gates_total: int = Field(ge=0)
    judge_score: float | None = None
    judge_model: str | None = None
    composite_score: float | None = None
    interaction_score: float | None = None
    judges: list[JudgeRating] = Field(default_factory=list)


class TaskRecord(Record):
    """Everything stored for one finished task attempt: the unit the tables are built from.

    ``error`` is set when the provider or sandbox failed; such a task still counts
    in every total (as failed). ``scenario`` holds spec 002's evaluation of a CLI-tool
    scenario attempt; ``replay`` the verdict agreement of a replayed attempt. ``extra``
    holds informational task columns a source adds (a scenario's tier, an imported
    session's id, ...); they never decide ``passed``.
    """

    task: Task
    epoch: int = 1
    trace: AgentTrace = Field(default_factory=AgentTrace)
    score: TaskScore
    error: str | None = None
    scenario: ScenarioResult | None = None
    replay: ReplayAgreement | None = None
    extra: dict[str, Any] = Field(default_factory=dict)

    @model_validator(mode="before")
    @classmethod
    def _upgrade(cls, data: Any) -> Any:
        """Read records written by evalnb before 0.2, which kept these in ``extra``."""
        if not isinstance(data, dict) or not isinstance(data.get("extra"), dict):
            return data
        extra = dict(data["extra"])
        if "outcome" in extra and "scenario" not in data:
            fields = ScenarioResult.model_fields
            data = {**data, "scenario": {k: extra.pop(k) for k in list(extra) if k in fields}}
        if "replay_checks_agree" in extra and "replay" not in data:
            data = {
                **data,
                "replay": {
                    "checks_agree": extra.pop("replay_checks_agree"),
                    "checks_compared": extra.pop("replay_checks_compared", 0),
                },
            }
        extra.pop("guidance", None)  # a run-level field (RunMeta.guidance)
        return {**data, "extra": extra}

    @property
    def passed(self) -> bool:
        """A task passes only if it did not error and every check passed.

        A CLI-tool scenario passes by spec 002's outcome instead (:attr:`scenario`:
        all gates pass and, when enabled, the judge's weighted score reaches the
        threshold), so a single judge criterion scored low does not fail it.

        Example:
            >>> rec = TaskRecord(task=Task(id="t", category="c", prompt="p"),
            ...     score=TaskScore(task_id="t"), scenario=ScenarioResult(
            ...         outcome="fail", gates_passed=0, gates_total=1))
            >>> rec.passed
            False
        """
        if self.error is not None:
            return False
        if self.scenario is not None:
            return self.scenario.outcome == "pass"
        return self.score.all_passed()
