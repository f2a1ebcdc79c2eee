"""A test agent that plays given turns per attempt, errors and hangs included.

:class:`PlayedAgent` goes through the real runner like the ``scripted:`` agent, but its
turns may differ per (task, epoch) and a turn may end the attempt the way a real
provider does: ``error`` raises :class:`~evalnb.errors.ProviderError` (the attempt is
recorded as errored), ``hang`` waits until the runner's ``task_timeout_s`` cuts the
attempt (``task timeout``). Token counts may be null, cached or huge.
"""

from __future__ import annotations

import asyncio
import re
from dataclasses import dataclass, field
from typing import Any

from evalnb.errors import ProviderError
from evalnb.records.interfaces import ChatRequest, ChatResponse, ToolUse


@dataclass(frozen=True)
class Turn:
    """One assistant turn: its text and commands (one call of ``tool`` each), its usage
    and stop reason, or the way the provider fails instead of answering."""

    commands: tuple[str, ...] = ()
    text: str = "ok"
    input_tokens: int | None = None
    output_tokens: int | None = None
    cache_read_tokens: int | None = None
    cache_write_tokens: int | None = None
    latency_ms: float = 1.0
    error: str | None = None
    hang: bool = False
    tool: str = "bash"
    stop_reason: str | None = None  # default: tool_use with commands, else end_turn


VERSION = re.compile(r"GUIDANCE-(\w+)")
"""How a guidance text names its version for :class:`PlayedAgent` (in the system prompt)."""


@dataclass
class PlayedAgent:
    """Plays ``plays[(task_id, epoch)]`` turn by turn, or ``plays[(task_id, epoch,
    version)]`` when the system prompt holds a guidance text naming ``GUIDANCE-<version>``;
    after the last turn it stops with a text-only turn (an attempt without a play stops at
    once)."""

    model: str
    plays: dict[tuple[Any, ...], tuple[Turn, ...]] = field(default_factory=dict)
    provider: str = "played"
    simulated: bool = False
    recording: Any = None

    async def chat(self, request: ChatRequest) -> ChatResponse:
        version = VERSION.search(request.system)
        key = (request.task.id, request.epoch) + ((version.group(1),) if version else ())
        turns = self.plays.get(key, ())
        if request.turn > len(turns):
            return ChatResponse("Done.", [], "end_turn", latency_ms=1.0)
        turn = turns[request.turn - 1]
        if turn.hang:
            await asyncio.sleep(3600)
        if turn.error is not None:
            raise ProviderError(turn.error)
        uses = [
            ToolUse(id=f"call_{request.turn}_{i}", name=turn.tool, input={"commands": c})
            for i, c in enumerate(turn.commands)
        ]
        return ChatResponse(
            text=turn.text,
            tool_uses=uses,
            stop_reason=turn.stop_reason or ("tool_use" if uses else "end_turn"),
            input_tokens=turn.input_tokens,
            output_tokens=turn.output_tokens,
            cache_read_tokens=turn.cache_read_tokens,
            cache_write_tokens=turn.cache_write_tokens,
            latency_ms=turn.latency_ms,
        )

    def settings(self) -> dict[str, Any]:
        return {}


@dataclass
class PlayedJudge:
    """A judge that scores the one rubric criterion ``done`` with ``scores[task_id]``
    (0.5 for a task it has no score for)."""

    scores: dict[str, float] = field(default_factory=dict)
    model: str = "judge"
    provider: str = "played"
    simulated: bool = False
    recording: Any = None

    async def chat(self, request: ChatRequest) -> ChatResponse:
        score = self.scores.get(request.task.id, 0.5)
        verdict = {
            "scores": {"done": score},
            "weighted_score": score,
            "confidence": 0.9,
            "issues": [],
            "highlights": [],
        }
        use = ToolUse(id="judge_1", name=request.tools[0].name, input=verdict)
        return ChatResponse("", [use], "tool_use")

    def settings(self) -> dict[str, Any]:
        return {}
