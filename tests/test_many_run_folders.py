"""Many run folders load as one scan per table, with the figures each folder gives alone.

``en.load`` over a folder of run folders scans each table once over all of their files
(:mod:`evalnb._analysis.folders`). Whatever mix of folders it meets (runs of several
models and guidance versions, a run without attempts, an import whose tasks hold
``recorded`` figures, a damaged folder rebuilt from its events, a run in progress), every
table and every figure equals what the same folders give read one at a time, with the
tasks table held in memory or scanned lazily.
"""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest
from polars.testing import assert_frame_equal

import evalnb as en
from evalnb._analysis import folders
from evalnb._analysis.runs import Runs, read_run_folder
from evalnb._store import RunStore
from evalnb._store.tables import KEYS, TABLES
from evalnb.records import LLMCall, RunMeta, Task, TaskRecord, TaskScore

from .test_remote import _record

pytestmark = [
    pytest.mark.filterwarnings("ignore:no price for model"),
    pytest.mark.filterwarnings("ignore:.*tables rebuilt from events.jsonl"),
]


def _standard_runs(root: Path, n: int) -> list[Path]:
    """``n`` complete runs of three models and two guidance versions, of 0 to 3 tasks."""
    paths = []
    for i in range(n):
        records = [
            _record(f"t{t}", epoch, [0, (i + t) % 3, 1][: 1 + (i + t) % 3])
            for t in range(i % 4)
            for epoch in (1, 2)
        ]
        meta = RunMeta(
            run_id=f"run-{i:02d}",
            provider="reference",
            model=f"model-{i % 3}",
            guidance=f"v{i % 2}",
            status="complete",
            task_count=len(records),
        )
        paths.append(RunStore.write_records(root, meta, records))
    return paths


def _imported_run(root: Path) -> Path:
    """A run whose source recorded figures beyond its rows (its tasks hold ``recorded``)."""
    records = [
        TaskRecord(
            task=Task(id=f"t{i}", category="c", prompt="p"),
            score=TaskScore(task_id=f"t{i}", score=1.0, max_score=2.0),
            extra={"recorded": {"tool_call_count": 3 + i, "base_context": 900}},
        )
        for i in range(2)
    ]
    meta = RunMeta(run_id="imported", provider="p", model="m", source="bench-csv")
    return RunStore.write_records(root, meta.model_copy(update={"status": "complete"}), records)


def _damaged_run(root: Path) -> Path:
    """A complete run with LLM calls whose ``checks.parquet`` is gone: not scanned with the
    others, it is rebuilt from its events."""
    records = []
    for i in range(3):
        record = _record(f"t{i}", 1, [0, 1][: 1 + i % 2])
        calls = [LLMCall(call_number=n, input_tokens=900 + 40 * n * i) for n in (1, 2)]
        record.trace.llm_calls = calls
        records.append(record)
    meta = RunMeta(run_id="damaged", provider="anthropic", model="model-1", status="complete")
    path = RunStore.write_records(root, meta, records)
    (path / "checks.parquet").unlink()
    return path


def _live_run(root: Path) -> Path:
    store = RunStore.create(root, RunMeta(run_id="live", provider="reference", model="model-0"))
    record = _record("t9", 1, [1, 0])
    store.append(
        {
            "event": "task_finished",
            "task_id": "t9",
            "epoch": 1,
            "attempt": "a",
            "record": record.model_dump(mode="json"),
        }
    )
    return store.path


@pytest.fixture
def mixed(tmp_path: Path) -> list[Path]:
    """Every kind of folder a collection holds, in one folder (listed in name order)."""
    root = tmp_path / "runs"
    standard = _standard_runs(root, 9)
    return sorted([*standard, _imported_run(root), _damaged_run(root), _live_run(root)])


@pytest.fixture(params=["held", "held in batches", "lazy"])
def held_or_lazy(request, monkeypatch) -> str:
    """The tasks table held in memory (the default at this size, read in one batch, or
    in batches of a few folders) or scanned lazily."""
    if request.param == "lazy":
        monkeypatch.setattr(folders, "HELD_ATTEMPTS", 0)
    if request.param == "held in batches":
        monkeypatch.setattr(folders, "HELD_BATCH", 3)
    return request.param.split()[0]


def _rows(runs: Runs, name: str) -> pl.DataFrame:
    """A table without its integer keys (numbered per load), in a stable order."""
    frame = runs.frame(name).drop("attempt_key", "run_key", strict=False)
    return frame.sort(frame.columns, nulls_last=True)


def _figures(runs: Runs) -> dict[str, pl.DataFrame]:
    return {
        "summary": en.summary(runs),
        "by_category": en.by_category(runs).sort("run_id", "category"),
        "context_growth": en.context_growth(runs).sort(KEYS),
        "interaction": en.interaction(runs).sort(KEYS),
        "interaction by run": en.interaction(runs, by="run"),
    }


