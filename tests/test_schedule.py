"""Attempts start longest first where their durations are known."""

from __future__ import annotations

import asyncio

from evalnb.records import Task
from evalnb.records.interfaces import ChatRequest, ChatResponse
from evalnb.runtime.bash_case import BashCase
from evalnb.runtime.runner import run_cases
from evalnb.runtime.schedule import longest_first


class OrderProvider:
    """Answers at once and notes the order in which tasks start."""

    provider, model, simulated, recorded, recording = "test", "order", False, False, None

    def __init__(self) -> None:
        self.started: list[str] = []

    async def chat(self, request: ChatRequest) -> ChatResponse:
        self.started.append(request.task.id)
        return ChatResponse("done", [], "end_turn", 1, 1)

    def settings(self) -> dict:
        return {}


def cases(*tags: str) -> list[BashCase]:
    return [
        BashCase(Task(id=f"t{i}", category="c", prompt="p", tags=[t])) for i, t in enumerate(tags)
    ]


def test_hard_tasks_start_before_easy_ones(tmp_path):
    provider = OrderProvider()
    asyncio.run(
        run_cases(
            cases("easy", "hard", "medium", "hard"),
            [provider],
            tmp_path,
            concurrency=1,
            progress=False,
        )
    )
    assert provider.started == ["t1", "t3", "t2", "t0"]


def test_durations_of_a_previous_run_win_over_tags(tmp_path):
    provider = OrderProvider()
    durations = {"t0": 900.0, "t1": 10.0, "t2": 300.0}
    asyncio.run(
        run_cases(
            cases("easy", "hard", "medium"),
            [provider],
            tmp_path,
            concurrency=1,
            progress=False,
            durations=durations,
        )
    )
    assert provider.started == ["t0", "t2", "t1"]


def test_unknown_durations_count_as_the_mean_and_nothing_known_keeps_the_order():
    tasks = [Task(id=i, category="c", prompt="p") for i in "abcd"]
    assert longest_first(tasks, key=lambda t: t) == tasks
    order = longest_first(tasks, key=lambda t: t, durations={"a": 1.0, "b": 5.0, "c": 3.0})
    assert [t.id for t in order] == ["b", "c", "d", "a"]
