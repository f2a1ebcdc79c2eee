"""``replay:<source>``: re-execute a recorded run's commands in a fresh sandbox and re-score.

The source is an evalnb run folder or a bashkit-eval result JSON. For each task the
recorded assistant turns are played back in order (their text and tool calls), so
every command runs again in a fresh sandbox and the checks are evaluated anew.
Tokens, turns and latencies are copied from the recording (the provider is its own
:class:`~evalnb.records.interfaces.Recording`; ``run.json`` names it in
``recorded_from``); the tool outputs are the replay's own.

Each task record gets a :class:`~evalnb.records.ReplayAgreement`: how many check
verdicts equal the recording's (checks compared by their string, in order of
appearance; a check not run on either side is not compared). A low figure means the
sandbox behaves differently from the one the recording was made in (or the dataset
changed).

Example:
    >>> ReplayProvider("no/such/run")
    Traceback (most recent call last):
    ...
    evalnb.errors.InputError: no/such/run: replay source not found (need a run folder or a \
bashkit-eval result JSON)
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

from evalnb._store import RunStore, is_run_folder
from evalnb.errors import InputError, ProviderError
from evalnb.records import AgentTrace, ReplayAgreement, RunMeta, TaskRecord, TaskScore
from evalnb.records.interfaces import ChatRequest, ChatResponse, Recording, ToolUse


def read_recording(source: str | Path) -> tuple[RunMeta, list[TaskRecord]]:
    """The metadata and task records of a run folder or a bashkit-eval result JSON.

    Example:
        >>> read_recording("missing.json")
        Traceback (most recent call last):
        ...
        evalnb.errors.InputError: missing.json: replay source not found (need a run folder \
or a bashkit-eval result JSON)
    """
    path = Path(source)
    if is_run_folder(path):
        store = RunStore.open(path)
        return store.meta, store.records()
    if path.is_file() and path.suffix == ".json":
        from evalnb._formats.bashkit_eval import read_bashkit_eval

        return read_bashkit_eval(path)
    raise InputError(
        source,
        None,
        None,
        "replay source not found (need a run folder or a bashkit-eval result JSON)",
    )


class ReplayProvider:
    """Plays back a recording's assistant turns, task by task."""

    provider = "replay"
    simulated = False

    def __init__(self, source: str | Path) -> None:
        self.source = str(source)
        self.recording: Recording | None = self
        meta, records = read_recording(source)
        self.model = f"replay:{meta.model}"
        self.recorded_model = meta.model
        self._records = {(r.task.id, r.epoch): r for r in records}

    def _record(self, task_id: str, epoch: int) -> TaskRecord:
        record = self._records.get((task_id, epoch)) or self._records.get((task_id, 1))
        if record is None:
            raise ProviderError(f"no recording of task {task_id!r} in {self.source}")
        return record

    async def chat(self, request: ChatRequest) -> ChatResponse:
        """Return the recording's assistant turn number ``request.turn``."""
        record = self._record(request.task.id, request.epoch)
        turns = [m for m in record.trace.messages if m.role == "assistant"]
        if request.turn > len(turns):
            return ChatResponse("", [], "end_turn")
        message = turns[request.turn - 1]
        text = "\n".join(b.text or "" for b in message.content if b.type == "text")
        uses = [
            ToolUse(
                id=b.id or f"replay_{request.turn}_{i}", name=b.name or "bash", input=b.input or {}
            )
            for i, b in enumerate(message.content)
            if b.type == "tool_use"
        ]
        calls = record.trace.llm_calls
        call = calls[request.turn - 1] if request.turn <= len(calls) else None
        return ChatResponse(
            text=text,
            tool_uses=uses,
            stop_reason=call.stop_reason if call else ("tool_use" if uses else "end_turn"),
            input_tokens=call.input_tokens if call else None,
            output_tokens=call.output_tokens if call else None,
            cache_read_tokens=call.cache_read_tokens if call else None,
            cache_write_tokens=call.cache_write_tokens if call else None,
            latency_ms=call.latency_ms if call else None,
        )

    def apply_recording(self, trace: AgentTrace, task_id: str, epoch: int) -> None:
        """Copy the recording's task totals (tokens, duration) onto the replayed trace."""
        recorded = self._record(task_id, epoch).trace
        trace.total_input_tokens = recorded.total_input_tokens
        trace.total_output_tokens = recorded.total_output_tokens
        trace.duration_ms = recorded.duration_ms

    def agreement(self, task_id: str, epoch: int, score: TaskScore) -> ReplayAgreement:
        """How many of the replay's check verdicts equal the recording's."""
        try:
            recorded = self._record(task_id, epoch).score.results
        except ProviderError:
            return ReplayAgreement(checks_agree=0, checks_compared=0)
        seen: Counter[str] = Counter()
        by_check: dict[tuple[str, int], bool | None] = {}
        for r in recorded:
            by_check[(r.check, seen[r.check])] = r.passed
            seen[r.check] += 1
        seen.clear()
        agree = compared = 0
        for r in score.results:
            key = (r.check, seen[r.check])
            seen[r.check] += 1
            if by_check.get(key) is not None and r.passed is not None:  # both verdicts
                compared += 1
                agree += by_check[key] == r.passed
        return ReplayAgreement(checks_agree=agree, checks_compared=compared)

    def settings(self) -> dict[str, Any]:
        """The recording replayed and the model that made it."""
        return {"source": self.source, "recorded_model": self.recorded_model}
