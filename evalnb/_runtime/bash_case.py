"""Bash tasks as runner cases: a bashkit sandbox with the task's files, spec 000 checks.

Example:
    >>> import asyncio
    >>> from evalnb.records import Task
    >>> case = BashCase(Task(id="t", category="c", prompt="p", files={"/a": "x"}))
    >>> asyncio.run(case.sandbox()).read_text("/a")
    'x'
"""

from __future__ import annotations

from evalnb._runtime.case import Scoring
from evalnb._runtime.sandbox import BashkitSandbox
from evalnb._scoring.deadline import Deadline
from evalnb._scoring.expectations import score_task_within
from evalnb._scoring.judge import judge_expectation
from evalnb.records import AgentTrace, ScoreResult, Task, TaskScore
from evalnb.records.interfaces import Provider, Sandbox
from evalnb.records.score import not_run
from evalnb.records.task import LlmJudge


class BashCase:
    """A bash task: bashkit sandbox with the task's files, scored by its expectations.

    With a ``judge`` provider, spec 000's ``llm_judge:prompt`` expectations are
    judged for real (with the weight the dataset gives them); without one they stay
    weight-0 stubs that pass.
    """

    sandbox_kind = "bashkit"

    def __init__(
        self, task: Task, *, timeout_s: float | None = None, judge: Provider | None = None
    ) -> None:
        self.task = task
        self.system = task.system
        self.max_turns: int | None = None
        self.timeout_s = timeout_s
        self.judge = judge

    async def sandbox(self) -> Sandbox:
        """A fresh :class:`BashkitSandbox` with the task's files written."""
        return BashkitSandbox(files=self.task.files, timeout_s=self.timeout_s)

    def not_run(self, reason: str) -> Scoring:
        """Every expectation recorded as not run (an ``llm_judge`` one keeps its weight only
        with a judge, as when scored).

        Example:
            >>> case = BashCase(Task(id="t", category="c", prompt="p",
            ...                      expectations=[{"check": "exit_code:0", "weight": 2}]))
            >>> s = case.not_run("provider error on turn 1: 500").score
            >>> s.results[0].passed, s.score, s.max_score
            (None, 0.0, 2.0)
        """
        rows = [
            ScoreResult(
                check=e.check,
                passed=None,
                weight=0.0 if isinstance(e.spec, LlmJudge) and self.judge is None else e.weight,
                kind=e.kind,
            )
            for e in self.task.expectations
        ]
        return Scoring(not_run(self.task.id, rows, reason))

    async def score(
        self, trace: AgentTrace, sandbox: Sandbox, timeout_s: float | None = None
    ) -> Scoring:
        """Spec 000 expectation checks within ``timeout_s`` (:mod:`evalnb._scoring.deadline`;
        ``llm_judge`` ones by the judge, when there is one, outside it)."""
        deadline = Deadline(timeout_s)
        score = score_task_within(self.task, trace, sandbox, deadline)
        if self.judge is None or not any(
            isinstance(e.spec, LlmJudge) for e in self.task.expectations
        ):
            return Scoring(score, error=deadline.error())
        results = [
            await judge_expectation(e.spec.prompt, self.task, trace, self.judge, e.weight)
            if isinstance(e.spec, LlmJudge)
            else r
            for e, r in zip(self.task.expectations, score.results, strict=True)
        ]
        return Scoring(TaskScore.from_results(self.task.id, results), error=deadline.error())
