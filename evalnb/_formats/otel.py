"""Read OpenTelemetry GenAI spans (and OpenInference and Vercel AI SDK attributes) as runs.

A file of spans (:mod:`evalnb._formats.otel_spans`: OTLP JSON, the Python SDK's console
output, JavaScript span arrays), or a folder holding only such files (read together, so
spans split across files are paired), becomes runs of task attempts:

- **Records merged by span id.** An exporter may write a span twice (the console
  exporter writes an open span, then the finished one): one span per ``span_id``, the
  finished record kept (of two finished ones, the one with more attributes).
- **Kinds.** An *agent* span is ``gen_ai.operation.name`` ``invoke_agent``, an
  OpenInference ``AGENT`` span or a Vercel call (``ai.generateText``, ``ai.streamText``,
  ``ai.generateObject``, ``ai.streamObject``); an *LLM* span is ``chat``,
  ``text_completion`` or ``generate_content``, an OpenInference ``LLM`` span or Vercel's
  provider call (``*.doGenerate``, ``*.doStream``); a *tool* span is ``execute_tool``, an
  OpenInference ``TOOL`` span or ``ai.toolCall``. Other spans (a framework's workflow,
  executor and message spans) are not read.
- **Attempts.** Each agent span is a task attempt. An LLM or tool span belongs to its
  nearest agent ancestor; else to the innermost agent span of its trace whose time holds
  its start (frameworks that start the agent's ``chat`` spans beside it, not under it);
  else to a Vercel call with the same ``ai.telemetry.functionId`` whose time holds it
  (captures that give the two different traces); else its trace is the attempt.
- **Usage counted at one level.** The LLM spans' usage: ``gen_ai.usage.input_tokens``
  (the semantic conventions count cached tokens in it: the whole prompt), ``output_tokens``,
  ``cache_read.input_tokens``, ``cache_creation.input_tokens`` (or OpenInference's
  ``llm.token_count.prompt``/``completion``/``prompt_details.cache_read``/``cache_write``,
  or Vercel's ``ai.usage.*``). An agent span's own usage repeats its calls' and is read
  only for an agent without LLM spans (totals only; not when agents run inside it).
- **Per call**: ``latency_ms`` is the span's duration (null where evalnb's own export
  says ``evalnb.latency_recorded`` false, as ``evalnb.duration_recorded`` for a tool
  span), ``stop_reason`` the first of
  ``gen_ai.response.finish_reasons`` (an array, or a JSON string of one) or
  ``ai.response.finishReason``; a span that never ended has null usage and latency.
- **Tool calls**: ``commands`` from ``gen_ai.tool.name`` and
  ``gen_ai.tool.call.arguments`` (:func:`~evalnb._formats.agent_logs.command_text`),
  ``stdout`` the ``gen_ai.tool.call.result``, ``exit_code`` the ``process.exit.code``
  attribute (else null), ``stderr`` an error status's message, ``duration_ms`` the
  span's; ``call_number`` the last LLM call started before it.
- **Tasks and runs.** ``task_id``: ``evalnb.task_id`` (evalnb's own export), else
  ``gen_ai.agent.name``, else ``ai.telemetry.functionId``, else the span's name; epochs
  numbered by start time. One run per ``evalnb.run_id``, else per (``service.name``,
  model): the model most of the calls name (``gen_ai.request.model``, else the
  response's, ``llm.model_name`` or ``ai.model.id``). An agent span with an error status
  errors its attempt, one that never ended was cut off (errored too). ``natural_stop``
  follows the last call's finish reason (``stop`` and the like: true; ``tool_calls``,
  ``length``: false). ``passed`` is null: spans carry no verdict.

Example:
    >>> from evalnb._formats.detect import Probe
    >>> FORMAT.recognises(Probe("/no/such/spans.json"))
    False
"""

from __future__ import annotations

import hashlib
import re
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from evalnb._formats.agent_logs import (
    Attempt,
    Usage,
    command_text,
    json_arguments,
    most_common,
    number_epochs,
    slug,
    task_record,
)
from evalnb._formats.detect import Format, Probe
from evalnb._formats.otel_spans import Span, read_spans
from evalnb.errors import InputError
from evalnb.records import ContentBlock, Message, RunMeta, RunSettings, TaskRecord, ToolCallResult

