"""A provider used by several event loops leaves nothing behind: no side-channel noise.

A provider outlives an event loop when several ``asyncio.run`` calls use it (a judge
shared by guidance versions, a notebook cell run twice, two runs in one script). Each
loop's SDK client, with its open keep-alive connections to the server, is closed on
that loop before the loop ends, so garbage collection later finds nothing to close:
no "Event loop is closed" from a client closing itself on a later loop, no unclosed
socket. The real SDK clients talk to a real HTTP server on 127.0.0.1.
"""

from __future__ import annotations

import asyncio
import gc
import logging
import sys
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from evalnb._cli import main
from evalnb._runtime.bash_case import BashCase
from evalnb._runtime.providers.anthropic import AnthropicProvider
from evalnb._runtime.providers.openai import OpenAIProvider
from evalnb._runtime.runner import run_cases
from evalnb._store import RunStore
from evalnb.records import ContentBlock, Message, Task
from evalnb.records.interfaces import ChatRequest, Provider
from tests import http_fixtures as hf
from tests.fault_server import FaultServer

REQUEST = ChatRequest(
    system="",
    messages=[Message(role="user", content=[ContentBlock(type="text", text="hi")])],
    tools=[],
    task=Task(id="t", category="c", prompt="hi"),
)


@pytest.fixture
def server():
    s = FaultServer()
    yield s
    s.stop()


@pytest.fixture(params=["openai", "anthropic"])
def provider(request, server) -> Provider:
    if request.param == "openai":
        return OpenAIProvider("m", api_key="k", base_url=server.url("ok"), max_retries=0)
    return AnthropicProvider("m", api_key="k", base_url=server.url("ok", ""), max_retries=0)


@contextmanager
def side_reports(caplog: pytest.LogCaptureFixture) -> Iterator[list[str]]:
    """What Python reports beside the results while the block runs and after a final
    garbage collection: unraisable exceptions (``Exception ignored in ...``), errors the
    event loop logs (``Task exception was never retrieved``) and ResourceWarnings."""
    reports: list[str] = []
    hook = sys.unraisablehook
    sys.unraisablehook = lambda u: reports.append(
        f"unraisable {u.exc_type.__name__}: {u.exc_value}"
    )
    try:
        with warnings.catch_warnings(record=True) as caught, caplog.at_level(logging.ERROR):
            warnings.simplefilter("always", ResourceWarning)
            yield reports
            gc.collect()
        reports += [f"{w.category.__name__}: {w.message}" for w in caught]
        reports += [f"logged: {r.getMessage()}" for r in caplog.records if r.name == "asyncio"]
    finally:
        sys.unraisablehook = hook


async def chat_then_collect(provider: Provider) -> None:
    """One call, then a garbage collection while this loop still runs (as happens when
    an earlier loop's client is dropped in the middle of a later run)."""
    await provider.chat(REQUEST)
    gc.collect()


def test_a_provider_used_by_three_event_loops_closes_each_loops_client(provider, caplog):
    with side_reports(caplog) as reports:
        for _ in range(3):
            asyncio.run(chat_then_collect(provider))
        del provider
    assert reports == []


def test_two_runs_in_one_process_with_one_provider_leave_no_noise(server, tmp_path, caplog):
    model = OpenAIProvider("m", api_key="k", base_url=server.url("ok"), max_retries=0)
    case = BashCase(
        Task(id="t", category="c", prompt="p", expectations=[{"check": "stdout_contains:ok"}])
    )
    with side_reports(caplog) as reports:
        paths = [
            path
            for out in ("first", "second")
            for path in asyncio.run(run_cases([case], [model], tmp_path / out, progress=False))
        ]
        del model
    assert [RunStore.open(p).records()[0].score.all_passed() for p in paths] == [True, True]
    assert len(server.requests) == 4  # two turns per run, all answered
    assert reports == []


def test_a_judge_shared_by_two_guidance_versions_leaves_no_noise(
    server, tmp_path, monkeypatch, caplog
):
    data = Path(__file__).resolve().parents[1] / "data"
    agent = Path(__file__).parent / "scripts" / "notes_export_report.good.yaml"
    v1, v2 = (data / "tools" / "notes" / f"AGENTS.{v}.md" for v in ("v1", "v2"))
    argv = ["run", str(data / "scenarios" / "notes_export_report.yaml"), "--quiet"]
    argv += ["--model", f"scripted:{agent}", "--out", str(tmp_path), "--judge", "openai/judge"]
    argv += ["--base-url", server.url("judge"), "--guidance", f"v1={v1}", "--guidance", f"v2={v2}"]
    with side_reports(caplog) as reports:
        assert main(argv) == 0
    assert [r["path"] for r in server.requests] == ["/judge/v1/chat/completions"] * 2
    assert reports == []


def test_an_http_client_given_to_the_provider_stays_open_for_its_owner():
    api = hf.MockAPI(*(hf.openai_ok(hf.openai_completion("hi")) for _ in range(2)))
    http_client = api.client()
    provider = OpenAIProvider("m", api_key="k", http_client=http_client, max_retries=0)
    replies = [asyncio.run(provider.chat(REQUEST)).text for _ in range(2)]
    assert replies == ["hi", "hi"]
    assert not http_client.is_closed
