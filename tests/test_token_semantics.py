"""Token semantics: ``input_tokens`` is the whole prompt; cache reads and writes apart."""

from __future__ import annotations

from pathlib import Path

import pytest
from inspect_ai.log import read_eval_log, write_eval_log

from evalnb._analysis.load import load
from evalnb._analysis.runs import read_run_folder
from evalnb._formats.agent_logs import Attempt, task_record
from evalnb._formats.inspect_write import write_inspect_log
from evalnb._store import RunStore
from evalnb.records import AgentTrace, LLMCall, RunMeta, Task, TaskRecord, TaskScore


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


def test_the_agent_log_readers_leave_the_running_total_unknown_from_an_unknown_count():
    """Issue 25 item 5 on the ATIF, Codex, Gemini CLI, SWE-agent, OpenHands and OTel
    readers (one rule for them all, :func:`evalnb._formats.agent_logs.task_record`)."""
    calls = [LLMCall(call_number=0, input_tokens=n) for n in (1000, None, 1600)]
    attempt = Attempt(task_id="t", category="c", llm_calls=calls)
    assert [c.cumulative_input for c in task_record(attempt).trace.llm_calls] == [
        1000,
        None,
        None,
    ]


def test_an_inspect_export_read_from_inspects_own_fields_gives_the_whole_prompt(tmp_path):
    """Found by the differential tests: the export wrote the uncached part as Inspect's
    ``input_tokens`` without the inspect_ai version that gives it that meaning, so a
    reader of Inspect's fields took the cache reads as already in it and lost them."""
    calls = [LLMCall(call_number=1, input_tokens=9000, output_tokens=5, cache_read_tokens=8000)]
    log = read_eval_log(str(write_inspect_log(_folder(tmp_path, "openai", calls), tmp_path)))
    for sample in log.samples:
        for event in sample.events:
            event.metadata = None  # Inspect's own fields only
        sample.metadata = {}
    log.eval.metadata = None
    write_eval_log(log, str(tmp_path / "plain.eval"))
    read = load(tmp_path / "plain.eval").llm_calls
    assert read.select("input_tokens", "cache_read_tokens").row(0) == (9000, 8000)


def test_a_figure_one_attempt_did_not_record_keeps_its_value_beside_one_that_did(tmp_path):
    """Found by the differential tests (OTel spans read back): a format's recorded task
    figures are one struct per row, so a figure another attempt of the run recorded as
    null (no call counted its input) blanked this attempt's own total as well."""
    counted = Attempt(
        task_id="a", category="c", llm_calls=[LLMCall(call_number=0, input_tokens=350)]
    )
    uncounted = Attempt(task_id="b", category="c", llm_calls=[LLMCall(call_number=0)])
    meta = RunMeta(run_id="r", provider="p", model="m", status="complete")
    records = [task_record(counted), task_record(uncounted)]
    tasks = load(RunStore.write_records(tmp_path, meta, records)).tasks.sort("task_id")
    assert tasks.get_column("total_input_tokens").to_list() == [350, None]
    assert tasks.get_column("total_output_tokens").to_list() == [None, None]
