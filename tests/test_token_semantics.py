"""Token semantics: ``input_tokens`` is the whole prompt; cache reads and writes apart.

Old run folders (before ``cache_write_tokens``) load with today's meaning.
"""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest
from inspect_ai.log import read_eval_log, write_eval_log

from evalnb.analysis.load import load
from evalnb.analysis.runs import read_run_folder
from evalnb.formats.agent_logs import Attempt, task_record
from evalnb.formats.inspect_write import write_inspect_log
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


def _make_legacy(folder: Path, *, drop_cache: bool = False) -> None:
    """Rewrite a folder's tables as evalnb wrote them before cache_write_tokens."""
    calls = pl.read_parquet(folder / "llm_calls.parquet")
    tasks = pl.read_parquet(folder / "tasks.parquet")
    uncached = pl.col("input_tokens") - pl.col("cache_read_tokens") - pl.col("cache_write_tokens")
    old = calls.with_columns(uncached.alias("input_tokens")).rename(
        {"cache_write_tokens": "cache_creation_tokens"}
    )
    if drop_cache:
        old = calls.drop("cache_read_tokens", "cache_write_tokens")
    else:
        total = old.get_column("input_tokens").sum()
        tasks = tasks.with_columns(pl.lit(total).alias("total_input_tokens"))
    old.write_parquet(folder / "llm_calls.parquet")
    tasks.write_parquet(folder / "tasks.parquet")


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


def test_a_legacy_anthropic_folder_is_read_with_whole_prompt_input(tmp_path: Path):
    folder = _folder(tmp_path, "anthropic", WHOLE)
    _make_legacy(folder)
    assert pl.read_parquet(folder / "llm_calls.parquet").get_column("input_tokens").to_list() == [
        3,
        5,
    ]

    runs = read_run_folder(folder)
    calls = runs.llm_calls.sort("call_number")
    assert "cache_creation_tokens" not in calls.columns
    assert calls.get_column("cache_write_tokens").to_list() == [70_000, 500]
    assert calls.get_column("input_tokens").to_list() == [70_003, 70_505]
    assert calls.get_column("cumulative_input").to_list() == [70_003, 140_508]
    task = runs.tasks.row(0, named=True)
    assert task["total_input_tokens"] == 140_508
    assert (task["base_context"], task["context_growth_avg"]) == (70_003, 502.0)


def test_a_legacy_openai_folder_keeps_its_input_counts(tmp_path: Path):
    calls = [LLMCall(call_number=1, input_tokens=2304, cache_read_tokens=1920)]
    folder = _folder(tmp_path, "openai", calls)
    frame = pl.read_parquet(folder / "llm_calls.parquet")
    frame.rename({"cache_write_tokens": "cache_creation_tokens"}).write_parquet(
        folder / "llm_calls.parquet"
    )
    runs = read_run_folder(folder)
    assert runs.llm_calls.select("input_tokens", "cache_read_tokens").row(0) == (2304, 1920)


def test_a_folder_without_any_cache_columns_loads_them_as_nulls(tmp_path: Path):
    folder = _folder(tmp_path, "openai", [LLMCall(call_number=1, input_tokens=10)])
    _make_legacy(folder, drop_cache=True)
    runs = read_run_folder(folder)
    assert runs.llm_calls.select("cache_read_tokens", "cache_write_tokens").row(0) == (None, None)
    assert runs.llm_calls.get_column("input_tokens").to_list() == [10]


def test_legacy_events_name_cache_writes_cache_creation_tokens():
    call = LLMCall.model_validate({"call_number": 1, "cache_creation_tokens": 7})
    assert call.cache_write_tokens == 7


def test_a_legacy_report_json_is_read_with_whole_prompt_input(tmp_path: Path):
    import json

    from evalnb.analysis.load import load
    from evalnb.present.report import write_report

    folder = _folder(tmp_path, "anthropic", WHOLE)
    with pytest.warns(UserWarning, match="no price for model"):
        paths = write_report(read_run_folder(folder), tmp_path / "report")
    doc = json.loads(paths["report.json"].read_text())
    for row in doc["tables"]["llm_calls"]:  # as evalnb wrote it before cache_write_tokens
        row["cache_creation_tokens"] = row.pop("cache_write_tokens")
        row["input_tokens"] -= row["cache_read_tokens"] + row["cache_creation_tokens"]
    for row in doc["tables"]["tasks"]:
        row["total_input_tokens"] = 3 + 5
    paths["report.json"].write_text(json.dumps(doc))

    runs = load(paths["report.json"])
    assert runs.llm_calls.sort("call_number").get_column("input_tokens").to_list() == [
        70_003,
        70_505,
    ]
    assert runs.tasks.select("total_input_tokens", "base_context").row(0) == (140_508, 70_003)


