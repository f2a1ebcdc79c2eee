"""Token semantics: ``input_tokens`` is the whole prompt; cache reads and writes apart."""

from __future__ import annotations

from pathlib import Path

import pytest

from evalnb.analysis.runs import read_run_folder
from evalnb.records import AgentTrace, LLMCall, RunMeta, Task, TaskRecord, TaskScore
from evalnb.store import RunStore


def _record(calls: list[LLMCall]) -> TaskRecord:
    trace = AgentTrace(
        llm_calls=calls,
        turns=len(calls),
        total_input_tokens=sum(c.input_tokens or 0 for c in calls),
    )
    return TaskRecord(
        task=Task(id="t", category="c", prompt="p"), trace=trace, score=TaskScore(task_id="t")
    )


def _folder(root: Path, provider: str, calls: list[LLMCall]) -> Path:
    meta = RunMeta(run_id=f"r-{provider}", provider=provider, model="m", status="complete")
    return RunStore.write_records(root, meta, [_record(calls)])


WHOLE = [
    LLMCall(
        call_number=1,
        input_tokens=70_003,
        cache_read_tokens=0,
        cache_write_tokens=70_000,
        cumulative_input=70_003,
    ),
    LLMCall(
        call_number=2,
        input_tokens=70_505,
        cache_read_tokens=70_000,
        cache_write_tokens=500,
        cumulative_input=70_003 + 70_505,
    ),
]


def test_a_new_folder_keeps_whole_prompt_counts_and_spec_003_uses_them(tmp_path: Path):
    runs = read_run_folder(_folder(tmp_path, "anthropic", WHOLE))
    calls = runs.llm_calls.sort("call_number")
    assert calls.get_column("input_tokens").to_list() == [70_003, 70_505]
    assert calls.get_column("cumulative_input").to_list() == [70_003, 70_003 + 70_505]
    task = runs.tasks.row(0, named=True)
    assert (task["base_context"], task["context_growth_avg"]) == (70_003, 70_505 - 70_003)


def test_a_run_in_progress_is_read_from_one_read_of_its_events(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    store = RunStore.create(tmp_path, RunMeta(run_id="live", provider="anthropic", model="m"))
    record = _record(WHOLE).model_dump(mode="json")
    store.append({"event": "task_finished", "task_id": "t", "epoch": 1, "record": record})
    opened: list[str] = []
    real_open = Path.open

    def counting_open(self: Path, *args, **kwargs):
        opened.append(self.name)
        return real_open(self, *args, **kwargs)

    with store.lock:  # a process is running it
        monkeypatch.setattr(Path, "open", counting_open)
        runs = read_run_folder(store.path)
    assert opened.count("events.jsonl") == 1
    assert runs.runs.get_column("status").to_list() == ["running"]
    calls = runs.llm_calls.sort("call_number")
    assert calls.get_column("input_tokens").to_list() == [70_003, 70_505]
    assert runs.tasks.get_column("total_input_tokens").to_list() == [140_508]
