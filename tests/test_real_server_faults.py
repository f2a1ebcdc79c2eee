"""Faults from a real HTTP server on 127.0.0.1, through the real SDK clients and the runner.

Short timeouts keep these fast; every attempt still ends in a record, never a drop.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import socket
from pathlib import Path

import polars as pl
import pytest

from evalnb._analysis.runs import read_run_folder
from evalnb._runtime.bash_case import BashCase
from evalnb._runtime.fail_fast import FAIL_FAST_AFTER
from evalnb._runtime.providers.registry import resolve_provider
from evalnb._runtime.runner import RunStopped, resume, run_cases
from evalnb._store import RunStore
from evalnb.records import Connection, Task
from tests.fault_server import MASKED_KEY, FaultServer
from tests.test_secrets import everything_written

OPENAI_KEY = "sk-proj-evalnbFAKEopenai0123456789abcdef"
ANTHROPIC_KEY = "sk-ant-api03-evalnbFAKEanthropic0123456789"
FAST = {"request_timeout_s": 0.5, "max_retries": 1}
# stalls are cut at 2 s: a loaded machine answers the good requests well within it
FLAKY = {"request_timeout_s": 2, "max_retries": 0}
# the server answers at once, wrongly: a longer timeout keeps a loaded machine's slowness
# from reading as unreachable
PROMPT = {"request_timeout_s": 10, "max_retries": 1}


@pytest.fixture
def server():
    s = FaultServer()
    yield s
    s.stop()


@pytest.fixture(autouse=True)
def keys(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", OPENAI_KEY)
    monkeypatch.setenv("ANTHROPIC_API_KEY", ANTHROPIC_KEY)
    for name in ("OPENAI_BASE_URL", "ANTHROPIC_BASE_URL"):
        monkeypatch.delenv(name, raising=False)


def cases(n: int) -> list[BashCase]:
    return [
        BashCase(
            Task(
                id=f"t{i}",
                category="faults",
                prompt=f"task {i}",
                expectations=[{"check": "stdout_contains:ok"}],
            )
        )
        for i in range(n)
    ]


def run(tmp_path, model: str, n: int, **connection) -> tuple:
    [path] = asyncio.run(
        run_cases(
            cases(n),
            [model],
            tmp_path / "runs",
            concurrency=32,
            connection=Connection(**connection),
            progress=False,
        )
    )
    return path, read_run_folder(path)


def test_keys_stay_with_their_provider_unless_named(tmp_path, server):
    # --base-url is for OpenAI-compatible servers: it never moves anthropic/* models
    claude = resolve_provider("anthropic/m", connection=Connection(base_url=server.url("ok")))
    assert claude.settings()["base_url"] == "https://api.anthropic.com"

    run(tmp_path, "openai/m", 1, base_url=server.url("ok"))
    run(tmp_path, "anthropic/m", 1, anthropic_base_url=server.url("ok", ""))
    run(tmp_path, "openai/m", 1, base_url=server.url("ok"), api_key_env="OPENAI_API_KEY")
    paths = [r["path"] for r in server.requests]
    assert (
        paths
        == ["/ok/v1/chat/completions"] * 2
        + ["/ok/v1/messages"] * 2
        + ["/ok/v1/chat/completions"] * 2
    )
    sent = [json.dumps(r["headers"]) for r in server.requests]
    for headers in sent[:4]:  # no key unless named: a placeholder instead
        assert "not-needed" in headers
        assert OPENAI_KEY not in headers and ANTHROPIC_KEY not in headers
    for headers in sent[4:]:  # named with --api-key-env
        assert f"Bearer {OPENAI_KEY}" in headers


@pytest.mark.parametrize(
    ("mode", "cut_by"),
    [
        ("stall", "no complete answer within 1s"),  # 2 x 0.5 s plus the SDK's backoff
        ("drip", "no complete answer within 1s"),  # a byte at a time: the call's deadline
    ],
)
def test_a_stalling_or_dripping_server_is_cut_by_the_request_timeout(
    tmp_path, server, mode, cut_by
):
    path, runs = run(tmp_path, "openai/m", 3, base_url=server.url(mode), **FAST)
    assert runs.tasks.height == 3
    errors = runs.tasks["error"]
    assert errors.str.starts_with("provider unreachable on turn 1").all(), errors.to_list()
    assert errors.str.contains(cut_by, literal=True).all(), errors.to_list()
    meta = json.loads((path / "run.json").read_text())["settings"]
    assert meta["connection"]["request_timeout_s"] == 0.5
    assert meta["connection"]["max_retries"] == 1
    assert meta["task_timeout_s"] == 900.0


def test_the_task_timeout_bounds_an_attempt_including_retries(tmp_path, server):
    [path] = asyncio.run(
        run_cases(
            cases(2),
            ["openai/m"],
            tmp_path / "runs",
            connection=Connection(base_url=server.url("stall"), request_timeout_s=5),
            task_timeout_s=0.5,
            progress=False,
        )
    )
    errors = read_run_folder(path).tasks["error"].to_list()
    assert errors == ["task timeout: the attempt ran past 0.5s (0 turns done)"] * 2


@pytest.mark.parametrize(
    ("model", "mode", "error"),
    [
        ("openai/m", "truncated", "bad provider response on turn 2: JSONDecodeError"),
        ("anthropic/m", "badinput", "bad provider response on turn 1: "),
    ],
)
def test_a_malformed_answer_keeps_the_trace_so_far_and_is_classified(
    tmp_path, server, model, mode, error
):
    url = (
        {"base_url": server.url(mode)}
        if model.startswith("openai")
        else {"anthropic_base_url": server.url(mode, "")}
    )
    _, runs = run(tmp_path, model, 2, **url, **PROMPT)
    assert runs.tasks["error"].str.starts_with(error).all(), runs.tasks["error"].to_list()
    if mode == "truncated":  # turn 1's call, tokens and tool call are all kept
        assert runs.llm_calls.height == 2 and runs.tool_calls.height == 2
        assert runs.tasks["total_input_tokens"].to_list() == [1200, 1200]


def test_url_secrets_and_masked_keys_never_reach_disk(tmp_path, server):
    secret_url = server.url("unauthorized").replace("://", "://admin:hunter2@")
    secret_url += "?api-key=supersecretquery&tenant=acme"
    path, runs = run(tmp_path, "openai/m", 2, base_url=secret_url, api_key_env="OPENAI_API_KEY")
    assert runs.tasks["error"].str.contains("HTTP 401").all()
    written = "\n".join(everything_written(path))
    for secret in ("hunter2", "supersecretquery", "acme", MASKED_KEY, OPENAI_KEY):
        assert secret not in written, secret
    stored = json.loads((path / "run.json").read_text())["settings"]["connection"]["base_url"]
    assert stored.startswith("http://[REDACTED]@127.0.0.1:")
    assert stored.endswith("?api-key=[REDACTED]&tenant=[REDACTED]")


def dead_url() -> str:
    """A base URL nothing listens on."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return f"http://127.0.0.1:{probe.getsockname()[1]}/v1"