def _as_legacy_event(record: TaskRecord, task_id: str = "t") -> dict:
    """``record``'s ``task_finished`` event as evalnb wrote it before cache writes had their
    name: ``cache_creation_tokens``, and an Anthropic ``input_tokens`` without the cache."""
    doc = record.model_dump(mode="json")
    doc["task"]["id"] = doc["score"]["task_id"] = task_id
    cumulative = cached_total = 0
    for call in doc["trace"]["llm_calls"]:
        cached = call["cache_read_tokens"] + call["cache_write_tokens"]
        call["input_tokens"] -= cached
        call["cache_creation_tokens"] = call.pop("cache_write_tokens")
        cumulative += call["input_tokens"]
        call["cumulative_input"] = cumulative
        cached_total += cached
    doc["trace"]["total_input_tokens"] -= cached_total
    return {"event": "task_finished", "task_id": task_id, "epoch": 1, "record": doc}


def _as_event(record: TaskRecord, task_id: str) -> dict:
    """``record``'s ``task_finished`` event as today's evalnb writes it."""
    doc = record.model_dump(mode="json")
    doc["task"]["id"] = doc["score"]["task_id"] = task_id
    return {"event": "task_finished", "task_id": task_id, "epoch": 1, "record": doc}


def _legacy_store(root: Path, run_id: str = "old", **settings: str) -> RunStore:
    meta = RunMeta(run_id=run_id, provider="anthropic", model="m")
    meta.settings = meta.settings.model_copy(update=settings)
    return RunStore.create(root, meta)


def _todays_counts(calls: pl.DataFrame) -> None:
    """WHOLE's calls, in today's meaning (never the legacy values, never counted twice)."""
    calls = calls.sort("call_number")
    assert calls.get_column("input_tokens").to_list() == [70_003, 70_505]
    assert calls.get_column("cache_write_tokens").to_list() == [70_000, 500]
    assert calls.get_column("cumulative_input").to_list() == [70_003, 140_508]
    assert "cache_creation_tokens" not in calls.columns


def test_a_legacy_event_record_is_read_in_todays_meaning(tmp_path: Path):
    store = _legacy_store(tmp_path)
    store.append(_as_legacy_event(_record(WHOLE)))
    [record] = store.records()
    assert [c.input_tokens for c in record.trace.llm_calls] == [70_003, 70_505]
    assert [c.cumulative_input for c in record.trace.llm_calls] == [70_003, 140_508]
    assert record.trace.total_input_tokens == 140_508


def test_a_resumed_legacy_run_reads_old_and_new_lines_each_in_its_own_meaning(tmp_path: Path):
    store = _legacy_store(tmp_path)
    store.append(_as_legacy_event(_record(WHOLE), "old-line"))  # before the upgrade
    store.append(_as_event(_record(WHOLE), "new-line"))  # resumed by today's evalnb
    totals = {r.task.id: r.trace.total_input_tokens for r in store.records()}
    assert totals == {"old-line": 140_508, "new-line": 140_508}

    runs = read_run_folder(store.path)
    for task_id in ("old-line", "new-line"):
        _todays_counts(runs.llm_calls.filter(pl.col("task_id") == task_id))
    assert runs.tasks.get_column("base_context").to_list() == [70_003, 70_003]


def test_finalizing_a_legacy_run_writes_todays_counts(tmp_path: Path):
    store = _legacy_store(tmp_path)
    store.append(_as_legacy_event(_record(WHOLE)))
    store.finalize()
    _todays_counts(pl.read_parquet(store.path / "llm_calls.parquet"))
    tasks = pl.read_parquet(store.path / "tasks.parquet")
    assert tasks.select("total_input_tokens", "base_context").row(0) == (140_508, 70_003)


def test_merging_legacy_shards_writes_todays_counts(tmp_path: Path):
    from evalnb.store.merge import merge_shards

    shards = []
    for i in (1, 2):
        store = _legacy_store(tmp_path / "shards", f"s{i}", shard=f"{i}/2")
        store.append(_as_legacy_event(_record(WHOLE), f"t{i}"))
        store.finalize()
        shards.append(store.path)
    merged = merge_shards(shards, tmp_path / "merged")

    # the events are the shards' lines as written (each record is upgraded as it is read)
    lines = "".join((shard / "events.jsonl").read_text() for shard in shards)
    assert (merged / "events.jsonl").read_text() == lines
    calls = pl.read_parquet(merged / "llm_calls.parquet")
    for task_id in ("t1", "t2"):
        _todays_counts(calls.filter(pl.col("task_id") == task_id))
    again = RunStore.open(merged).records()  # the merged events read back the same
    assert [r.trace.total_input_tokens for r in again] == [140_508, 140_508]


def test_a_legacy_run_in_progress_is_upgraded_from_one_read_of_its_events(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    store = RunStore.create(tmp_path, RunMeta(run_id="live", provider="anthropic", model="m"))
    record = _record(WHOLE).model_dump(mode="json")
    for call in record["trace"]["llm_calls"]:  # as evalnb wrote calls before cache writes
        call["input_tokens"] -= call["cache_read_tokens"] + call["cache_write_tokens"]
        call["cache_creation_tokens"] = call.pop("cache_write_tokens")
    record["trace"]["total_input_tokens"] = 3 + 5
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
    readers (one rule for them all, :func:`evalnb.formats.agent_logs.task_record`)."""
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
