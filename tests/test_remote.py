"""Runs read from a URL through fsspec: fsspec's memory filesystem and a real HTTP server.

A run folder copied to object storage (say the merged parquet of a sharded run) must
load from its URL with the same tables and figures as from its folder.
"""

from __future__ import annotations

import functools
import http.server
import logging
import re
import sys
import threading
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path

import fsspec
import polars as pl
import pytest

import evalnb as en
from evalnb._analysis.load import read_input
from evalnb._analysis.runs import Runs
from evalnb._formats.detect import recognise
from evalnb._store import RunStore
from evalnb._store.tables import TABLES
from evalnb.errors import InputError, SetupError
from evalnb.records import AgentTrace, RunMeta, Task, TaskRecord, TaskScore, ToolCallResult

from .conftest import FIXTURES


def _record(task_id: str, epoch: int, codes: list[int]) -> TaskRecord:
    calls = [
        ToolCallResult(commands=f"ls /data/{i}", exit_code=code, call_index=i, call_number=i + 1)
        for i, code in enumerate(codes)
    ]
    return TaskRecord(
        task=Task(id=task_id, category="files", prompt="p"),
        epoch=epoch,
        trace=AgentTrace(tool_calls=calls, natural_stop=True),
        score=TaskScore(task_id=task_id, score=float(codes.count(0)), max_score=len(codes)),
    )


def _runs_folder(root: Path, *, counted: bool = False) -> Path:
    """Two complete runs under root/runs (``counted``: their run.json gives their number of
    attempts, as a finished run's does, so their tasks rows are held in memory when loaded)."""
    runs = root / "runs"
    for run_id, codes in [("r1", [0, 1, 0]), ("r2", [1, 1])]:
        meta = RunMeta(
            run_id=run_id,
            provider="reference",
            model="reference",
            status="complete",
            task_count=6 if counted else None,
        )
        records = [_record(f"t{i}", e, codes) for i in range(3) for e in (1, 2)]
        RunStore.write_records(runs, meta, records)
    return runs


def _to_memory(folder: Path, prefix: str) -> str:
    """Copy folder's files into fsspec's memory filesystem; returns the URL of the copy."""
    return _copied(folder, f"memory://{prefix}")


def _copied(folder: Path, url: str) -> str:
    """Copy folder's files under ``url`` (any fsspec filesystem); returns ``url``."""
    fs, root = fsspec.core.url_to_fs(url)
    for file in folder.rglob("*"):
        if file.is_file():
            fs.pipe(f"{root}/{file.relative_to(folder).as_posix()}", file.read_bytes())
    return url


def _same_tables(a: Runs, b: Runs) -> None:
    for name in TABLES:
        assert a.frame(name).equals(b.frame(name)), name


def test_a_folder_of_runs_in_object_storage_loads_like_the_local_folder(tmp_path):
    runs = _runs_folder(tmp_path)
    url = _to_memory(runs, "bucket-a/runs")
    remote, local = en.load(url), en.load(runs)
    assert isinstance(remote, Runs) and isinstance(local, Runs)
    assert remote.runs.get_column("run_id").to_list() == ["r1", "r2"]
    _same_tables(remote, local)
    assert en.summary(remote).equals(en.summary(local))
    assert en.interaction(remote, by="run").equals(en.interaction(local, by="run"))


def test_one_run_folder_and_a_glob_of_run_folders_by_url(tmp_path):
    url = _to_memory(_runs_folder(tmp_path), "bucket-b/runs")
    one = en.load(f"{url}/r2/")
    assert one.runs.get_column("run_id").to_list() == ["r2"]
    assert one.tasks.height == 6
    both = en.load(f"{url}/r*")
    assert both.runs.get_column("run_id").to_list() == ["r1", "r2"]


def test_a_published_run_reads_the_same_from_a_url(tmp_path):
    files = sorted(FIXTURES.glob("*.json"))
    if not files:
        pytest.skip("../shared/fixtures/bashkit-eval is absent")
    fmt = recognise(files[0])
    assert fmt is not None and fmt.read is not None
    ((meta, records),) = fmt.read(files[0])
    complete = meta.model_copy(update={"status": "complete"})
    folder = RunStore.write_records(tmp_path, complete, records)
    url = _to_memory(folder, f"bucket-c/{folder.name}")
    remote, local = en.load(url), en.load(folder)
    _same_tables(remote, local)
    assert en.summary(remote).drop("started_at").equals(en.summary(local).drop("started_at"))


