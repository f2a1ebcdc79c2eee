"""The judge: one client for every guidance version, reached like the models under test.

The CLI runs one run folder per guidance version; the judge provider is built once.
Each version must reach the judge through the real OpenAI SDK client: none may fail
with the client still bound to an earlier, closed event loop.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from evalnb._analysis.load import load
from evalnb._cli import main
from evalnb._runtime.providers.openai import OpenAIProvider
from evalnb.records import ContentBlock, Message, Task
from evalnb.records.interfaces import ChatRequest
from tests.fault_server import FaultServer

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "data"
JUDGED = DATA / "scenarios" / "notes_export_report.yaml"
AGENT = ROOT / "tests" / "scripts" / "notes_export_report.good.yaml"
V1, V2 = (DATA / "tools" / "notes" / f"AGENTS.{v}.md" for v in ("v1", "v2"))


@pytest.fixture
def server():
    s = FaultServer()
    yield s
    s.stop()


def test_every_guidance_version_is_judged_by_the_same_judge(tmp_path, server, monkeypatch, capsys):
    monkeypatch.setenv("OPENAI_BASE_URL", server.url("judge"))
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    argv = ["run", str(JUDGED), "--model", f"scripted:{AGENT}", "--out", str(tmp_path)]
    argv += ["--judge", "openai/judge-model", "--guidance", f"v1={V1}", "--guidance", f"v2={V2}"]
    code = main([*argv, "--quiet"])
    assert code == 0, capsys.readouterr().err
    tasks = load(tmp_path).tasks.sort("guidance")
    assert tasks["guidance"].to_list() == ["v1", "v2"]
    assert tasks["error"].to_list() == [None, None]
    assert tasks["judge_score"].to_list() == [1.0, 1.0]
    judged = [r for r in server.requests if r["path"].startswith("/judge/")]
    assert len(judged) == 2


def test_a_provider_serves_a_second_event_loop(server):
    provider = OpenAIProvider("m", base_url=server.url("ok"), timeout_s=5, max_retries=0)
    request = ChatRequest(
        system="",
        messages=[Message(role="user", content=[ContentBlock(type="text", text="hi")])],
        tools=[],
        task=Task(id="t", category="c", prompt="hi"),
    )
    first = asyncio.run(provider.chat(request))
    second = asyncio.run(provider.chat(request))
    assert first.tool_uses[0].input == second.tool_uses[0].input == {"commands": "echo ok"}


def test_the_judge_is_reached_through_the_runs_connection_flags(tmp_path, server, monkeypatch):
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    argv = ["run", str(JUDGED), "--model", f"scripted:{AGENT}", "--out", str(tmp_path)]
    argv += ["--judge", "openai/judge-model", "--base-url", server.url("judge")]
    assert main([*argv, "--quiet"]) == 0
    assert load(tmp_path).tasks["judge_score"].to_list() == [1.0]
    assert [r["path"] for r in server.requests] == ["/judge/v1/chat/completions"]
