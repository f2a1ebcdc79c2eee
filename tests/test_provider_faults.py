"""Provider faults through the real SDK clients: bounded retries, then success or a recorded error.

Each task of one run meets a different fault; a mock transport answers per task (it finds
the task's id in the prompt), so every fault is exercised while the others finish.
"""

from __future__ import annotations

import asyncio
import json
from collections import defaultdict

import httpx2
import polars as pl
import pytest

from evalnb._analysis.runs import read_run_folder
from evalnb._analysis.summary import summary
from evalnb._runtime.bash_case import BashCase
from evalnb._runtime.providers.anthropic import AnthropicProvider
from evalnb._runtime.providers.openai import OpenAIProvider
from evalnb._runtime.runner import run_cases
from evalnb.records import Task
from tests import http_fixtures as hf

RETRIES = 2


def anthropic_script(task_id: str) -> list:
    """What the API answers, request by request, for one task."""
    tool = hf.anthropic_ok(
        hf.anthropic_message(hf.anthropic_tool_use(f"echo ok-{task_id}"), stop_reason="tool_use")
    )
    done = hf.anthropic_ok(hf.anthropic_message(hf.anthropic_text("Done.")))
    overloaded = hf.anthropic_error(529, "overloaded_error", "Overloaded")
    return {
        "ok": [tool, done],
        "rate_limited": [
            hf.anthropic_error(429, "rate_limit_error", "slow down", retry_after="0"),
            tool,
            done,
        ],
        "storm_500": [hf.anthropic_error(500, "api_error", "Internal")] * (RETRIES + 1),
        "storm_502_529": [
            hf.anthropic_error(502, "api_error", "Bad gateway"),
            overloaded,
            tool,
            done,
        ],
        "timeout": [httpx2.ReadTimeout("read timed out"), tool, done],
        "reset": [httpx2.RemoteProtocolError("connection reset by peer"), tool, done],
        "malformed_json": [
            httpx2.Response(200, text="{not json", headers={"content-type": "application/json"})
        ],
        "cut_short": [
            httpx2.Response(
                200,
                text='{"id": "msg_01", "type": "mess',
                headers={"content-type": "application/json"},
            )
        ],
        "refusal": [
            hf.anthropic_ok(
                hf.anthropic_message(hf.anthropic_text("I can't help."), stop_reason="refusal")
            )
        ],
        "unknown_tool": [
            hf.anthropic_ok(
                hf.anthropic_message(
                    {
                        "type": "tool_use",
                        "id": "toolu_01x",
                        "name": "python",
                        "input": {"code": "1"},
                    },
                    stop_reason="tool_use",
                )
            ),
            tool,
            done,
        ],
    }[task_id]


class PerTaskAPI:
    """A transport that serves each task its own script and counts its requests."""

    def __init__(self, script) -> None:
        self.script = script
        self.queues: dict[str, list] = {}
        self.requests: dict[str, int] = defaultdict(int)

    def handle(self, request: httpx2.Request) -> httpx2.Response:
        body = json.loads(request.content)
        first = body["messages"][0] if "system" in body else body["messages"][1]
        text = (
            first["content"] if isinstance(first["content"], str) else first["content"][0]["text"]
        )
        task_id = text.removeprefix("task ")
        queue = self.queues.setdefault(task_id, list(self.script(task_id)))
        self.requests[task_id] += 1
        if not queue:
            return httpx2.Response(418, json={"error": {"message": "script exhausted"}})
        item = queue.pop(0)
        if isinstance(item, Exception):
            raise item
        return item

    def client(self) -> httpx2.AsyncClient:
        return httpx2.AsyncClient(transport=httpx2.MockTransport(self.handle))


def cases(ids) -> list[BashCase]:
    return [
        BashCase(
            Task(
                id=i,
                category="faults",
                prompt=f"task {i}",
                expectations=[{"check": f"stdout_contains:ok-{i}"}],
            )
        )
        for i in ids
    ]