@pytest.fixture
def http_root(tmp_path: Path) -> Iterator[tuple[Path, str]]:
    """A real HTTP server on 127.0.0.1 serving tmp_path/www."""
    www = tmp_path / "www"
    www.mkdir()
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(www))
    handler.log_message = lambda *args: None  # type: ignore[attr-defined]
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield www, f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def test_a_run_served_over_http_loads_like_its_folder(http_root, tmp_path):
    www, base = http_root
    runs = _runs_folder(tmp_path)
    (runs / "r1").rename(www / "r1")
    remote, local = en.load(f"{base}/r1/"), en.load(www / "r1")
    _same_tables(remote, local)
    assert en.summary(remote).get_column("tool_calls_error").to_list() == [6]


def test_a_run_in_progress_is_not_read_from_a_url(tmp_path):
    folder = RunStore.create(tmp_path, RunMeta(run_id="live", provider="p", model="m")).path
    url = _to_memory(folder, "bucket-d/live")
    with pytest.raises(InputError, match="only complete runs") as info:
        en.load(url)
    assert info.value.field == "status"


def test_a_url_that_names_nothing_or_no_run_is_an_input_error(tmp_path):
    with pytest.raises(InputError, match="no file or folder matches"):
        en.load("memory://bucket-e/nothing-here")
    fsspec.filesystem("memory").pipe("/bucket-e/notes/readme.txt", b"hello")
    with pytest.raises(InputError, match="not a run folder"):
        en.load("memory://bucket-e/notes")


def test_a_damaged_table_at_a_url_is_named(tmp_path):
    url = _to_memory(_runs_folder(tmp_path), "bucket-f/runs")
    fsspec.filesystem("memory").pipe("/bucket-f/runs/r1/tool_calls.parquet", b"not parquet")
    with pytest.raises(InputError, match=r"r1/tool_calls.parquet: unreadable"):
        en.load(f"{url}/r1")
    failed = en.load(url, strict=False)
    assert failed.runs.get_column("run_id").to_list() == ["r2"]
    assert "tool_calls.parquet" in failed.errors[0].message


def test_without_fsspec_a_url_asks_for_the_remote_extra(monkeypatch):
    monkeypatch.setitem(sys.modules, "fsspec", None)  # import fsspec now fails
    with pytest.raises(SetupError, match=r"pip install 'evalnb\[remote\]'"):
        en.load("https://example.invalid/runs")


def test_tables_at_a_url_stay_lazy_until_used(tmp_path):
    url = _to_memory(_runs_folder(tmp_path), "bucket-g/runs")
    runs = en.load(url)
    en.summary(runs)
    assert "messages" not in repr(runs).split("tables loaded:")[1]
    assert runs.scan("tool_calls").select(pl.len()).collect().item() == 30


# Object storage: a real S3 server (moto's) on 127.0.0.1, reached by polars itself for
# listing, run.json and the parquet tables (projection and predicate pushdown).


@pytest.fixture(scope="module")
def s3_server() -> Iterator[str]:
    """moto's S3 server in a thread on 127.0.0.1; its URL."""
    from moto.server import ThreadedMotoServer

    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    try:
        yield f"http://{host}:{port}"
    finally:
        server.stop()


@pytest.fixture
def s3_bucket(s3_server: str, monkeypatch: pytest.MonkeyPatch) -> str:
    """An empty bucket on the local S3 server, reached through the usual AWS variables."""
    import s3fs

    for name, value in {
        "AWS_ACCESS_KEY_ID": "testing",
        "AWS_SECRET_ACCESS_KEY": "testing",
        "AWS_DEFAULT_REGION": "us-east-1",
        "AWS_ENDPOINT_URL": s3_server,
        "AWS_ALLOW_HTTP": "true",
    }.items():
        monkeypatch.setenv(name, value)
    s3fs.S3FileSystem.clear_instance_cache()
    bucket = f"runs-{len(s3fs.S3FileSystem().ls(''))}"
    s3fs.S3FileSystem().mkdir(bucket)
    return bucket