def test_every_table_and_figure_equals_the_folders_read_one_at_a_time(mixed, held_or_lazy):
    together = en.load(mixed[0].parent)
    alone = Runs.concat([read_run_folder(folder) for folder in mixed])
    assert together.runs.get_column("run_id").to_list() == [f.name for f in mixed]
    for name in TABLES:
        assert_frame_equal(_rows(together, name), _rows(alone, name), check_column_order=False)
    expected = _figures(alone)
    for name, figure in _figures(together).items():
        assert_frame_equal(figure, expected[name], check_column_order=False)
    assert together.tasks.filter(run_id="imported").get_column("tool_call_count").to_list() == [
        3,
        4,
    ]


def test_attempt_keys_are_unique_and_join_every_table_to_its_attempt(mixed, held_or_lazy):
    runs = en.load(mixed[0].parent)
    tasks = runs.tasks.select(*KEYS, "attempt_key")
    assert tasks.get_column("attempt_key").n_unique() == tasks.height
    for name in TABLES[2:]:
        rows = runs.frame(name).select(*KEYS, "attempt_key")
        joined = rows.join(tasks, on="attempt_key", how="left", suffix="_task")
        assert joined.height == rows.height
        for key in KEYS:
            assert (joined.get_column(key) == joined.get_column(f"{key}_task")).all(), (name, key)


def test_each_table_is_one_scan_over_every_folder(tmp_path, held_or_lazy):
    runs = en.load(_standard_runs(tmp_path, 12)[0].parent)
    lazy = TABLES[1:] if held_or_lazy == "lazy" else TABLES[2:]
    for name in lazy:
        plan = runs.scan(name).explain()
        assert plan.count("Parquet SCAN") == 1, name
        assert f"{name}.parquet, ... 11 other sources]" in plan, name
    if held_or_lazy == "held":
        assert "tasks" in repr(runs).split("tables loaded:")[1]


def test_runs_come_in_the_order_their_folders_were_given(mixed):
    given = [mixed[4], mixed[-1], mixed[0], mixed[-3], mixed[2]]
    runs = en.load(*given)
    assert runs.runs.get_column("run_id").to_list() == [folder.name for folder in given]
    assert en.summary(runs).get_column("run_id").to_list() == [folder.name for folder in given]


def test_folders_of_one_run_id_keep_the_first(tmp_path):
    first, second = (_standard_runs(tmp_path / side, 2)[1] for side in ("a", "b"))
    with pytest.raises(en.InputError, match=r"run 'run-01' is also in .*a/run-01") as error:
        en.load(first, second)
    assert error.value.field == "run_id"
    with pytest.warns(UserWarning, match="1 input"):
        runs = en.load(first, second, strict=False)
    assert runs.runs.height == 1 and runs.tasks.height == 2


def test_each_footer_is_read_directly_as_polars_reads_it(mixed, tmp_path):
    files = [f for folder in mixed for f in sorted(folder.glob("*.parquet"))]
    wide = tmp_path / "wide.parquet"  # a footer longer than one read of the file's end
    pl.DataFrame({f"column_{i:05d}": [i] for i in range(3000)}).write_parquet(wide)
    assert wide.stat().st_size > folders._TAIL
    for file in [*files, wide]:
        expected = pl.read_parquet_metadata(file)["ARROW:schema"].encode()
        assert folders.read_footer(str(file)) == (expected, None), file
        whole = folders.read_footer(str(file), whole=True)  # and the file with it
        assert whole == (expected, file.read_bytes()), file
    bare = tmp_path / "bare.parquet"  # no Arrow schema: its schema is read on its own
    pq = pytest.importorskip("pyarrow.parquet")
    pq.write_table(pl.DataFrame({"a": [1]}).to_arrow(), bare, store_schema=False)
    assert folders.read_footer(str(bare)) == (b"", None)
    cut = tmp_path / "cut.parquet"
    cut.write_bytes(files[0].read_bytes()[:-1])
    assert isinstance(folders.read_footer(str(cut)), ValueError)
    assert isinstance(folders.read_footer(str(tmp_path / "none.parquet")), FileNotFoundError)


def test_held_tasks_are_read_from_the_bytes_their_check_read_and_those_bytes_go(tmp_path):
    paths = _standard_runs(tmp_path, 6)
    stored = folders.read_stored(paths)
    assert all(not folder.data for folder in stored.intact)  # not kept alive with the runs
    assert stored.tables["tasks"].n_chunks() == 1  # not one chunk per file
    by_path = pl.concat([pl.read_parquet(p / "tasks.parquet") for p in paths])
    assert_frame_equal(stored.tables["tasks"].drop("attempt_key"), by_path.drop("attempt_key"))


def test_intact_folders_checked_and_read_batch_by_batch_give_the_tables_read_at_once(
    tmp_path, monkeypatch
):
    paths = _standard_runs(tmp_path, 9)
    at_once = en.load(*paths)
    monkeypatch.setattr(folders, "HELD_BATCH", 3)  # each batch read while the next is checked
    in_batches = en.load(*paths)
    assert in_batches.tasks.n_chunks() > 1
    for name in TABLES:
        assert_frame_equal(in_batches.frame(name), at_once.frame(name))
    expected = _figures(at_once)
    for name, figure in _figures(in_batches).items():
        assert_frame_equal(figure, expected[name])