@pytest.fixture(autouse=True)
def no_keys(monkeypatch):
    for name in ("ANTHROPIC_API_KEY", "OPENAI_API_KEY", "OPENAI_BASE_URL"):
        monkeypatch.delenv(name, raising=False)


def test_anthropic_faults_end_in_success_or_a_recorded_error_and_every_task_counts(tmp_path):
    ids = [
        "ok",
        "rate_limited",
        "storm_500",
        "storm_502_529",
        "timeout",
        "reset",
        "malformed_json",
        "cut_short",
        "refusal",
        "unknown_tool",
    ]
    api = PerTaskAPI(anthropic_script)
    provider = AnthropicProvider(
        hf.ANTHROPIC_MODEL, api_key="test-key", max_retries=RETRIES, http_client=api.client()
    )
    [path] = asyncio.run(run_cases(cases(ids), [provider], tmp_path, concurrency=4, progress=False))
    runs = read_run_folder(path)
    tasks = {r["task_id"]: r for r in runs.tasks.iter_rows(named=True)}
    assert set(tasks) == set(ids)  # nothing dropped

    for recovered in ("ok", "rate_limited", "storm_502_529", "timeout", "reset", "unknown_tool"):
        assert tasks[recovered]["passed"], (recovered, tasks[recovered]["error"])
    assert "HTTP 500" in tasks["storm_500"]["error"]
    assert api.requests["storm_500"] == RETRIES + 1  # bounded retries
    for broken in ("malformed_json", "cut_short"):
        assert tasks[broken]["error"] and not tasks[broken]["passed"], broken
    assert tasks["refusal"]["error"] is None and tasks["refusal"]["natural_stop"]
    assert not tasks["refusal"]["passed"]
    unknown = runs.tool_calls.filter(pl.col("task_id") == "unknown_tool")
    assert unknown["exit_code"].to_list() == [127, 0]

    row = summary(runs).row(0, named=True)
    assert row["total_tasks"] == len(ids)
    assert row["errored_tasks"] == 3
    assert row["total_passed"] == 6


def openai_script(task_id: str) -> list:
    tool = hf.openai_ok(
        hf.openai_completion(
            None, [hf.openai_tool_call(f"echo ok-{task_id}")], finish_reason="tool_calls"
        )
    )
    done = hf.openai_ok(hf.openai_completion("Done."))
    return {
        "ok": [tool, done],
        "rate_limited": [
            hf.openai_error(
                429,
                "Rate limit reached",
                error_type="requests",
                code="rate_limit_exceeded",
                retry_after="0",
            ),
            tool,
            done,
        ],
        "storm_503": [hf.openai_error(503, "Service unavailable", error_type="server_error")]
        * (RETRIES + 1),
        "bad_arguments": [
            hf.openai_ok(
                hf.openai_completion(
                    None,
                    [hf.openai_tool_call(arguments='{"commands": "echo')],
                    finish_reason="tool_calls",
                )
            ),
            tool,
            done,
        ],
        "content_filter": [hf.openai_ok(hf.openai_completion("", finish_reason="content_filter"))],
    }[task_id]


def test_openai_faults_end_in_success_or_a_recorded_error(tmp_path):
    ids = ["ok", "rate_limited", "storm_503", "bad_arguments", "content_filter"]
    api = PerTaskAPI(openai_script)
    provider = OpenAIProvider(
        hf.OPENAI_MODEL, api_key="test-key", max_retries=RETRIES, http_client=api.client()
    )
    [path] = asyncio.run(run_cases(cases(ids), [provider], tmp_path, concurrency=3, progress=False))
    tasks = {r["task_id"]: r for r in read_run_folder(path).tasks.iter_rows(named=True)}
    assert set(tasks) == set(ids)
    assert tasks["ok"]["passed"] and tasks["rate_limited"]["passed"]
    assert tasks["bad_arguments"]["passed"]  # the bad call was answered with an error, then fixed
    assert "HTTP 503" in tasks["storm_503"]["error"]
    assert api.requests["storm_503"] == RETRIES + 1
    assert tasks["content_filter"]["error"] is None and not tasks["content_filter"]["passed"]
