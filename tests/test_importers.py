"""Importers: bashkit-eval result JSON read into evalnb records (other formats: test_formats_*)."""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl
import pytest

from evalnb._analysis.interaction import interaction
from evalnb._analysis.runs import Runs, read_run_folder
from evalnb._analysis.summary import summary
from evalnb._cli.imports import import_format
from evalnb._formats.bashkit_eval import read_bashkit_eval
from evalnb._formats.json_file import line_of
from evalnb._formats.tasks import load_tasks
from evalnb._store import RunStore
from evalnb._store.command_counts import COUNTS
from evalnb._store.tables import tables_from_records
from evalnb.errors import InputError

# Counted by hand from the files: the tool_use blocks in each file's assistant messages.
TOOL_CALLS = {"haiku": 116, "opus": 141, "gpt": 84}


def _runs(path: Path, **kwargs) -> Runs:
    meta, records = read_bashkit_eval(path, **kwargs)
    return Runs.concat([Runs(**tables_from_records(meta, records))])


def _raw(path: Path) -> dict:
    return json.loads(path.read_text())


def _write(path: Path, doc: dict) -> Path:
    path.write_text(json.dumps(doc, indent=2))
    return path


@pytest.fixture
def haiku(bashkit_eval_files) -> Path:
    return bashkit_eval_files[0]


def test_the_three_real_files_load_with_every_task_call_message_and_check(bashkit_eval_files):
    for path, name in zip(bashkit_eval_files, ["haiku", "opus", "gpt"], strict=True):
        raw = _raw(path)
        runs = _runs(path)
        assert runs.tasks.height == 25
        assert runs.tool_calls.height == TOOL_CALLS[name]
        blocks = sum(len(m["content"]) for r in raw["results"] for m in r["trace"]["messages"])
        assert runs.messages.height == blocks
        assert runs.checks.height == sum(len(r["score"]["results"]) for r in raw["results"])
        assert set(runs.checks.get_column("layer")) == {"expectation"}
        assert runs.runs.get_column("task_count").to_list() == [25]
        assert runs.runs.get_column("source").to_list() == ["bashkit-eval"]


def test_per_call_rows_have_turn_order_and_tool_calls_but_no_tokens(bashkit_eval_files):
    opus = _runs(bashkit_eval_files[1])
    calls = opus.llm_calls
    assert calls.height == opus.tasks.get_column("turns").sum()
    for column in ("input_tokens", "output_tokens", "latency_ms", "cumulative_input"):
        assert calls.get_column(column).null_count() == calls.height
    assert opus.tasks.get_column("base_context").null_count() == 25
    # every tool call is attributed to the assistant message that asked for it
    asked = opus.tool_calls.group_by("task_id", "call_number").len()
    made = calls.filter(pl.col("tool_calls_made") > 0).select(
        "task_id", "call_number", pl.col("tool_calls_made").cast(pl.UInt32).alias("len")
    )
    assert asked.sort("task_id", "call_number").equals(made.sort("task_id", "call_number"))
    assert calls.get_column("tool_calls_made").max() > 1  # Opus batches calls in one message


def test_run_meta_says_what_the_format_lacks_and_when_the_run_ran(haiku):
    meta, records = read_bashkit_eval(haiku)
    assert meta.run_id == "eval-anthropic-claude-haiku-4-5-2026-02-07-052023"
    assert (meta.provider, meta.model, meta.max_turns) == ("anthropic", "claude-haiku-4-5", 10)
    assert "per_call_tokens" in meta.settings.unavailable
    # timestamp 05:20:23 is the end; the 25 durations sum to 247035 ms = 4 min 7.035 s
    assert (meta.started_at, meta.finished_at) == ("2026-02-07T05:16:15Z", "2026-02-07T05:20:23Z")
    assert sum(r.passed for r in records) == 19  # the fixtures README: Haiku 19/25
    assert meta.status == "complete"


def test_categories_are_the_files_own_and_the_same_when_the_file_is_a_dataset(haiku):
    """Spec 000 groups by ``task.category``; the file's own ``summary.by_category`` is keyed
    by it. A replay runs the file's tasks as a dataset (load_tasks): the same categories."""
    tasks = _runs(haiku).tasks
    by_category = tasks.group_by("category").len().sort("category")
    recorded = _raw(haiku)["summary"]["by_category"]
    assert dict(by_category.rows()) == {name: c["tasks"] for name, c in recorded.items()}
    assert by_category.filter(pl.col("category") == "jq_mastery").item(0, "len") == 2
    dataset = {task.id: task.category for task in load_tasks(haiku)}
    assert dataset == dict(tasks.select("task_id", "category").rows())


