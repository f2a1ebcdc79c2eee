"""Simulated judges: a ``sim/<persona>`` asked for a judgement gives one, offline.

A request that offers the judge's ``submit_judgement`` tool (:mod:`evalnb._scoring.judge`)
is answered by a judge, not an agent, so ``--judge sim/careful --judge sim/hasty`` rates
scenario attempts without any API (for demos and tests of judge agreement).

How it scores: it reads the transcript in the judge's prompt. The attempt's quality q
is the share of its tool calls that exited 0 (``exit code: 0`` over the ``[tool call
N]`` entries; 0 without tool calls). Every rubric criterion gets q plus Gaussian noise
whose standard deviation is the persona's ``p_mistake`` (careful 0.05, hasty 0.2,
flailing 0.5), clipped to 0-1 and rounded to 2 decimals; ``weighted_score`` is the sum
of weight x score over the criteria listed in the prompt, ``confidence`` is
``1 - p_mistake``; ``issues`` say how many calls failed. So two personas agree as far
as their noise lets them. The noise is seeded from ``(seed, persona, prompt)``: the
same transcript gets the same scores from the same judge.

Usage is synthetic as for the agents (:mod:`.sim`): ``input_tokens`` is the persona's
overhead plus a quarter of the characters of the system prompt and the prompt;
``output_tokens`` a quarter of the characters of the judgement.

Example:
    >>> import asyncio
    >>> from evalnb.records import AgentTrace, Task, ToolCallResult
    >>> from evalnb.records.scenario import Rubric
    >>> from evalnb._runtime.providers.sim import SimProvider
    >>> from evalnb._scoring.judge import run_judge
    >>> rubric = Rubric(criteria=[{"id": "done", "weight": 1.0, "description": "Done"}])
    >>> trace = AgentTrace(tool_calls=[ToolCallResult(commands="ls", exit_code=0)])
    >>> task = Task(id="t", category="c", prompt="p")
    >>> j = asyncio.run(run_judge(SimProvider("careful"), rubric, task, trace, 0.5))
    >>> j.passed, 0.8 < j.score <= 1.0
    (True, True)
"""

from __future__ import annotations

import json
import math
import random
import re
from typing import Protocol

from evalnb._scoring.judge import TOOL_NAME
from evalnb.records.interfaces import ChatRequest, ChatResponse, ToolUse


class JudgePersona(Protocol):
    """What a simulated judge reads of its persona (a :class:`~.sim.Persona` has it)."""

    @property
    def name(self) -> str: ...
    @property
    def p_mistake(self) -> float: ...
    @property
    def overhead_tokens(self) -> int: ...
    @property
    def latency_median_ms(self) -> float: ...
    @property
    def latency_sigma(self) -> float: ...


_CALL = re.compile(r"^\[tool call \d+\] ", re.M)
_OK = re.compile(r"^exit code: 0$", re.M)
_CRITERION = re.compile(r"^- (\S+) \(weight ([0-9.eE+-]+)\):", re.M)


def asks_for_judgement(request: ChatRequest) -> bool:
    """Whether ``request`` is a judge's (it offers the ``submit_judgement`` tool).

    Example:
        >>> from evalnb.records import Task
        >>> asks_for_judgement(ChatRequest("", [], [], Task(id="t", category="c", prompt="p")))
        False
    """
    return any(tool.name == TOOL_NAME for tool in request.tools)


def judge_turn(persona: JudgePersona, seed: int, request: ChatRequest) -> ChatResponse:
    """The persona's ``submit_judgement`` call on the transcript in ``request`` (see the
    module docstring); ``latency_ms`` is drawn as for the persona's agent turns."""
    prompt = "\n".join(b.text or "" for m in request.messages for b in m.content)
    rng = random.Random(f"{seed}:{persona.name}:{prompt}")
    calls = len(_CALL.findall(prompt))
    ok = len(_OK.findall(prompt))
    quality = ok / calls if calls else 0.0
    [tool] = [t for t in request.tools if t.name == TOOL_NAME]
    criteria = list(tool.input_schema["properties"]["scores"]["properties"])
    scores = {
        c: round(min(1.0, max(0.0, rng.gauss(quality, persona.p_mistake))), 2) for c in criteria
    }
    weights = {c: float(w) for c, w in _CRITERION.findall(prompt)}
    judgement = {
        "scores": scores,
        "weighted_score": round(math.fsum(weights.get(c, 0.0) * s for c, s in scores.items()), 4),
        "confidence": round(1 - persona.p_mistake, 2),
        "issues": [f"{calls - ok} of {calls} tool calls failed"] if ok < calls else [],
        "highlights": [f"{ok} tool calls succeeded"] if ok else [],
    }
    latency = rng.lognormvariate(math.log(persona.latency_median_ms), persona.latency_sigma)
    return ChatResponse(
        text="",
        tool_uses=[ToolUse(id="sim_judgement", name=TOOL_NAME, input=judgement)],
        stop_reason="tool_use",
        input_tokens=persona.overhead_tokens + math.ceil(len(request.system + prompt) / 4),
        output_tokens=math.ceil(len(json.dumps(judgement)) / 4),
        latency_ms=round(latency, 1),
    )
