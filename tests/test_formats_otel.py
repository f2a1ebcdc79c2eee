"""OpenTelemetry GenAI spans: records merged by span id, usage counted at one level,
each invoke_agent span a task attempt."""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest

from evalnb._formats.otel import read_otel
from evalnb.errors import InputError
from tests.trace_figures import figures, fixture, growth, quiet_load, span_ms


def _console_records(path: Path) -> list[dict[str, Any]]:
    text, decoder, pos, out = path.read_text(), json.JSONDecoder(), 0, []
    while pos < len(text):
        if text[pos].isspace():
            pos += 1
            continue
        doc, pos = decoder.raw_decode(text, pos)
        out.append(doc)
    return out


def test_console_spans_count_each_chat_once_and_the_agents_usage_not_again():
    path = fixture("otel", "ms-agent-framework", "traces.jsonl")
    finished: dict[str, dict[str, Any]] = {}
    for record in _console_records(path):
        if record["end_time"] is not None:
            finished[record["context"]["span_id"]] = record
    spans = list(finished.values())

    def op(name: str) -> list[dict[str, Any]]:
        found = [s for s in spans if s["attributes"].get("gen_ai.operation.name") == name]
        return sorted(found, key=lambda s: s["start_time"])

    agents, chats, tools = op("invoke_agent"), op("chat"), op("execute_tool")
    # this framework starts an agent's chat spans beside it: same parent, inside its time
    per_agent = [
        [
            c
            for c in chats
            if c["parent_id"] == a["parent_id"]
            and a["start_time"] <= c["start_time"] <= a["end_time"]
        ]
        for a in agents
    ]
    assert sum(map(len, per_agent)) == len(chats)
    inputs = [[c["attributes"]["gen_ai.usage.input_tokens"] for c in mine] for mine in per_agent]
    runs = quiet_load(path)
    tasks = runs.tasks.sort("attempt_key")
    assert figures(runs) == {
        "tasks": len(agents),
        "passed": [None] * len(agents),
        "llm_calls": len(chats),
        "tool_calls": (0, 0, len(tools)),  # no process.exit.code recorded
        "total_input_tokens": [sum(x) for x in inputs],
        "total_output_tokens": [
            sum(c["attributes"]["gen_ai.usage.output_tokens"] for c in mine) for mine in per_agent
        ],
        "cache_read_tokens": [None] * len(agents),
        "cache_write_tokens": [None] * len(agents),
        "base_context": [x[0] for x in inputs],
        "context_growth_avg": [growth(x) for x in inputs],
        "duration_ms": pytest.approx([span_ms([a["start_time"], a["end_time"]]) for a in agents]),
    }
    # FORMATS.md: chat and invoke_agent spans both sum to 7,309 / 2,410: counted once
    assert tasks.get_column("total_input_tokens").sum() == 7_309
    assert sum(a["attributes"]["gen_ai.usage.input_tokens"] for a in agents) == 7_309
    assert tasks.get_column("task_id").unique().sort().to_list() == sorted(
        {a["attributes"]["gen_ai.agent.name"] for a in agents}
    )
    assert runs.runs.row(0, named=True)["model"] == "openai/gpt-oss-20b:fireworks-ai"


def test_vercel_captures_split_over_two_files_pair_into_one_call_each():
    folder = fixture("otel", "openinference-fixtures", "vercel-v6")
    children = json.loads((folder / "ai-generateText-doGenerate.json").read_text())
    runs = quiet_load(folder)  # both files together: each call counted once
    usage = sorted(
        (
            c["attributes"]["gen_ai.usage.input_tokens"],
            c["attributes"]["gen_ai.usage.output_tokens"],
        )
        for c in children
    )
    assert sorted(runs.llm_calls.select("input_tokens", "output_tokens").rows()) == usage
    assert runs.tasks.height == len(children)
    alone = quiet_load(folder / "ai-generateText.json")  # the parents alone: totals only
    assert alone.llm_calls.height == 0
    assert alone.tasks.get_column("total_input_tokens").sum() == sum(u[0] for u in usage)


BASE = 1_767_225_600  # 2026-01-01, in seconds


def _attr(key: str, value: Any) -> dict[str, Any]:
    kind = "intValue" if isinstance(value, int) else "stringValue"
    return {"key": key, "value": {kind: str(value) if kind == "intValue" else value}}


def _span(
    sid: str,
    name: str,
    start: int,
    end: int | None,
    parent: str | None = None,
    error: str | None = None,
    **attrs: Any,
) -> dict[str, Any]:
    span: dict[str, Any] = {
        "traceId": "t1",
        "spanId": sid,
        "name": name,
        "startTimeUnixNano": str((BASE + start) * 10**9),
        "attributes": [_attr(k.replace("__", "."), v) for k, v in attrs.items()],
    }
    if parent:
        span["parentSpanId"] = parent
    if end is not None:
        span["endTimeUnixNano"] = str((BASE + end) * 10**9)
    if error is not None:
        span["status"] = {"code": 2, "message": error}
    return span


def _otlp(tmp: Path, spans: list[dict[str, Any]], lines: bool = False) -> Path:
    path = tmp / "spans.json"
    docs = [
        {
            "resourceSpans": [
                {
                    "resource": {"attributes": [_attr("service.name", "svc")]},
                    "scopeSpans": [{"spans": [s]}],
                }
            ]
        }
        for s in spans
    ]
    path.write_text(
        "\n".join(json.dumps(d) for d in docs)
        if lines
        else json.dumps({"resourceSpans": [r for d in docs for r in d["resourceSpans"]]})
    )
    return path


