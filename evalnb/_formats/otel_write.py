"""Write evalnb runs as OpenTelemetry spans: an OTLP JSON file, or sent to an OTLP/HTTP endpoint.

Each task attempt is one trace: an ``invoke_agent`` span, and under it one ``chat``
span per LLM call and one ``execute_tool`` span per tool call, after the call that
asked for it. The attributes are the GenAI semantic conventions' (:data:`SEMCONV`, the
registry in ``../shared/fixtures/otel/SEMCONV.md``) with OpenInference's beside them, so
Phoenix, Langfuse and co. show tokens and tools:

- ``invoke_agent`` (OpenInference ``AGENT``): ``gen_ai.provider.name``,
  ``gen_ai.request.model``, ``gen_ai.agent.name`` (the run's sandbox or ``evalnb``),
  ``gen_ai.conversation.id``, the prompt as ``input.value``; an errored attempt has an
  error status. No usage: it is the calls' (counting it here too would count it twice).
- ``chat`` (``LLM``): ``gen_ai.usage.input_tokens`` (the whole prompt, cache included,
  as the conventions ask), ``output_tokens``, ``cache_read.input_tokens``,
  ``cache_creation.input_tokens``, ``gen_ai.response.finish_reasons``; OpenInference's
  ``llm.model_name``, ``llm.provider``, ``llm.token_count.prompt``/``completion``/``total``
  and ``prompt_details.cache_read``/``cache_write``. The span lasts ``latency_ms``.
- ``execute_tool`` (``TOOL``): ``gen_ai.tool.name`` ``bash``,
  ``gen_ai.tool.call.arguments`` (``{"commands": ...}``), ``gen_ai.tool.call.result``
  (stdout), ``process.exit.code``; OpenInference's ``tool.name``, ``input.value``,
  ``output.value`` (the text evalnb's agent sent its model). A non-zero exit code or a
  timeout gives an error status. The span lasts ``duration_ms``.
- ``evalnb.*`` attributes carry what the conventions have no name for: the run id,
  task id, epoch, call number, check verdict, and ``evalnb.latency_recorded`` /
  ``evalnb.duration_recorded`` false where a time was unknown (the span then lasts 0).

The spans of an attempt follow one another from the run's start (``started_at``, else
the epoch) with a microsecond between them, so reading the file back
(:mod:`evalnb._formats.otel`) gives the same per-call figures. Ids are derived from the
run, task and epoch, so writing a run twice gives the same spans. The resource of each
run names ``service.name`` ``evalnb`` and ``openinference.project.name`` ``evalnb``.

Example:
    >>> write_otel(["no-such-run"], "spans.json")
    Traceback (most recent call last):
    ...
    evalnb.errors.InputError: no-such-run: not an evalnb run folder (no run.json)
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Any

from evalnb._extras import require
from evalnb._formats.agent_logs import parse_time
from evalnb._formats.otel_spans import Span
from evalnb._store import RunStore, is_run_folder
from evalnb._version import __version__
from evalnb.errors import EvalnbError, InputError
from evalnb.records import LLMCall, RunMeta, TaskRecord, ToolCallResult
from evalnb.records.trace import tool_result_text

SEMCONV = "open-telemetry/semantic-conventions@c1212d9"
"""The GenAI attributes written: the registry's last text in that repository (2026-04-27)."""
GAP_NS = 1_000
"""Between two spans of an attempt, so their order survives a round trip."""
TOOL = "bash"


def _id(*parts: Any, size: int) -> str:
    return hashlib.sha256("/".join(map(str, parts)).encode()).hexdigest()[:size]


def _ns(ms: float | None) -> int:
    return round((ms or 0.0) * 1e6)


def run_spans(meta: RunMeta, records: list[TaskRecord]) -> list[Span]:
    """The spans of one run (see the module docstring).

    Example:
        >>> from evalnb.records import Task, TaskScore, AgentTrace, LLMCall
        >>> rec = TaskRecord(task=Task(id="t", category="c", prompt="p"), score=TaskScore(
        ...     task_id="t"), trace=AgentTrace(llm_calls=[LLMCall(call_number=1,
        ...     input_tokens=10, latency_ms=2.0)]))
        >>> [(s.name, s.duration_ms) for s in run_spans(RunMeta(run_id="r", provider="p",
        ...     model="m"), [rec])]
        [('invoke_agent t', 2.001), ('chat m', 2.0)]
    """
    start, _ = parse_time(meta.started_at)
    cursor = int(start.timestamp()) * 1_000_000_000 if start else 0
    resource = {
        "service.name": "evalnb",
        "service.version": __version__,
        "openinference.project.name": "evalnb",
        "evalnb.run_id": meta.run_id,
    }
    spans: list[Span] = []
    for n, record in enumerate(records):
        trace = _id(meta.run_id, record.task.id, record.epoch, n, size=32)
        agent = Span(
            trace,
            _id(trace, "agent", size=16),
            f"invoke_agent {record.task.id}",
            start_ns=cursor,
            resource=resource,
        )
        begin = cursor
        children, cursor = _children(meta, record, agent, cursor)
        agent.end_ns = max(cursor, begin + _ns(record.trace.duration_ms))
        agent.error = record.error
        agent.attributes = {
            "gen_ai.operation.name": "invoke_agent",
            "gen_ai.provider.name": meta.provider,
            "gen_ai.request.model": meta.model,
            "gen_ai.agent.name": meta.sandbox or "evalnb",
            "gen_ai.conversation.id": f"{meta.run_id}/{record.task.id}/{record.epoch}",
            "openinference.span.kind": "AGENT",
            "input.value": record.task.prompt,
            "evalnb.run_id": meta.run_id,
            "evalnb.model": meta.model,
            "evalnb.provider": meta.provider,
            "evalnb.task_id": record.task.id,
            "evalnb.epoch": record.epoch,
            "evalnb.passed": record.passed,
        }
        spans += [agent, *children]
        cursor = agent.end_ns + GAP_NS
    return spans


