"""``evalnb export otel``: OTLP JSON that reads back to the same per-call figures, and spans
sent through the OpenTelemetry SDK's exporter to real receivers (Arize Phoenix)."""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import threading
import time
from collections import Counter
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, HTTPServer
from pathlib import Path
from typing import Any, ClassVar

import httpx
import pytest

import evalnb as en
from evalnb._cli import main
from evalnb._formats.otel_write import write_otel
from tests.conftest import ROOT
from tests.trace_figures import sim_run


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return sim_run(tmp_path_factory.mktemp("runs"))


def _rows(runs: en.Runs, table: str, *cols: str) -> list[tuple[Any, ...]]:
    return sorted(getattr(runs, table).select("task_id", "epoch", *cols).rows())


def test_the_otlp_json_file_reads_back_to_the_same_per_call_figures(run, tmp_path):
    path = write_otel([run], tmp_path / "spans.json")
    before, after = en.load(run), en.load(path)
    figures = (
        "call_number",
        "input_tokens",
        "output_tokens",
        "cache_read_tokens",
        "cache_write_tokens",
        "tool_calls_made",
        "stop_reason",
    )
    assert _rows(after, "llm_calls", *figures) == _rows(before, "llm_calls", *figures)
    latency = [r[-1] for r in _rows(after, "llm_calls", "call_number", "latency_ms")]
    assert latency == pytest.approx(
        [r[-1] for r in _rows(before, "llm_calls", "call_number", "latency_ms")], abs=1e-6
    )
    tools = ("call_index", "call_number", "commands", "exit_code")
    assert _rows(after, "tool_calls", *tools) == _rows(before, "tool_calls", *tools)
    run_row = after.runs.row(0, named=True)
    assert (run_row["run_id"], run_row["model"]) == (run.name, before.runs["model"][0])


def test_each_attempt_is_an_invoke_agent_span_with_chat_and_tool_children(run, tmp_path):
    doc = json.loads(write_otel([run], tmp_path / "spans.json").read_text())
    spans = [s for r in doc["resourceSpans"] for sc in r["scopeSpans"] for s in sc["spans"]]

    def attrs(span: dict[str, Any]) -> dict[str, Any]:
        return {a["key"]: next(iter(a["value"].values())) for a in span["attributes"]}

    agents = {s["spanId"]: s for s in spans if attrs(s)["gen_ai.operation.name"] == "invoke_agent"}
    runs = en.load(run)
    assert len(agents) == runs.tasks.height
    for span in spans:
        a = attrs(span)
        if span["spanId"] in agents:
            assert "gen_ai.usage.input_tokens" not in a  # usage at the call level only
            continue
        assert span["parentSpanId"] in agents
        assert span["traceId"] == agents[span["parentSpanId"]]["traceId"]
        kind = {"chat": "LLM", "execute_tool": "TOOL"}[a["gen_ai.operation.name"]]
        assert a["openinference.span.kind"] == kind
        if kind == "LLM":
            assert a["llm.token_count.prompt"] == a["gen_ai.usage.input_tokens"]
    assert main(["export", "otel", str(run), "--out", str(tmp_path / "spans.json")]) == 2


class _Receiver(BaseHTTPRequestHandler):
    """An OTLP/HTTP receiver: keeps each request's spans, or answers ``status``."""

    status: ClassVar[int] = 200
    received: ClassVar[list[Any]] = []

    def do_POST(self) -> None:
        from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
            ExportTraceServiceRequest,
        )

        body = self.rfile.read(int(self.headers["Content-Length"]))
        request = ExportTraceServiceRequest()
        request.ParseFromString(body)
        type(self).received.append(request)
        self.send_response(self.status)
        self.send_header("Content-Type", "application/x-protobuf")
        self.end_headers()

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture
def receiver() -> Iterator[tuple[str, type[_Receiver]]]:
    handler = type("Receiver", (_Receiver,), {"received": [], "status": 200})
    server = HTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_port}", handler
    server.shutdown()
    server.server_close()


def test_the_endpoint_gets_the_spans_through_the_sdk_exporter(run, receiver):
    url, handler = receiver
    assert main(["export", "otel", str(run), "--endpoint", url]) == 0
    spans = [
        span
        for request in handler.received
        for resource in request.resource_spans
        for scope in resource.scope_spans
        for span in scope.spans
    ]
    runs = en.load(run)
    assert len(spans) == runs.tasks.height + runs.llm_calls.height + runs.tool_calls.height
    inputs = [
        next(a.value.int_value for a in s.attributes if a.key == "gen_ai.usage.input_tokens")
        for s in spans
        if s.name.startswith("chat")
    ]
    assert sorted(inputs) == sorted(runs.llm_calls.get_column("input_tokens").to_list())