def test_a_tampered_summary_changes_nothing(haiku, tmp_path):
    doc = _raw(haiku)
    doc["summary"].update(total_passed=25, overall_rate=1.0, tool_calls_ok=116, total_turns=1)
    tampered = _runs(_write(tmp_path / haiku.name, doc))
    original = _runs(haiku)
    for name in ("tasks", "tool_calls", "checks", "llm_calls", "messages"):
        assert getattr(tampered, name).equals(getattr(original, name))
    assert summary(tampered).equals(summary(original))


def test_a_partial_file_counts_only_the_tasks_it_holds_and_warns(haiku, tmp_path):
    doc = _raw(haiku)
    doc["results"] = doc["results"][3:]
    with pytest.warns(UserWarning, match=r"partial run: 22 tasks .* total_tasks=25"):
        meta, records = read_bashkit_eval(_write(tmp_path / "partial.json", doc))
    assert (len(records), meta.status, meta.task_count) == (22, "partial", 22)


def test_truncated_json_names_the_file_and_line(haiku, tmp_path):
    text = haiku.read_text()
    cut = tmp_path / "cut.json"
    cut.write_text(text[: len(text) // 2])
    with pytest.raises(InputError, match="invalid JSON") as err:
        read_bashkit_eval(cut)
    assert err.value.file == str(cut)
    assert err.value.line == text[: len(text) // 2].count("\n") + 1


def test_a_wrong_type_names_the_field_and_its_line(haiku, tmp_path):
    doc = _raw(haiku)
    doc["results"][2]["trace"]["tool_calls"][1]["exit_code"] = "0"
    bad = _write(tmp_path / "bad.json", doc)
    with pytest.raises(InputError) as err:
        read_bashkit_eval(bad)
    assert err.value.field == "results.2.trace.tool_calls.1.exit_code"
    assert err.value.file == str(bad)
    line = bad.read_text().splitlines()[err.value.line - 1]
    assert line.strip() == '"exit_code": "0"'


def test_a_missing_key_names_the_field(haiku, tmp_path):
    doc = _raw(haiku)
    del doc["results"][1]["score"]
    with pytest.raises(InputError, match=r"results\.1\.score: Field required"):
        read_bashkit_eval(_write(tmp_path / "bad.json", doc))


def test_tool_calls_that_do_not_match_the_tool_use_blocks_are_rejected(haiku, tmp_path):
    doc = _raw(haiku)
    trace = doc["results"][0]["trace"]
    trace["tool_calls"].pop()
    trace["tool_call_count"] -= 1
    with pytest.raises(InputError, match=r"results\.0\.trace\.tool_calls: .* do not match"):
        read_bashkit_eval(_write(tmp_path / "bad.json", doc))


def test_line_of_finds_nested_values_and_falls_back_to_the_parent():
    text = '{\n  "a": [\n    {"b": 1},\n    {\n      "c": 2\n    }\n  ]\n}'
    assert line_of(text, ("a", 1, "c")) == 5
    assert line_of(text, ("a", 1, "missing")) == 4
    assert line_of(text, ("a", 7)) == 2


def test_import_writes_run_folders_that_read_back_identically(bashkit_eval_files, tmp_path):
    folders = import_format("bashkit-eval", bashkit_eval_files, tmp_path)
    assert [f.name for f in folders] == [p.stem for p in bashkit_eval_files]
    for path, folder in zip(bashkit_eval_files, folders, strict=True):
        direct, stored = _runs(path), read_run_folder(folder)
        for name in ("tool_calls", "checks", "llm_calls", "messages"):
            assert getattr(stored, name).equals(getattr(direct, name)), name
        # the folder also stores each attempt's command counts: those counted from its calls
        assert stored.tasks.drop(COUNTS).equals(direct.tasks.drop(COUNTS))
        assert direct.tasks.get_column("total_commands").null_count() == direct.tasks.height
        counted = interaction(direct).select(COUNTS)
        assert stored.tasks.select(COUNTS).equals(counted)
        assert counted.get_column("total_commands").sum() > 0
        meta = RunStore.open(folder).meta
        assert meta.finished_at == _raw(path)["timestamp"]
        assert len(RunStore.open(folder).records()) == 25


def test_importing_twice_into_the_same_folder_is_refused(haiku, tmp_path):
    import_format("bashkit-eval", [haiku], tmp_path)
    with pytest.raises(InputError, match="already exists"):
        import_format("bashkit-eval", [haiku], tmp_path)