def _children(
    meta: RunMeta, record: TaskRecord, agent: Span, cursor: int
) -> tuple[list[Span], int]:
    """The chat and tool spans of one attempt, one after another from ``cursor``."""
    out: list[Span] = []

    def child(key: tuple[Any, ...], name: str, ms: float | None) -> Span:
        nonlocal cursor
        end = cursor + _ns(ms)
        span = Span(
            agent.trace_id,
            _id(agent.trace_id, *key, size=16),
            name,
            parent_id=agent.span_id,
            start_ns=cursor,
            end_ns=end,
            resource=agent.resource,
        )
        cursor = end + GAP_NS
        out.append(span)
        return span

    tools_of: dict[int | None, list[ToolCallResult]] = {}
    for tool in record.trace.tool_calls:
        tools_of.setdefault(tool.call_number, []).append(tool)
    for call in [None, *record.trace.llm_calls]:
        if call is not None:
            span = child(("call", call.call_number), f"chat {meta.model}", call.latency_ms)
            span.attributes = _chat_attributes(meta, call)
        for tool in tools_of.get(call.call_number if call else None, []):
            span = child(("tool", tool.call_index), f"execute_tool {TOOL}", tool.duration_ms)
            if tool.timed_out or tool.exit_code not in (0, None):
                span.error = "timed out" if tool.timed_out else f"exit code {tool.exit_code}"
            span.attributes = _tool_attributes(tool)
    return out, cursor


def _chat_attributes(meta: RunMeta, call: LLMCall) -> dict[str, Any]:
    counts = {
        "gen_ai.usage.input_tokens": call.input_tokens,
        "gen_ai.usage.output_tokens": call.output_tokens,
        "gen_ai.usage.cache_read.input_tokens": call.cache_read_tokens,
        "gen_ai.usage.cache_creation.input_tokens": call.cache_write_tokens,
        "llm.token_count.prompt": call.input_tokens,
        "llm.token_count.completion": call.output_tokens,
        "llm.token_count.prompt_details.cache_read": call.cache_read_tokens,
        "llm.token_count.prompt_details.cache_write": call.cache_write_tokens,
    }
    if call.input_tokens is not None and call.output_tokens is not None:
        counts["llm.token_count.total"] = call.input_tokens + call.output_tokens
    return {
        "gen_ai.operation.name": "chat",
        "gen_ai.provider.name": meta.provider,
        "gen_ai.request.model": meta.model,
        **({"gen_ai.response.finish_reasons": [call.stop_reason]} if call.stop_reason else {}),
        "openinference.span.kind": "LLM",
        "llm.model_name": meta.model,
        "llm.provider": meta.provider,
        **{k: v for k, v in counts.items() if v is not None},
        "evalnb.call_number": call.call_number,
        "evalnb.latency_recorded": call.latency_ms is not None,
    }


def _tool_attributes(tool: ToolCallResult) -> dict[str, Any]:
    arguments = json.dumps({"commands": tool.commands})
    return {
        "gen_ai.operation.name": "execute_tool",
        "gen_ai.tool.name": TOOL,
        "gen_ai.tool.type": "function",
        "gen_ai.tool.call.arguments": arguments,
        "gen_ai.tool.call.result": tool.stdout,
        **({"process.exit.code": tool.exit_code} if tool.exit_code is not None else {}),
        "openinference.span.kind": "TOOL",
        "tool.name": TOOL,
        "input.value": arguments,
        "output.value": tool_result_text(tool),
        "evalnb.duration_recorded": tool.duration_ms is not None,
    }


def otlp_json(spans: list[Span]) -> dict[str, Any]:
    """The spans as one OTLP JSON ``ExportTraceServiceRequest`` (one ``resourceSpans`` per run).

    Example:
        >>> doc = otlp_json([Span("ab", "cd", "chat m", start_ns=1, end_ns=2, attributes={"n": 3})])
        >>> doc["resourceSpans"][0]["scopeSpans"][0]["spans"][0]["attributes"]
        [{'key': 'n', 'value': {'intValue': '3'}}]
    """
    by_resource: dict[str, tuple[dict[str, Any], list[Span]]] = {}
    for span in spans:
        key = json.dumps(span.resource, sort_keys=True)
        by_resource.setdefault(key, (span.resource, []))[1].append(span)
    return {
        "resourceSpans": [
            {
                "resource": {"attributes": _attributes(resource)},
                "scopeSpans": [
                    {
                        "scope": {
                            "name": "evalnb",
                            "version": __version__,
                            "attributes": _attributes({"evalnb.gen_ai.semconv": SEMCONV}),
                        },
                        "spans": [_otlp_span(s) for s in group],
                    }
                ],
            }
            for resource, group in by_resource.values()
        ]
    }