SOURCE = "otel"
Kind = Literal["agent", "llm", "tool"]
LLM_OPERATIONS = {"chat", "text_completion", "generate_content"}
VERCEL_CALLS = {"ai.generateText", "ai.streamText", "ai.generateObject", "ai.streamObject"}
NATURAL = {"stop", "end_turn", "stop_sequence", "STOP", "completed"}
NOT_NATURAL = {"tool_calls", "tool_use", "function_call", "length", "max_tokens"}
_TOKENS = {
    "input": (
        "gen_ai.usage.input_tokens",
        "gen_ai.usage.prompt_tokens",
        "llm.token_count.prompt",
        "ai.usage.inputTokens",
        "ai.usage.promptTokens",
    ),
    "output": (
        "gen_ai.usage.output_tokens",
        "gen_ai.usage.completion_tokens",
        "llm.token_count.completion",
        "ai.usage.outputTokens",
        "ai.usage.completionTokens",
    ),
    "read": (
        "gen_ai.usage.cache_read.input_tokens",
        "llm.token_count.prompt_details.cache_read",
        "ai.usage.cachedInputTokens",
    ),
    "write": (
        "gen_ai.usage.cache_creation.input_tokens",
        "llm.token_count.prompt_details.cache_write",
    ),
}
_MODEL = ("gen_ai.request.model", "gen_ai.response.model", "llm.model_name", "ai.model.id")
_PROVIDER = ("gen_ai.provider.name", "gen_ai.system", "llm.provider", "ai.model.provider")


def kind(span: Span) -> Kind | None:
    """The span's part in an attempt (module docstring), or None.

    Example:
        >>> kind(Span("t", "s", "chat m", attributes={"gen_ai.operation.name": "chat"}))
        'llm'
    """
    a = span.attributes
    operation, inference = a.get("gen_ai.operation.name"), a.get("openinference.span.kind")
    vercel = str(a.get("ai.operationId") or "")
    if operation == "invoke_agent" or inference == "AGENT" or vercel in VERCEL_CALLS:
        return "agent"
    if (
        operation in LLM_OPERATIONS
        or inference == "LLM"
        or vercel.endswith((".doGenerate", ".doStream"))
    ):
        return "llm"
    if operation == "execute_tool" or inference == "TOOL" or vercel == "ai.toolCall":
        return "tool"
    return None


def merged(spans: list[Span]) -> list[Span]:
    """One span per ``span_id``: the finished record, else the first (module docstring).

    Example:
        >>> open_, done = Span("t", "s", "x"), Span("t", "s", "x", end_ns=5)
        >>> [s.end_ns for s in merged([open_, done, open_])]
        [5]
    """
    best: dict[str, Span] = {}
    for span in spans:
        kept = best.get(span.span_id)
        if kept is None or (
            span.end_ns is not None
            and (kept.end_ns is None or len(span.attributes) >= len(kept.attributes))
        ):
            best[span.span_id] = span
    return list(best.values())


def _first(attributes: dict[str, Any], keys: tuple[str, ...]) -> Any:
    return next((attributes[k] for k in keys if attributes.get(k) is not None), None)


def _count(span: Span, keys: tuple[str, ...], where: Path) -> int | None:
    value = _first(span.attributes, keys)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        name = next(k for k in keys if span.attributes.get(k) is not None)
        raise InputError(
            where,
            None,
            f"span {span.span_id}: {name}",
            f"expected a count of tokens, got {value!r}",
        )
    return value


def usage(span: Span, where: Path) -> Usage:
    """The span's token counts (module docstring)."""
    return Usage(*(_count(span, _TOKENS[k], where) for k in ("input", "output", "read", "write")))


@dataclass
class _Group:
    """The spans of one attempt: its agent span (None for a whole trace) and its parts."""

    trace_id: str
    agent: Span | None
    llm: list[Span] = field(default_factory=list)
    tools: list[Span] = field(default_factory=list)
    members: list[Span] = field(default_factory=list)
    nested: bool = False


def _groups(spans: list[Span]) -> list[_Group]:
    by_id = {s.span_id: s for s in spans}
    kinds = {s.span_id: kind(s) for s in spans}
    agents = [s for s in spans if kinds[s.span_id] == "agent"]
    groups = {a.span_id: _Group(a.trace_id, a) for a in agents}
    by_key: dict[tuple[str, str], list[Span]] = defaultdict(list)
    for agent in agents:  # agents by trace, and Vercel calls by function
        by_key[("trace", agent.trace_id)].append(agent)
        function = agent.attributes.get("ai.telemetry.functionId")
        if function:
            by_key[("function", str(function))].append(agent)
    traces: dict[str, _Group] = {}
    for span in spans:
        k = kinds[span.span_id]
        if k is None:
            continue
        owner = _ancestor_agent(span, by_id, kinds)
        if k == "agent":
            if owner is not None:
                groups[owner.span_id].nested = True
            continue
        owner = owner or _agent_in_time(span, by_key)
        group = (
            groups[owner.span_id]
            if owner
            else traces.setdefault(span.trace_id, _Group(span.trace_id, None))
        )
        (group.llm if k == "llm" else group.tools).append(span)
    for span in spans:
        if span.trace_id in traces:
            traces[span.trace_id].members.append(span)
    return [*groups.values(), *traces.values()]