AGENT = {
    "gen_ai__operation__name": "invoke_agent",
    "gen_ai__agent__name": "fixer",
    "gen_ai__usage__input_tokens": 999,
}


def _chat(sid: str, start: int, end: int | None, tokens: int | None) -> dict[str, Any]:
    usage = (
        {}
        if tokens is None
        else {
            "gen_ai__usage__input_tokens": tokens,
            "gen_ai__usage__output_tokens": 5,
            "gen_ai__usage__cache_read__input_tokens": tokens // 2,
        }
    )
    return _span(
        sid,
        "chat m",
        start,
        end,
        "a",
        gen_ai__operation__name="chat",
        gen_ai__request__model="m1",
        **usage,
    )


def test_repeated_records_merge_and_a_cut_off_call_has_no_usage(tmp_path):
    tool = _span(
        "x",
        "execute_tool sh",
        3,
        4,
        "a",
        gen_ai__operation__name="execute_tool",
        gen_ai__tool__name="bash",
        gen_ai__tool__call__arguments='{"command": "ls"}',
        process__exit__code=1,
    )
    spans = [
        _span("a", "invoke_agent fixer", 0, None, **AGENT),
        _chat("c1", 1, None, None),
        _chat("c1", 1, 2, 100),
        _chat("c1", 1, 2, 100),
        tool,
        tool,
        _chat("c2", 5, None, None),
        _span("a", "invoke_agent fixer", 0, 9, **AGENT),
    ]
    [(meta, [rec])] = read_otel(_otlp(tmp_path, spans, lines=True))
    calls = rec.trace.llm_calls
    assert [(c.input_tokens, c.cache_read_tokens, c.latency_ms) for c in calls] == [
        (100, 50, 1000.0),
        (None, None, None),
    ]
    assert [(t.commands, t.exit_code, t.call_number) for t in rec.trace.tool_calls] == [
        ("ls", 1, 1)
    ]
    assert rec.trace.total_input_tokens == 100  # the agent's own 999 is not counted again
    assert (rec.task.id, meta.model, rec.trace.duration_ms) == ("fixer", "m1", 9000.0)


def test_an_agent_that_errored_or_never_ended_is_errored(tmp_path):
    spans = [_span("a", "invoke_agent fixer", 0, 5, error="boom", **AGENT)]
    [(_, [rec])] = read_otel(_otlp(tmp_path, spans))
    assert rec.error == "span status ERROR: boom"
    spans = [_span("a", "invoke_agent fixer", 0, None, **AGENT), _chat("c1", 1, 2, 10)]
    [(_, [rec])] = read_otel(_otlp(tmp_path, spans))
    assert rec.error == "the agent span never ended: cut off"


def test_openinference_spans_and_agents_without_calls(tmp_path):
    spans = [
        _span("a", "agent", 0, 9, openinference__span__kind="AGENT", session__id="s"),
        _span(
            "b",
            "llm",
            1,
            2,
            "a",
            openinference__span__kind="LLM",
            llm__model_name="m2",
            llm__token_count__prompt=40,
            llm__token_count__completion=4,
            llm__token_count__prompt_details__cache_read=30,
        ),
        _span(
            "c",
            "lone",
            10,
            12,
            gen_ai__operation__name="invoke_agent",
            gen_ai__usage__input_tokens=70,
            gen_ai__usage__output_tokens=7,
        ),
    ]
    runs = quiet_load(_otlp(tmp_path, spans))
    assert sorted(runs.tasks.select("task_id", "total_input_tokens", "llm_call_count").rows()) == [
        ("agent", 40, 1),
        ("lone", 70, 0),
    ]  # an agent without chat spans: totals only


def test_spans_outside_any_agent_make_their_trace_an_attempt(tmp_path):
    spans = [_span("r", "workflow", 0, 9), _chat("c1", 1, 2, 10), _chat("c2", 3, 4, 30)]
    spans[1]["parentSpanId"] = spans[2]["parentSpanId"] = "r"
    [(_, [rec])] = read_otel(_otlp(tmp_path, spans))
    assert (rec.task.id, [c.input_tokens for c in rec.trace.llm_calls]) == ("workflow", [10, 30])


def test_invalid_spans_name_the_file_line_and_field(tmp_path):
    bad = _span("a", "invoke_agent x", 0, 1, **AGENT)
    del bad["spanId"]
    with pytest.raises(InputError, match="spanId: missing") as err:
        read_otel(_otlp(tmp_path, [_chat("c", 0, 1, 5), bad], lines=True))
    assert err.value.line == 2
    chat = _chat("c", 0, 1, 5)
    tokens = next(a for a in chat["attributes"] if a["key"] == "gen_ai.usage.input_tokens")
    tokens["value"] = {"stringValue": "lots"}
    with pytest.raises(InputError, match=r"span c: gen_ai\.usage\.input_tokens"):
        read_otel(_otlp(tmp_path, [chat]))


def test_a_span_time_that_is_not_a_number_is_refused(tmp_path):
    chat = _chat("c", 0, 1, 5)
    chat["startTimeUnixNano"] = datetime(2026, 1, 1).isoformat()
    with pytest.raises(InputError, match="not a time in nanoseconds"):
        read_otel(_otlp(tmp_path, [chat]))