def test_a_flaky_live_server_never_stops_the_run_however_its_failures_bunch(tmp_path, server):
    # 20% of requests fail (stalls cut at 2 s, dropped connections), no retries: about a
    # third of the attempts cannot reach it, and stalls that started together end together
    path, runs = run(tmp_path, "openai/m", 160, base_url=server.url("flaky"), **FLAKY)
    assert RunStore.open(path).meta.status == "complete"
    assert (path / "tasks.parquet").exists()
    assert runs.tasks.height == 160  # every attempt recorded
    errors = runs.tasks["error"].drop_nulls()
    assert errors.str.starts_with("provider unreachable").all(), errors.to_list()
    assert 0 < errors.len() < 160
    assert runs.tasks.filter(pl.col("error").is_null())["passed"].all()


def test_a_run_whose_every_attempt_is_recorded_is_complete_even_if_all_errored(tmp_path):
    path, runs = run(tmp_path, "openai/m", FAIL_FAST_AFTER, base_url=dead_url(), **FAST)
    assert RunStore.open(path).meta.status == "complete"
    assert runs.tasks.height == FAIL_FAST_AFTER
    assert runs.tasks["error"].str.starts_with("provider unreachable").all()


def test_a_dead_endpoint_stops_the_run_which_resumes_and_retries_errored(tmp_path, server):
    dead = dead_url()
    with pytest.raises(RunStopped, match="could not be reached 5 times in a row") as stopped:
        run(tmp_path, "openai/m", 40, base_url=dead, **FAST)
    [folder] = (tmp_path / "runs").iterdir()
    assert f"evalnb run --resume {folder}" in str(stopped.value)
    # the stopped run closed its events file: nothing is left for the garbage collector
    assert str(folder / "events.jsonl") not in open_files()
    store = RunStore.open(folder)
    assert store.meta.status == "partial"
    finished = store.finished_keys()
    assert FAIL_FAST_AFTER <= len(finished) < 40
    # resume against a live server; --retry-errored re-runs the attempts that errored
    fixed = Connection(base_url=server.url("ok"), request_timeout_s=10)
    asyncio.run(resume(folder, cases(40), connection=fixed, retry_errored=True, progress=False))
    runs = read_run_folder(folder)
    assert runs.tasks.height == 40
    assert runs.tasks["error"].is_null().all()
    assert runs.tasks["passed"].all()
    assert RunStore.open(folder).meta.status == "complete"
    assert pl.Series(runs.tasks["task_id"]).n_unique() == 40


def open_files() -> set[str]:
    """The files this process holds open (Linux; elsewhere an empty set)."""
    fds = Path("/proc/self/fd")
    found = set()
    for fd in os.listdir(fds) if fds.is_dir() else []:
        with contextlib.suppress(OSError):  # the listing's own descriptor is gone already
            found.add(os.readlink(fds / fd))
    return found