def _ancestor_agent(
    span: Span, by_id: dict[str, Span], kinds: dict[str, Kind | None]
) -> Span | None:
    seen: set[str] = set()
    parent = by_id.get(span.parent_id or "")
    while parent is not None and parent.span_id not in seen:
        if kinds[parent.span_id] == "agent":
            return parent
        seen.add(parent.span_id)
        parent = by_id.get(parent.parent_id or "")
    return None


def _holds(agent: Span, span: Span) -> bool:
    start = span.start_ns
    return (
        start is not None
        and agent.start_ns is not None
        and agent.start_ns <= start
        and (agent.end_ns is None or start <= agent.end_ns)
    )


def _agent_in_time(span: Span, by_key: dict[tuple[str, str], list[Span]]) -> Span | None:
    """The innermost agent span of the trace holding ``span``'s start, else a Vercel call
    of the same function (another trace) holding it."""
    same = [a for a in by_key.get(("trace", span.trace_id), []) if _holds(a, span)]
    function = span.attributes.get("ai.telemetry.functionId")
    if not same and function:
        same = [a for a in by_key.get(("function", str(function)), []) if _holds(a, span)]
    return max(same, key=lambda a: a.start_ns or 0) if same else None


def _attempt(group: _Group, where: Path) -> tuple[Attempt, str | None, str | None, Span]:
    """The attempt of one group, with its model, provider and the span naming it."""
    head = group.agent or min(
        group.members, key=lambda s: (s.parent_id is not None, s.start_ns or 0)
    )
    llm = sorted(group.llm, key=lambda s: s.start_ns or 0)
    tools = sorted(group.tools, key=lambda s: s.start_ns or 0)
    calls = []
    for span in llm:
        reasons = json_arguments(span.attributes.get("gen_ai.response.finish_reasons"))
        reason = reasons[0] if isinstance(reasons, list) and reasons else None
        calls.append(
            usage(span, where).call(
                latency_ms=span.duration_ms,
                stop_reason=reason or span.attributes.get("ai.response.finishReason"),
            )
        )
    tool_calls = []
    for span in tools:
        number = sum((s.start_ns or 0) <= (span.start_ns or 0) for s in llm) or None
        if number is not None:
            calls[number - 1].tool_calls_made += 1
        tool_calls.append(_tool(span, number))
    totals = None
    if not llm and group.agent is not None and not group.nested:
        totals = usage(group.agent, where)
    spans = [group.agent] if group.agent else group.members
    ends = [s.end_ns for s in spans if s.end_ns is not None]
    starts = [s.start_ns for s in spans if s.start_ns is not None]
    duration = (max(ends) - min(starts)) / 1e6 if ends and starts else None
    error = _attempt_error(group, head)
    last = calls[-1].stop_reason if calls else None
    a = head.attributes
    task_id = str(
        a.get("evalnb.task_id")
        or a.get("gen_ai.agent.name")
        or a.get("ai.telemetry.functionId")
        or head.name
        or "trace"
    )
    prompt = _prompt(group.agent, llm)
    attempt = Attempt(
        task_id=task_id,
        category=SOURCE,
        prompt=prompt,
        llm_calls=calls,
        tool_calls=tool_calls,
        messages=[Message(role="user", content=[ContentBlock(type="text", text=prompt)])]
        if prompt
        else [],
        turns=len(calls),
        totals=totals,
        duration_ms=duration,
        natural_stop=False
        if error
        else (True if last in NATURAL else False if last in NOT_NATURAL else None),
        error=error,
        extra={
            "trace_id": group.trace_id,
            "span_id": head.span_id,
            "service_name": head.resource.get("service.name"),
        },
    )
    if isinstance(a.get("evalnb.epoch"), int):
        attempt.epoch = a["evalnb.epoch"]
    sources = [*llm, *([group.agent] if group.agent else [])]
    model = most_common([_first(s.attributes, _MODEL) for s in sources], "") or None
    provider = most_common([_first(s.attributes, _PROVIDER) for s in sources], "") or None
    return attempt, model, provider, head


def _attempt_error(group: _Group, head: Span) -> str | None:
    if head.error is not None:
        return f"span status ERROR: {head.error}" if head.error else "span status ERROR"
    if group.agent is not None and group.agent.end_ns is None:
        return "the agent span never ended: cut off"
    return None