def test_runs_in_s3_load_like_their_folders_and_polars_scans_them_itself(s3_bucket, tmp_path):
    runs = _runs_folder(tmp_path)
    url = _copied(runs, f"s3://{s3_bucket}/runs")
    remote, local = en.load(url), en.load(runs)
    assert remote.runs.get_column("run_id").to_list() == ["r1", "r2"]
    assert en.summary(remote).equals(en.summary(local))
    assert en.interaction(remote, by="run").equals(en.interaction(local, by="run"))
    loaded = repr(remote).split("tables loaded:")[1]
    assert "messages" not in loaded and "tool_calls" not in loaded  # a summary reads neither
    plan = remote.scan("tasks").select("passed").explain()
    assert f"Parquet SCAN [s3://{s3_bucket}/runs/r1/tasks.parquet" in plan  # no download
    _same_tables(remote, local)
    one = read_input(f"{url}/r2")  # not listed first: its run.json is fetched on its own
    assert one.runs.get_column("run_id").to_list() == ["r2"]


def test_a_file_url_is_read_as_its_local_folder(tmp_path):
    runs = _runs_folder(tmp_path)
    remote, local = en.load(runs.as_uri()), en.load(runs)
    _same_tables(remote, local)
    plan = remote.scan("tool_calls").explain()
    assert "Parquet SCAN [" + str(runs / "r1" / "tool_calls.parquet") in plan


def test_runs_in_s3_are_found_and_read_by_polars_alone_without_fsspec(
    s3_bucket, tmp_path, monkeypatch
):
    runs = _runs_folder(tmp_path)
    url = _copied(runs, f"s3://{s3_bucket}/runs")
    monkeypatch.setitem(sys.modules, "fsspec", None)  # import fsspec now fails
    everything, local = en.load(url), en.load(runs)
    assert everything.runs.get_column("run_id").to_list() == ["r1", "r2"]
    assert en.summary(everything).equals(en.summary(local))
    _same_tables(everything, local)
    assert en.load(f"{url}/r2").runs.get_column("run_id").to_list() == ["r2"]  # one run
    assert en.load(f"{url}/r*").runs.get_column("run_id").to_list() == ["r1", "r2"]  # a glob
    with pytest.raises(InputError, match="no run folders here"):
        en.load(f"s3://{s3_bucket}/nothing-here")
    with pytest.raises(InputError, match="no run folders here"):  # runs two levels down
        en.load(f"s3://{s3_bucket}")


def _fetched(caplog: pytest.LogCaptureFixture, bucket: str) -> Counter[str]:
    """How many times each object of ``bucket`` was fetched, by its key, from moto's log
    of the requests it served (a listing is no object; an object that is not there, 404,
    is not fetched)."""
    fetched = re.compile(rf'GET /{bucket}/(\S+) HTTP\S*" 2\d\d ')
    return Counter(m.group(1) for r in caplog.records if (m := fetched.search(r.getMessage())))


def test_a_summary_of_runs_in_s3_fetches_their_run_json_once_and_no_table_but_tasks(
    s3_bucket, tmp_path, caplog
):
    url = _copied(_runs_folder(tmp_path), f"s3://{s3_bucket}/runs")
    with caplog.at_level(logging.INFO, logger="werkzeug"):  # moto's server logs each request
        runs = en.load(url)
        en.summary(runs)
    fetched = _fetched(caplog, s3_bucket)
    assert {key: n for key, n in fetched.items() if key.endswith("run.json")} == {
        "runs/r1/run.json": 1,
        "runs/r2/run.json": 1,
    }  # by the listing
    assert not [r for r in caplog.records if '" 404 ' in r.getMessage()]  # nothing not there
    tables = {key.rsplit("/", 1)[1] for key in fetched if key.endswith(".parquet")}
    assert tables == {"tasks.parquet"}
    caplog.clear()
    with caplog.at_level(logging.INFO, logger="werkzeug"):
        assert runs.scan("tool_calls").select(pl.len()).collect().item() == 30
    assert {key.rsplit("/", 1)[1] for key in _fetched(caplog, s3_bucket)} == {"tool_calls.parquet"}


