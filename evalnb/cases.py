"""Evaluation cases: what the runner runs, however the work was described.

A case couples a :class:`~evalnb.schema.Task` (the prompt and its id and category)
with how to set up its sandbox and how to score the finished attempt. Bash tasks
from a JSONL dataset become :class:`BashCase`; CLI-tool scenarios provide their own
case type with the same three members.

Example:
    >>> from evalnb.schema import Task
    >>> case = BashCase(Task(id="t", category="c", prompt="p", files={"/a": "x"}))
    >>> case.sandbox().read_text("/a")
    'x'
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Protocol

from evalnb.datasets import load_tasks
from evalnb.errors import InputError
from evalnb.sandbox import BashkitSandbox, Sandbox
from evalnb.schema import AgentTrace, Task, TaskScore
from evalnb.scoring.expectations import score_task


class Case(Protocol):
    """One unit of work for the runner."""

    task: Task
    system: str | None
    max_turns: int | None

    def sandbox(self) -> Sandbox:
        """A fresh sandbox holding the case's files."""
        ...

    async def score(self, trace: AgentTrace, sandbox: Sandbox) -> tuple[TaskScore, dict[str, Any]]:
        """Score a finished attempt; the dict holds extra task-level fields to store."""
        ...


class BashCase:
    """A bash task: bashkit sandbox with the task's files, scored by its expectations."""

    def __init__(self, task: Task, *, timeout_s: float | None = None) -> None:
        self.task = task
        self.system = task.system
        self.max_turns: int | None = None
        self.timeout_s = timeout_s

    def sandbox(self) -> Sandbox:
        """A fresh :class:`BashkitSandbox` with the task's files written."""
        return BashkitSandbox(files=self.task.files, timeout_s=self.timeout_s)

    async def score(self, trace: AgentTrace, sandbox: Sandbox) -> tuple[TaskScore, dict[str, Any]]:
        """Spec 000 expectation checks."""
        return score_task(self.task, trace, sandbox), {}


def load_cases(
    path: str | Path,
    *,
    guidance: Mapping[str, Path] | None = None,
    judge: str | None = None,
    models: Sequence[str] = (),
) -> list[Case]:
    """Load a dataset into cases.

    JSONL tasks or a bashkit-eval result JSON give :class:`BashCase`; a scenario YAML
    or a folder of them gives scenario cases, one per guidance version when
    ``guidance`` (``{name: file}``) is given. ``judge`` is the ``--judge`` model;
    ``models`` are the models under test (a judge among them is refused).

    Example:
        >>> [c.task.id for c in load_cases("data/tasks/smoke.jsonl")]
        ['smoke_count_words', 'smoke_make_project', 'smoke_jq_fields']
    """
    path = Path(path)
    if path.is_dir() or path.suffix in (".yaml", ".yml"):
        from evalnb.scenarios import load_scenario_cases

        return list(load_scenario_cases(path, guidance, judge, models=models))
    if guidance:
        raise InputError(path, None, "--guidance", "guidance versions apply to scenarios only")
    return [BashCase(t) for t in load_tasks(path)]
