"""Evaluation cases: what the runner runs, however the work was described.

A case couples a :class:`~evalnb.records.Task` (the prompt and its id and category)
with how to set up its sandbox and how to score the finished attempt. Bash tasks
from a JSONL dataset become :class:`BashCase`; CLI-tool scenarios provide their own
case type with the same three members.

Example:
    >>> from evalnb.records import Task
    >>> case = BashCase(Task(id="t", category="c", prompt="p", files={"/a": "x"}))
    >>> case.sandbox().read_text("/a")
    'x'
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Protocol

from evalnb.errors import InputError
from evalnb.formats.tasks import load_tasks
from evalnb.records import AgentTrace, Task, TaskScore
from evalnb.records.interfaces import Provider, Sandbox
from evalnb.runtime.sandbox import BashkitSandbox
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
    """A bash task: bashkit sandbox with the task's files, scored by its expectations.

    With a ``judge`` provider, spec 000's ``llm_judge:prompt`` expectations are
    judged for real (with the weight the dataset gives them); without one they stay
    weight-0 stubs that pass.
    """

    def __init__(
        self, task: Task, *, timeout_s: float | None = None, judge: Provider | None = None
    ) -> None:
        self.task = task
        self.system = task.system
        self.max_turns: int | None = None
        self.timeout_s = timeout_s
        self.judge = judge

    def sandbox(self) -> Sandbox:
        """A fresh :class:`BashkitSandbox` with the task's files written."""
        return BashkitSandbox(files=self.task.files, timeout_s=self.timeout_s)

    async def score(self, trace: AgentTrace, sandbox: Sandbox) -> tuple[TaskScore, dict[str, Any]]:
        """Spec 000 expectation checks (``llm_judge`` ones by the judge, when there is one)."""
        score = score_task(self.task, trace, sandbox)
        if self.judge is None or not any(e.kind == "llm_judge" for e in self.task.expectations):
            return score, {}
        from evalnb.scoring.judge import judge_expectation

        results = [
            await judge_expectation(e.value, self.task, trace, self.judge, e.weight)
            if e.kind == "llm_judge"
            else r
            for e, r in zip(self.task.expectations, score.results, strict=True)
        ]
        passed = sum(r.weight for r in results if r.passed)
        total = sum(r.weight for r in results)
        return TaskScore(task_id=self.task.id, results=results, score=passed, max_score=total), {}


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
        from evalnb.runtime.scenario_case import load_scenario_cases

        return list(load_scenario_cases(path, guidance, judge, models=models))
    if guidance:
        raise InputError(path, None, "--guidance", "guidance versions apply to scenarios only")
    tasks = load_tasks(path)
    provider = None
    if any(e.kind == "llm_judge" for t in tasks for e in t.expectations):
        from evalnb.runtime.providers.registry import resolve_provider
        from evalnb.scoring.judge import judge_spec, refuse_self_judging

        spec = judge_spec(judge, None)  # --judge, else $EVALNB_JUDGE, else no judge
        if spec:
            refuse_self_judging(spec, models)
            provider = resolve_provider(spec)
    return [BashCase(t, judge=provider) for t in tasks]