def test_a_receiver_that_refuses_the_spans_is_an_error(run, receiver, capsys):
    url, handler = receiver
    handler.status = 400  # not retried by the exporter
    assert main(["export", "otel", str(run), "--endpoint", url + "/v1/traces"]) == 2
    assert "did not accept the spans" in capsys.readouterr().err


def _phoenix_command() -> str | None:
    """Phoenix's ``phoenix`` command: ``$EVALNB_PHOENIX``, the ``.venv-phoenix`` that
    ``.ci/run`` makes, or one on PATH."""
    for found in (
        os.environ.get("EVALNB_PHOENIX"),
        ROOT / ".venv-phoenix" / "bin" / "phoenix",
        shutil.which("phoenix"),
    ):
        if found and Path(found).is_file():
            return str(found)
    return None


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture(scope="module")
def phoenix(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A real Arize Phoenix on 127.0.0.1, started for these tests and stopped after."""
    command = _phoenix_command()
    if command is None:
        pytest.skip(
            "Arize Phoenix is not installed: .ci/run installs it in .venv-phoenix (it pins "
            "anthropic<2, so it cannot share evalnb's environment); or set EVALNB_PHOENIX"
        )
    home = tmp_path_factory.mktemp("phoenix")
    port = _free_port()
    env = {
        **os.environ,
        "PHOENIX_WORKING_DIR": str(home),
        "PHOENIX_HOST": "127.0.0.1",
        "PHOENIX_PORT": str(port),
        "PHOENIX_GRPC_PORT": str(_free_port()),
        "PHOENIX_TELEMETRY_ENABLED": "false",
    }
    log = (home / "phoenix.log").open("w")
    proc = subprocess.Popen([command, "serve"], env=env, stdout=log, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 300  # starting Phoenix takes a minute on a busy machine
    try:
        while True:
            if proc.poll() is not None:
                pytest.fail(f"phoenix serve exited: {(home / 'phoenix.log').read_text()[-2000:]}")
            try:
                if httpx.get(f"{url}/healthz", timeout=2).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            if time.monotonic() > deadline:
                pytest.fail("phoenix serve did not answer within 300 s")
            time.sleep(1)
        yield url
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        log.close()


def _phoenix_spans(url: str, expected: int) -> list[dict[str, Any]]:
    """The project's spans, once Phoenix has stored all ``expected`` of them (or 60 s)."""
    deadline = time.monotonic() + 60
    while True:
        spans, cursor = [], None
        while True:
            params: dict[str, Any] = {"limit": 1000, **({"cursor": cursor} if cursor else {})}
            page = httpx.get(f"{url}/v1/projects/evalnb/spans", params=params, timeout=10)
            if page.status_code == 404:  # the project appears with its first span
                break
            page.raise_for_status()
            spans += page.json()["data"]
            cursor = page.json().get("next_cursor")
            if not cursor:
                break
        if len(spans) >= expected or time.monotonic() > deadline:
            return spans
        time.sleep(1)


def test_phoenix_receives_every_span_with_its_token_counts(run, phoenix):
    assert main(["export", "otel", str(run), "--endpoint", phoenix]) == 0
    runs = en.load(run)
    calls, tools = runs.llm_calls, runs.tool_calls
    spans = _phoenix_spans(phoenix, runs.tasks.height + calls.height + tools.height)
    kinds = Counter(s["span_kind"] for s in spans)
    assert kinds == {"AGENT": runs.tasks.height, "LLM": calls.height, "TOOL": tools.height}
    llm = [s["attributes"] for s in spans if s["span_kind"] == "LLM"]
    for key, column in [
        ("llm.token_count.prompt", "input_tokens"),
        ("gen_ai.usage.input_tokens", "input_tokens"),
        ("llm.token_count.completion", "output_tokens"),
    ]:
        assert sorted(a[key] for a in llm) == sorted(calls.get_column(column).to_list()), key
    agents = {s["context"]["span_id"] for s in spans if s["span_kind"] == "AGENT"}
    assert all(s["parent_id"] in agents for s in spans if s["span_kind"] != "AGENT")
    exits = Counter(
        s["attributes"].get("process.exit.code") for s in spans if s["span_kind"] == "TOOL"
    )
    assert exits == Counter(tools.get_column("exit_code").to_list())
