"""Inspect logs load column by column: the same tables as the records ``evalnb import`` writes.

:func:`evalnb.load` reads a foreign Inspect log straight into its tables
(:func:`~evalnb._formats.inspect_log.read_inspect_tables`: a tuple per row, one polars
frame per table); ``evalnb import`` writes task records
(:func:`~evalnb._formats.inspect_log.read_inspect_log`). Both come from one mapping of a
sample, and give the same tables. A sample's JSON is decoded with only the fields read;
one that evalnb cannot read is an error naming the file, the sample and the field.
"""

from __future__ import annotations

import json
import zipfile
from pathlib import Path

import pytest

import evalnb as en
from evalnb._analysis.runs import TABLES, runs_from_records, runs_from_tables
from evalnb._formats.inspect_columns import LLM_FIELDS, TOOL_FIELDS
from evalnb._formats.inspect_log import read_inspect_log, read_inspect_tables
from evalnb.errors import InputError
from evalnb.records import LLMCall, ToolCallResult
from tests.conftest import shared_fixture
from tests.inspect_logs import agentic_log
from tests.test_inspect import _with_sample


@pytest.fixture(scope="module")
def agentic(tmp_path_factory) -> Path:
    """An .eval log of the scripted agentic task (4 samples x 2 epochs)."""
    return Path(agentic_log(tmp_path_factory.mktemp("inspect")).location)


@pytest.fixture
def real_logs() -> list[Path]:
    """The published Inspect logs (inspect_ai 0.3.58's .eval, a later version's .json)."""
    folder = shared_fixture("inspect")
    return sorted(folder.glob("*.eval")) + sorted(folder.glob("*.json"))


def _both_ways(path: Path) -> tuple[en.Runs, en.Runs]:
    """The log's tables read column by column, and built from its task records."""
    return runs_from_tables(read_inspect_tables(path)[1]), runs_from_records(
        *read_inspect_log(path)
    )


def test_the_columns_and_the_records_of_a_log_give_the_same_tables(agentic, real_logs):
    for path in [agentic, *real_logs]:
        columns, records = _both_ways(path)
        for name in TABLES:
            assert getattr(columns, name).equals(getattr(records, name)), (path.name, name)


def test_loading_an_inspect_log_reads_its_columns(agentic):
    loaded = en.load(agentic)
    columns, _ = _both_ways(agentic)
    for name in ("llm_calls", "tool_calls", "checks", "messages"):
        assert loaded.frame(name).equals(getattr(columns, name)), name
    assert loaded.tasks.height == 8 and loaded.llm_calls.height > 8


def test_samples_stored_in_another_order_are_read_in_inspects_order(agentic, tmp_path):
    """An .eval log lists its samples by epoch, then id; rows follow their tasks."""
    shuffled = tmp_path / "shuffled.eval"
    with zipfile.ZipFile(agentic) as source, zipfile.ZipFile(shuffled, "w") as target:
        names = list(dict.fromkeys(source.namelist()))
        samples = [n for n in names if n.startswith("samples/")]
        assert len(samples) == 8
        for name in [n for n in names if n not in samples] + samples[::-1]:
            target.writestr(name, source.read(name))
    original, _ = _both_ways(agentic)
    reordered, records = _both_ways(shuffled)
    assert original.tasks.select("task_id", "epoch").rows() == [
        (task, epoch) for epoch in (1, 2) for task in ("count", "crash", "greet", "loop")
    ]
    for name in TABLES[1:]:  # the runs differ in their source file only
        assert getattr(reordered, name).equals(getattr(original, name)), name
        assert getattr(records, name).equals(getattr(original, name)), name


def test_a_call_row_has_every_field_of_evalnbs_calls():
    assert tuple(LLMCall.model_fields) == LLM_FIELDS
    fields = [f for f in ToolCallResult.model_fields if f != "invocations"]
    assert (*fields, "invocations_recorded") == TOOL_FIELDS


# --- bad input: each kind names the file, the sample and the field ----------------------


def _edited(agentic: Path, out: Path, edit) -> Path:
    """The agentic log with ``edit(sample)`` applied to its first ``count`` sample's JSON."""

    def rewrite(data: bytes) -> bytes:
        sample = json.loads(data)
        edit(sample)
        return json.dumps(sample).encode()

    return _with_sample(agentic, out, rewrite)


def _first(sample: dict, kind: str) -> dict:
    return next(e for e in sample["events"] if e["event"] == kind)


def _error(path: Path) -> str:
    with pytest.raises(InputError) as caught:
        en.load(path)
    return str(caught.value)


def test_a_field_evalnb_reads_missing_from_an_event_is_named(agentic, tmp_path):
    bad = _edited(agentic, tmp_path / "missing.eval", lambda s: _first(s, "tool").pop("function"))
    said = _error(bad)
    assert "missing.eval: samples/count_epoch_1.json: events[" in said
    assert said.endswith("].function: not a readable Inspect log: Field required")


def test_a_value_of_the_wrong_kind_is_named_with_the_value_read(agentic, tmp_path):
    def worded_time(sample: dict) -> None:
        _first(sample, "tool")["working_time"] = "slow"

    said = _error(_edited(agentic, tmp_path / "time.eval", worded_time))
    assert "samples/count_epoch_1.json: events[" in said
    assert said.endswith(
        "].working_time: not a readable Inspect log: Input should be a valid "
        'number or null (got "slow")'
    )


def test_a_number_written_as_a_string_reads_as_the_number(agentic, tmp_path):
    """As Inspect's own models read it (pydantic's lax mode)."""

    def quoted(sample: dict) -> None:
        usage = _first(sample, "model")["output"]["usage"]
        usage["input_tokens"] = str(usage["input_tokens"])

    edited = _edited(agentic, tmp_path / "quoted.eval", quoted)
    before, after = _both_ways(agentic)[0], _both_ways(edited)[0]
    assert after.llm_calls.equals(before.llm_calls)


def test_a_wrong_type_in_a_json_log_names_the_sample_by_its_place(real_logs, tmp_path):
    [path] = [p for p in real_logs if p.suffix == ".json"]
    doc = json.loads(path.read_text())
    doc["samples"][1]["scores"] = ["not", "a", "dict"]
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(doc))
    said = _error(bad)
    assert said.startswith(f"{bad}: samples[1].scores: not a readable Inspect log: ")
    assert "Input should be a valid dictionary or null" in said


def test_a_sample_that_is_not_json_names_its_line(agentic, tmp_path):
    def unquoted(data: bytes) -> bytes:
        return json.dumps(json.loads(data), indent=1).replace('"epoch"', "epoch", 1).encode()

    with zipfile.ZipFile(agentic) as archive:
        edited = unquoted(archive.read("samples/count_epoch_1.json"))
    line = edited[: edited.index(b"epoch")].count(b"\n") + 1
    said = _error(_with_sample(agentic, tmp_path / "unquoted.eval", unquoted))
    assert f"unquoted.eval:{line}: samples/count_epoch_1.json: not a readable Inspect log: " in said
    assert "Invalid JSON: JSON is malformed" in said