def _tool(span: Span, number: int | None) -> ToolCallResult:
    a = span.attributes
    name = str(
        a.get("gen_ai.tool.name") or a.get("tool.name") or a.get("ai.toolCall.name") or span.name
    )
    arguments = json_arguments(
        a.get("gen_ai.tool.call.arguments", a.get("ai.toolCall.args", a.get("input.value")))
    )
    result = a.get("gen_ai.tool.call.result", a.get("ai.toolCall.result", a.get("output.value")))
    code = a.get("process.exit.code")
    known = a.get("evalnb.duration_recorded") is not False
    return ToolCallResult(
        commands=command_text(name, arguments if arguments is not None else {}),
        stdout="" if result is None else result if isinstance(result, str) else str(result),
        stderr=span.error or "",
        exit_code=code if isinstance(code, int) and not isinstance(code, bool) else None,
        duration_ms=span.duration_ms if known else None,
        call_number=number,
    )


def _prompt(agent: Span | None, llm: list[Span]) -> str | None:
    """The first user text of the agent's or first call's input messages, if recorded."""
    for span in [*([agent] if agent else []), *llm[:1]]:
        a = span.attributes
        messages = json_arguments(a.get("gen_ai.input.messages"))
        if isinstance(messages, list):
            for m in messages:
                if isinstance(m, dict) and m.get("role") == "user":
                    parts = m.get("parts") or m.get("content")
                    return (
                        parts
                        if isinstance(parts, str)
                        else "".join(
                            str(p.get("content") or p.get("text") or "")
                            for p in parts or []
                            if isinstance(p, dict)
                        )
                    )
        vercel = json_arguments(a.get("ai.prompt"))
        if isinstance(vercel, dict) and isinstance(vercel.get("prompt"), str):
            return str(vercel["prompt"])
        if isinstance(a.get("input.value"), str):
            return str(a["input.value"])
    return None


def read_otel(path: str | Path) -> list[tuple[RunMeta, list[TaskRecord]]]:
    """Read a span file (or a folder of them) as runs (module docstring).

    Example:
        >>> read_otel("no-such-spans.json")
        Traceback (most recent call last):
        ...
        evalnb.errors.InputError: no-such-spans.json: file not found
    """
    path = Path(path)
    files = sorted(p for p in path.iterdir() if _span_file(Probe(p))) if path.is_dir() else [path]
    spans = merged([s for f in files for s in read_spans(f)])
    runs: dict[tuple[str, ...], list[tuple[Attempt, str | None, str | None, Span]]] = defaultdict(
        list
    )
    for group in _groups(spans):
        attempt, model, provider, head = _attempt(group, path)
        run_id = head.attributes.get("evalnb.run_id") or head.resource.get("evalnb.run_id")
        service = str(head.resource.get("service.name") or "unknown")
        key: tuple[str, ...] = (str(run_id),) if run_id else (service, model or "unknown")
        runs[key].append((attempt, model, provider, head))
    digest = hashlib.sha256(str(path.resolve()).encode()).hexdigest()[:8]
    out = []
    for key, items in runs.items():
        items.sort(key=lambda item: item[3].start_ns or 0)
        attempts = [a for a, *_ in items]
        if not any(isinstance(h.attributes.get("evalnb.epoch"), int) for *_, h in items):
            number_epochs(attempts)
        records = [task_record(a) for a in attempts]
        head = items[0][3]
        model = head.attributes.get("evalnb.model") or most_common([m for _, m, _, _ in items])
        provider = head.attributes.get("evalnb.provider") or most_common(
            [p for _, _, p, _ in items]
        )
        run_id = key[0] if len(key) == 1 else f"otel-{key[0]}-{model}-{digest}"
        meta = RunMeta(
            run_id=slug(run_id),
            provider=str(provider),
            model=str(model),
            source=SOURCE,
            epochs=max(r.epoch for r in records),
            status="complete",
            task_count=len(records),
            settings=RunSettings(
                source_files=[f.name for f in files], unavailable=["checks", "messages"]
            ),
        )
        out.append((meta, records))
    return out


_CONSOLE = re.compile(rb'"context":\s*\{\s*"trace_id":\s*"0x')


def _span_file(probe: Probe) -> bool:
    if probe.is_dir or not probe.head:
        return False
    doc = probe.doc
    if isinstance(doc, dict) or isinstance(probe.first_line, dict):
        return "resourceSpans" in (doc if isinstance(doc, dict) else probe.first_line)
    if isinstance(doc, list):
        return bool(doc) and isinstance(doc[0], dict) and "spanContext" in doc[0]
    return _CONSOLE.search(probe.head) is not None


def _recognises(probe: Probe) -> bool:
    if not probe.is_dir:
        return _span_file(probe)
    try:
        files = [p for p in probe.path.iterdir() if p.suffix in (".json", ".jsonl")]
    except OSError:
        return False
    return bool(files) and all(_span_file(Probe(p)) for p in files)


FORMAT = Format("OpenTelemetry spans", _recognises, read=read_otel, key="otel")
