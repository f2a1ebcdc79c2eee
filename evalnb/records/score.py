"""Check verdicts, task scores and the finished task record (spec 000 ``TaskScore``).

Example:
    >>> s = TaskScore(task_id="t", results=[ScoreResult(check="exit_code:0", passed=True)],
    ...               score=1, max_score=1)
    >>> s.all_passed(), s.rate()
    (True, 1.0)
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field

from evalnb.records.task import Task
from evalnb.records.trace import AgentTrace

Layer = Literal["expectation", "gate", "judge"]


class ScoreResult(BaseModel):
    """One check verdict (spec 000 ``ScoreResult``), tagged with its layer and kind."""

    check: str
    passed: bool
    detail: str = ""
    weight: float = 1.0
    layer: Layer = "expectation"
    kind: str = ""


class TaskScore(BaseModel):
    """Spec 000 ``TaskScore``: score = sum of passed weights, max_score = sum of weights."""

    task_id: str
    results: list[ScoreResult] = Field(default_factory=list)
    score: float = 0.0
    max_score: float = 0.0

    def all_passed(self) -> bool:
        """True when every check passed (vacuously true with no checks)."""
        return all(r.passed for r in self.results)

    def rate(self) -> float | None:
        """``score / max_score``, or None when max_score is 0."""
        return self.score / self.max_score if self.max_score else None


class TaskRecord(BaseModel):
    """Everything stored for one finished task attempt: the unit the frames are built from.

    ``error`` is set when the provider or sandbox failed; such a task still counts
    in every total (as failed).
    """

    task: Task
    epoch: int = 1
    trace: AgentTrace = Field(default_factory=AgentTrace)
    score: TaskScore
    error: str | None = None
    extra: dict[str, Any] = Field(default_factory=dict)

    @property
    def passed(self) -> bool:
        """A task passes only if it did not error and every check passed.

        A CLI-tool scenario passes by spec 002's outcome instead (``extra["outcome"]``:
        all gates pass and, when enabled, the judge's weighted score reaches the
        threshold), so a single judge criterion scored low does not fail it.
        """
        if self.error is not None:
            return False
        if "outcome" in self.extra:
            return self.extra["outcome"] == "pass"
        return self.score.all_passed()
