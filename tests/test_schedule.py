"""Attempts start longest first where their durations are known."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from evalnb._cli import main
from evalnb._runtime.bash_case import BashCase
from evalnb._runtime.runner import run_cases
from evalnb._runtime.schedule import longest_first
from evalnb._store import RunStore
from evalnb.records import AgentTrace, RunMeta, Task, TaskRecord, TaskScore
from evalnb.records.interfaces import ChatRequest, ChatResponse
from tests.test_runner import crash_after


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


TAGS = {"t0": "easy", "t1": "hard", "t2": "medium", "t3": "medium"}
PREVIOUS_MS = {"t0": 900.0, "t1": 10.0, "t2": 300.0, "t3": 500.0}
"""Four tasks: by their tags t1 starts first; by a previous run's durations t0 does."""


def tagged_dataset(tmp_path: Path) -> Path:
    path = tmp_path / "tasks.jsonl"
    lines = [
        {
            "id": i,
            "category": "c",
            "prompt": "p",
            "solution": "true",
            "tags": [tag],
            "expectations": [{"check": "exit_code:0"}],
        }
        for i, tag in TAGS.items()
    ]
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return path


def previous_run(tmp_path: Path) -> Path:
    records = [
        TaskRecord(
            task=Task(id=i, category="c", prompt="p"),
            trace=AgentTrace(duration_ms=ms),
            score=TaskScore(task_id=i),
        )
        for i, ms in PREVIOUS_MS.items()
    ]
    meta = RunMeta(run_id="previous", provider="test", model="m")
    return RunStore.write_records(tmp_path / "before", meta, records)


def start_order(run_dir: Path) -> list[str]:
    events = [json.loads(x) for x in (run_dir / "events.jsonl").read_text().splitlines()]
    return [e["task_id"] for e in events if e["event"] == "task_started"]


def cli_run(*args: str) -> int:
    return main(["run", *args, "--model", "reference", "--concurrency", "1", "--quiet"])


def test_run_durations_from_an_earlier_run_orders_the_attempts_longest_first(tmp_path):
    tasks, before = tagged_dataset(tmp_path), previous_run(tmp_path)
    assert cli_run(str(tasks), "--out", str(tmp_path / "tags")) == 0
    [by_tags] = (tmp_path / "tags").iterdir()
    assert start_order(by_tags) == ["t1", "t2", "t3", "t0"]  # hard, medium, medium, easy
    out = tmp_path / "durations"
    assert cli_run(str(tasks), "--durations-from", str(before), "--out", str(out)) == 0
    [by_durations] = out.iterdir()
    assert start_order(by_durations) == ["t0", "t3", "t2", "t1"]  # 900, 500, 300, 10 ms


def test_resume_durations_from_orders_the_attempts_left(tmp_path):
    tasks, before = tagged_dataset(tmp_path), previous_run(tmp_path)
    assert cli_run(str(tasks), "--out", str(tmp_path / "out")) == 0
    [run] = (tmp_path / "out").iterdir()
    crash_after(run, 0, torn=False)  # as if it died before any attempt started
    code = main(
        [
            "run",
            "--resume",
            str(run),
            "--durations-from",
            str(before),
            "--concurrency",
            "1",
            "--quiet",
        ]
    )
    assert code == 0
    assert start_order(run) == ["t0", "t3", "t2", "t1"]


def test_durations_from_a_folder_that_is_not_a_run_is_refused_before_anything_runs(
    tmp_path, capsys
):
    tasks = tagged_dataset(tmp_path)
    for not_a_run in (tmp_path / "no-such-folder", tmp_path, tasks):
        out = tmp_path / "out"
        code = cli_run(str(tasks), "--durations-from", str(not_a_run), "--out", str(out))
        assert code == 2
        err = capsys.readouterr().err
        assert f"error: {not_a_run}: --durations-from: not an evalnb run folder" in err
        assert "Traceback" not in err
        assert not out.exists()
