"""The case contract: what the runner runs, however the work was described.

A case couples a :class:`~evalnb.records.Task` (the prompt, its id and category) with
how to set up its sandbox and how to score the finished attempt. Bash tasks are
:class:`~evalnb._runtime.bash_case.BashCase`; CLI-tool scenarios are
:class:`~evalnb._runtime.scenario_case.ScenarioCase`.

Example:
    >>> from evalnb.records import TaskScore
    >>> Scoring(TaskScore(task_id="t")).scenario is None
    True
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol

from evalnb.records import AgentTrace, ScenarioResult, Task, TaskScore
from evalnb.records.interfaces import Sandbox


@dataclass
class Scoring:
    """What scoring a finished attempt gives the task record.

    ``score`` holds the check rows; ``scenario`` spec 002's evaluation of a scenario
    attempt (None for a bash task); ``extra`` informational task columns; ``error`` the
    attempt's error when scoring ran past its deadline (``scoring timeout: ...``).
    """

    score: TaskScore
    scenario: ScenarioResult | None = None
    extra: dict[str, Any] = field(default_factory=dict)
    error: str | None = None


class Case(Protocol):
    """One unit of work for the runner.

    ``sandbox_kind`` names the sandbox it runs in (``"bashkit"`` or ``"local"``);
    ``max_turns`` is the case's own turn limit (None: the run's).
    """

    task: Task
    system: str | None
    max_turns: int | None
    sandbox_kind: str

    async def sandbox(self) -> Sandbox:
        """A fresh, prepared sandbox holding the case's files."""
        ...

    async def score(
        self, trace: AgentTrace, sandbox: Sandbox, timeout_s: float | None = None
    ) -> Scoring:
        """Score a finished attempt, its checks within ``timeout_s``
        (:mod:`evalnb._scoring.deadline`; None: no limit)."""
        ...

    def not_run(self, reason: str) -> Scoring:
        """The scoring of an attempt that errored before its work ran: every check the
        case has, recorded as not run (:func:`~evalnb.records.score.not_run`)."""
        ...


def errored_before_work(trace: AgentTrace, error: str | None) -> bool:
    """Whether an attempt errored before its work ran: it ended with an error and none
    of its tool calls ran (a scenario's setup failed, the provider failed on the first
    reply, the time limit came before the first command). Its checks are then not
    evaluated (:meth:`Case.not_run`); an attempt that errored after some tool calls is
    scored on what they left, like any other.

    Example:
        >>> errored_before_work(AgentTrace(), "provider error on turn 1: 500")
        True
        >>> errored_before_work(AgentTrace(), None)
        False
    """
    return error is not None and not trace.tool_calls