def _otlp_span(span: Span) -> dict[str, Any]:
    out: dict[str, Any] = {
        "traceId": span.trace_id,
        "spanId": span.span_id,
        "name": span.name,
        "kind": 3 if span.name.startswith("chat") else 1,  # CLIENT for the model, INTERNAL
        "startTimeUnixNano": str(span.start_ns),
        "endTimeUnixNano": str(span.end_ns),
        "attributes": _attributes(span.attributes),
        "status": {"code": 2, "message": span.error} if span.error is not None else {"code": 1},
    }
    if span.parent_id:
        out["parentSpanId"] = span.parent_id
    return out


def _attributes(values: dict[str, Any]) -> list[dict[str, Any]]:
    return [{"key": k, "value": _any(v)} for k, v in values.items() if v is not None]


def _any(value: Any) -> dict[str, Any]:
    if isinstance(value, bool):
        return {"boolValue": value}
    if isinstance(value, int):
        return {"intValue": str(value)}
    if isinstance(value, float):
        return {"doubleValue": value}
    if isinstance(value, list):
        return {"arrayValue": {"values": [_any(v) for v in value]}}
    return {"stringValue": str(value)}


def _runs(run_dirs: list[str | Path]) -> list[Span]:
    spans = []
    for run_dir in map(Path, run_dirs):
        if not is_run_folder(run_dir):
            raise InputError(run_dir, None, None, "not an evalnb run folder (no run.json)")
        store = RunStore.open(run_dir)
        spans += run_spans(store.meta, store.records())
    return spans


def write_otel(run_dirs: list[str | Path], out: str | Path) -> Path:
    """Write the runs' spans to ``out`` as OTLP JSON; an existing file is refused.

    Written under a temporary name and renamed: nothing half-written is left.
    """
    spans = _runs(run_dirs)
    target = Path(out)
    if target.exists():
        raise InputError(target, None, None, "file already exists; remove it first")
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.with_name(f".{target.name}.tmp")
    tmp.write_text(json.dumps(otlp_json(spans)), encoding="utf-8")
    os.replace(tmp, target)
    return target


def send_otel(run_dirs: list[str | Path], endpoint: str) -> int:
    """Send the runs' spans to an OTLP/HTTP ``endpoint`` through the OpenTelemetry SDK's
    exporter (the ``otel`` extra); return how many were sent.

    ``endpoint`` is the traces URL (``http://host:4318/v1/traces``); a URL without a
    path gets ``/v1/traces``. A refused export raises :class:`~evalnb.errors.EvalnbError`.
    """
    exporter_module = require("opentelemetry.exporter.otlp.proto.http.trace_exporter", "otel")
    from opentelemetry.sdk.trace.export import SpanExportResult

    if endpoint.rstrip("/").count("/") <= 2:
        endpoint = endpoint.rstrip("/") + "/v1/traces"
    sdk_spans = [_sdk_span(s) for s in _runs(run_dirs)]
    exporter = exporter_module.OTLPSpanExporter(endpoint=endpoint, timeout=30)
    try:
        result = exporter.export(sdk_spans)
    finally:
        exporter.shutdown()
    if result != SpanExportResult.SUCCESS:
        raise EvalnbError(f"{endpoint}: the OTLP receiver did not accept the spans")
    return len(sdk_spans)


def _sdk_span(span: Span) -> Any:
    """The span as the SDK's ``ReadableSpan``, ready for an exporter."""
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import ReadableSpan
    from opentelemetry.sdk.util.instrumentation import InstrumentationScope
    from opentelemetry.trace import SpanContext, SpanKind, Status, StatusCode, TraceFlags

    def context(span_id: str) -> SpanContext:
        return SpanContext(
            int(span.trace_id, 16),
            int(span_id, 16),
            is_remote=False,
            trace_flags=TraceFlags(TraceFlags.SAMPLED),
        )

    status = (
        Status(StatusCode.ERROR, span.error) if span.error is not None else Status(StatusCode.OK)
    )
    return ReadableSpan(
        name=span.name,
        context=context(span.span_id),
        parent=context(span.parent_id) if span.parent_id else None,
        resource=Resource(span.resource),
        attributes={k: v for k, v in span.attributes.items() if v is not None},
        kind=SpanKind.CLIENT if span.name.startswith("chat") else SpanKind.INTERNAL,
        status=status,
        start_time=span.start_ns,
        end_time=span.end_ns,
        instrumentation_scope=InstrumentationScope("evalnb", __version__),
    )