def test_a_damaged_table_in_s3_that_a_summary_does_not_read_is_named_when_it_is_used(
    s3_bucket, tmp_path
):
    runs = _runs_folder(tmp_path)
    (runs / "r2" / "llm_calls.parquet").write_bytes(b"not parquet")
    url = _copied(runs, f"s3://{s3_bucket}/runs")
    loaded = en.load(url)
    assert en.summary(loaded).get_column("run_id").to_list() == ["r1", "r2"]
    with pytest.raises(InputError, match=rf"s3://{s3_bucket}/runs/r2/llm_calls\.parquet: unr"):
        loaded.scan("llm_calls").select("run_id").collect()
    with pytest.raises(InputError, match=r"llm_calls\.parquet"):
        _ = loaded.llm_calls


def test_held_tasks_in_s3_are_read_in_one_scan_without_reading_their_footers_first(
    s3_bucket, tmp_path, caplog
):
    runs = _runs_folder(tmp_path, counted=True)
    url = _copied(runs, f"s3://{s3_bucket}/runs")
    with caplog.at_level(logging.INFO, logger="werkzeug"):
        remote = en.load(url)
        summary = en.summary(remote)
    assert summary.equals(en.summary(en.load(runs)))
    assert isinstance(remote.source("tasks"), pl.DataFrame)  # held: no request after load
    fetched = _fetched(caplog, s3_bucket)
    tasks = {key: n for key, n in fetched.items() if key.endswith("tasks.parquet")}
    # each (small) file once by the scan; the first one's schema once more beforehand, to
    # be checked
    assert tasks == {"runs/r1/tasks.parquet": 2, "runs/r2/tasks.parquet": 1}


def _rewritten(file: Path, change: Callable[[pl.DataFrame], pl.DataFrame]) -> None:
    change(pl.read_parquet(file)).write_parquet(file)


def _lacking(file: Path) -> None:
    _rewritten(file, lambda t: t.drop("passed"))


@pytest.mark.parametrize(
    ("counted", "damage", "reason"),
    [
        (False, _lacking, "lacks columns"),  # the tasks scanned, their footers read first
        (True, _lacking, "lacks columns"),  # held: their footers read when the read fails
        (
            True,
            lambda file: _rewritten(file, lambda t: t.with_columns(pl.col("passed").cast(str))),
            "wrong column types",
        ),
        (True, lambda file: file.write_bytes(b"not parquet"), "unreadable"),
    ],
)
def test_a_damaged_tasks_file_in_s3_is_refused_naming_its_url(
    s3_bucket, tmp_path, counted, damage, reason
):
    runs = _runs_folder(tmp_path, counted=counted)
    damage(runs / "r2" / "tasks.parquet")
    url = _copied(runs, f"s3://{s3_bucket}/runs")
    with pytest.raises(InputError, match=rf"s3://{s3_bucket}/runs/r2/tasks\.parquet: {reason}"):
        en.load(url)
    with pytest.warns(UserWarning, match="1 input"):
        readable = en.load(url, strict=False)
    assert readable.runs.get_column("run_id").to_list() == ["r1"]
    assert en.summary(readable).equals(en.summary(en.load(runs / "r1")))


def test_damage_behind_a_table_s_footer_in_s3_is_named_when_its_rows_are_read(s3_bucket, tmp_path):
    runs = _runs_folder(tmp_path)
    calls = runs / "r2" / "tool_calls.parquet"
    data = bytearray(calls.read_bytes())
    data[8:200] = b"\xff" * 192  # the first column's pages: the footer still reads
    calls.write_bytes(bytes(data))
    remote = en.load(_copied(runs, f"s3://{s3_bucket}/runs"))  # reads no tool call yet
    named = rf"s3://{s3_bucket}/runs/r2/tool_calls\.parquet: its rows cannot be read \("
    with pytest.raises(InputError, match=named):
        remote.frame("tool_calls")
    assert en.summary(remote).height == 2  # a summary reads no tool call


def test_held_tasks_files_in_s3_of_two_schemas_are_read_each_with_its_own(s3_bucket, tmp_path):
    runs = _runs_folder(tmp_path, counted=True)
    _rewritten(runs / "r2" / "tasks.parquet", lambda t: t.with_columns(pl.lit(1).alias("more")))
    remote, local = en.load(_copied(runs, f"s3://{s3_bucket}/runs")), en.load(runs)
    _same_tables(remote, local)
    assert en.summary(remote).equals(en.summary(local))
