"""OpenHands event lists: one LLM call per model response, however many events repeat it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from evalnb._formats.openhands import read_openhands
from evalnb.errors import InputError
from tests.trace_figures import figures, fixture, growth, quiet_load, span_ms

pytestmark = pytest.mark.filterwarnings("ignore:.*without a time zone")  # OpenHands' own times


def test_an_event_list_counts_each_model_response_once():
    path = fixture("openhands", "runtime-trajs", "basic.json")
    events = json.loads(path.read_text())
    responses: dict[str, dict[str, Any]] = {}
    for event in events:
        response = (event.get("tool_call_metadata") or {}).get("model_response")
        if response:
            responses.setdefault(response["id"], response["usage"])
    usage = list(responses.values())
    actions = [e for e in events if e.get("action") and e.get("tool_call_metadata")]
    inputs = [u["prompt_tokens"] for u in usage]
    runs = quiet_load(path)
    assert figures(runs) == {
        "tasks": 1,
        "passed": [None],
        "llm_calls": len(usage),
        "tool_calls": (0, 0, len(actions)),  # an edit and finish state no exit code
        "total_input_tokens": [sum(inputs)],
        "total_output_tokens": [sum(u["completion_tokens"] for u in usage)],
        "cache_read_tokens": [sum(u["cache_read_input_tokens"] for u in usage)],
        "cache_write_tokens": [sum(u["cache_creation_input_tokens"] for u in usage)],
        "base_context": [inputs[0]],
        "context_growth_avg": [growth(inputs)],
        "duration_ms": [span_ms([e["timestamp"] for e in events])],
    }
    task = runs.tasks.row(0, named=True)
    assert task["natural_stop"] is True and task["local_times"] is True


def _events(tmp: Path, events: list[dict[str, Any]]) -> Path:
    path = tmp / "events.json"
    path.write_text(json.dumps(events))
    return path


def _run(eid: int, response: str, cmd: str, tokens: int) -> dict[str, Any]:
    meta = {
        "tool_call_id": f"t{eid}",
        "function_name": "execute_bash",
        "model_response": {
            "id": response,
            "model": "m",
            "usage": {"prompt_tokens": tokens, "completion_tokens": 3},
        },
    }
    return {
        "id": eid,
        "timestamp": f"2025-01-01T00:00:0{eid}",
        "source": "agent",
        "action": "run",
        "args": {"command": cmd},
        "tool_call_metadata": meta,
    }


def _observed(eid: int, cause: int, code: int, kind: str = "run") -> dict[str, Any]:
    return {
        "id": eid,
        "timestamp": f"2025-01-01T00:00:0{eid}",
        "source": "agent",
        "observation": kind,
        "cause": cause,
        "content": "out",
        "extras": {"metadata": {"exit_code": code}},
    }


def test_parallel_actions_of_one_response_and_repeated_events_count_once(tmp_path):
    first, second = _run(1, "r1", "ls", 100), _run(2, "r1", "pwd", 100)
    events = [
        {
            "id": 0,
            "timestamp": "2025-01-01T00:00:00",
            "source": "user",
            "action": "message",
            "args": {"content": "go"},
        },
        first,
        second,
        second,
        _observed(3, 1, 0),
        _observed(4, 2, -1),
        _run(5, "r2", "make", 180),
        _observed(6, 5, 2, "error"),
    ]
    [(_, [rec])] = read_openhands(_events(tmp_path, events))
    assert [(c.input_tokens, c.tool_calls_made) for c in rec.trace.llm_calls] == [
        (100, 2),
        (180, 1),
    ]
    tools = rec.trace.tool_calls
    assert [(t.commands, t.exit_code, t.call_number) for t in tools] == [
        ("ls", 0, 1),
        ("pwd", None, 1),
        ("make", 2, 2),
    ]  # -1 is OpenHands' "not known"
    assert tools[2].stderr == "out" and rec.task.prompt == "go"
    assert rec.trace.natural_stop is False  # never called finish


def test_an_agent_error_state_errors_the_task(tmp_path):
    state = {
        "id": 9,
        "timestamp": "2025-01-01T00:00:09",
        "source": "environment",
        "observation": "agent_state_changed",
        "content": "",
        "extras": {"agent_state": "error", "reason": "budget exceeded"},
    }
    [(_, [rec])] = read_openhands(_events(tmp_path, [_run(1, "r1", "ls", 5), state]))
    assert rec.error == "agent error: budget exceeded"


def test_an_invalid_event_list_names_the_field(tmp_path):
    with pytest.raises(InputError) as err:
        read_openhands(_events(tmp_path, [_run(1, "r1", "ls", 5), {"id": "two"}]))
    assert err.value.field == "1.id"
