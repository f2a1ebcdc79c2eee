"""A fault-injecting OpenAI- and Anthropic-compatible HTTP server on 127.0.0.1 (real sockets).

The first path segment picks the behaviour, so one server serves every fault at once:
``http://127.0.0.1:<port>/<mode>/v1`` with ``mode`` one of

- ``ok``: a tool call (``echo ok``) on turn 1, then a final answer;
- ``stall``: reads the request and never answers;
- ``drip``: sends headers, then one byte every :data:`DRIP_EVERY_S` seconds, forever;
- ``truncated``: turn 1 as ``ok``, turn 2 a 200 whose JSON body is cut in half;
- ``badinput``: an Anthropic ``tool_use`` whose ``input`` is a list, not an object;
- ``unauthorized``: a 401 whose message echoes a masked key (:data:`MASKED_KEY`);
- ``judge``: an OpenAI judge's ``submit_judgement`` call scoring every criterion of the
  notes rubric (:data:`JUDGE_CRITERIA`) 1;
- ``flaky``: as ``ok``, but 20% of its requests fail, in a fixed pattern by arrival: of
  every 10, the 5th stalls (never answered) and the 10th has its connection closed
  without an answer.

Every request is kept (``requests``: path and headers). The server runs in a daemon
thread; :meth:`FaultServer.stop` releases stalled handlers and shuts it down, and no
handler waits more than :data:`MAX_HOLD_S` seconds in any case.
"""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from tests import http_fixtures as hf

DRIP_EVERY_S = 0.4
MAX_HOLD_S = 30.0
MASKED_KEY = "sk-tes***cdef"
JUDGE_CRITERIA = ("command_correctness", "task_completion", "efficiency")


def _second_turn(body: dict[str, Any]) -> bool:
    """Whether the conversation already holds a tool result (Chat Completions or Messages)."""
    for message in body.get("messages", []):
        if message.get("role") == "tool":
            return True
        content = message.get("content")
        if isinstance(content, list) and any(b.get("type") == "tool_result" for b in content):
            return True
    return False


def _answer(anthropic: bool, turn2: bool, mode: str) -> dict[str, Any]:
    if anthropic:
        if turn2:
            return hf.anthropic_message(hf.anthropic_text("Done."))
        use = hf.anthropic_tool_use("echo ok")
        if mode == "badinput":
            use["input"] = ["echo", "ok"]
        return hf.anthropic_message(use, stop_reason="tool_use")
    if mode == "judge":
        judgement = {
            "scores": {c: 1.0 for c in JUDGE_CRITERIA},
            "weighted_score": 1.0,
            "confidence": 0.9,
            "issues": [],
            "highlights": ["done"],
        }
        call = hf.openai_tool_call(arguments=json.dumps(judgement))
        call["function"]["name"] = "submit_judgement"
        return hf.openai_completion(tool_calls=[call], finish_reason="tool_calls")
    if turn2:
        return hf.openai_completion("Done.")
    return hf.openai_completion(tool_calls=[hf.openai_tool_call("echo ok")])


class FaultServer:
    """Start with ``FaultServer()``; ``url(mode)`` is a base URL; call ``stop()`` at the end."""

    def __init__(self) -> None:
        self.requests: list[dict[str, Any]] = []
        self.released = threading.Event()
        self.flaky_count = 0
        counting = threading.Lock()
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                size = int(self.headers.get("content-length", 0))
                body = json.loads(self.rfile.read(size) or b"{}")
                headers = {k.lower(): v for k, v in self.headers.items()}
                server.requests.append({"path": self.path, "headers": headers})
                mode = self.path.split("/")[1]
                anthropic = self.path.endswith("/messages")
                if mode == "flaky":
                    with counting:
                        server.flaky_count += 1
                        n = server.flaky_count
                    mode = {5: "stall", 0: "reset"}.get(n % 10, "ok")
                if mode == "reset":
                    self.close_connection = True
                    return
                if mode == "stall":
                    server.released.wait(MAX_HOLD_S)
                    return
                if mode == "drip":
                    self.send_response(200)
                    self.send_header("content-type", "application/json")
                    self.send_header("content-length", "100000")
                    self.end_headers()
                    deadline = time.monotonic() + MAX_HOLD_S
                    while not server.released.wait(DRIP_EVERY_S) and time.monotonic() < deadline:
                        try:
                            self.wfile.write(b" ")
                            self.wfile.flush()
                        except OSError:
                            return
                    return
                if mode == "unauthorized":
                    message = f"Incorrect API key provided: {MASKED_KEY}. Find your key at ..."
                    error = {"message": message, "type": "invalid_request_error"}
                    error["code"] = "invalid_api_key"
                    self._send(401, json.dumps({"error": error}).encode())
                    return
                data = json.dumps(_answer(anthropic, _second_turn(body), mode)).encode()
                if mode == "truncated" and _second_turn(body):
                    data = data[: len(data) // 2]
                self._send(200, data)

            def _send(self, status: int, data: bytes) -> None:
                self.send_response(status)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._httpd.daemon_threads = True
        self.port = self._httpd.server_address[1]
        self._thread = threading.Thread(target=self._httpd.serve_forever, daemon=True)
        self._thread.start()

    def url(self, mode: str, suffix: str = "/v1") -> str:
        """The base URL serving ``mode`` (Anthropic's SDK adds ``/v1`` itself: pass "")."""
        return f"http://127.0.0.1:{self.port}/{mode}{suffix}"

    def stop(self) -> None:
        """Release held handlers and shut the server down."""
        self.released.set()
        self._httpd.shutdown()
        self._httpd.server_close()
