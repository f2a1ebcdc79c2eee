"""Spec 002 layer 3: a rubric-driven LLM judge, called through the provider's tool use.

The judge sees the task, the transcript (the assistant's text and every tool call's
command, exit code, stdout and stderr; long outputs are shortened with a note saying
how much was left out) and the rubric. It must answer by calling the tool
``submit_judgement``, whose input schema is the ``JudgeResponse`` JSON schema with
one property per rubric criterion; the input is validated with pydantic.

What evalnb makes of the answer:

- ``weighted_score`` is **recomputed** as ``sum(weight * score)`` over the rubric's
  criteria; a difference of more than 0.01 from the judge's own figure is flagged.
- A criterion the judge did not score counts 0 and is flagged; scores for ids the
  rubric does not have are ignored and flagged.
- The judge passes when the recomputed ``weighted_score >= pass_threshold``.
- One row for the ``checks`` table: the verdict (layer ``judge``, kind
  ``judge_verdict``, weight 0, passed = the judge passed, detail = weighted score,
  each criterion's score, confidence, issues, highlights and flags). Spec 002 has no
  per-criterion pass/fail (only the weighted score meets a threshold), so criteria get
  no rows of their own; and weight 0 keeps the judge out of the task's
  ``score``/``max_score``, which count gates only (the judge score has its own column).
- A judge that fails (a provider error, no ``submit_judgement`` call, an answer that
  does not validate, or a required field missing) gives a failed verdict with the
  reason and every criterion at 0; it never raises.

The judge model comes from ``--judge``, the scenario's ``evaluation.judge.model`` or
the ``EVALNB_JUDGE`` environment variable (:func:`judge_spec`), and must not be a
model under test (:func:`refuse_self_judging`).

Example:
    >>> from evalnb.records.scenario import Rubric
    >>> r = Rubric(criteria=[{"id": "done", "weight": 0.6, "description": "Done"},
    ...                      {"id": "tidy", "weight": 0.4, "description": "Tidy"}])
    >>> j = score_response(r, JudgeResponse(scores={"done": 1.0}, weighted_score=0.9), 0.5)
    >>> round(j.score, 3), j.passed, len(j.flags)
    (0.6, True, 2)
    >>> j.flags[1]
    'judge said weighted_score 0.9, recomputed 0.6'
"""

from __future__ import annotations

import copy
import math
import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from pydantic import ValidationError

from evalnb.errors import InputError, ProviderError
from evalnb.records import (
    AgentTrace,
    ContentBlock,
    JudgeRating,
    Message,
    ScoreResult,
    Task,
    ToolCallResult,
)
from evalnb.records.interfaces import ChatRequest, ChatResponse, Provider, ToolSpec
from evalnb.records.scenario import Criterion, JudgeResponse, Rubric

JUDGE_ENV = "EVALNB_JUDGE"
TOOL_NAME = "submit_judgement"
OUTPUT_LIMIT = 2_000
"""Characters of one stdout or stderr shown to the judge (head and tail kept)."""
TRANSCRIPT_LIMIT = 60_000
"""Characters of the whole transcript shown to the judge (beginning and end kept)."""
MISMATCH = 0.01
EXPECTATION_THRESHOLD = 0.5
"""Score at which a spec-000 ``llm_judge:prompt`` expectation passes."""
USAGE = ("input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens")
"""The token counts of a judge call kept with its rating (:class:`~evalnb.records.JudgeRating`)."""

SYSTEM_PROMPT = f"""You are a strict, fair evaluator of how an AI agent used a command-line \
tool to complete a task. You receive the task, the agent's transcript and a rubric.

Score every rubric criterion from 0.0 (not at all) to 1.0 (fully), judging only from \
the transcript. weighted_score is the sum of weight x score over the criteria. \
confidence (0.0 to 1.0) says how sure you are. issues lists concrete problems and \
highlights lists concrete good moves, each citing what the agent did.

You MUST answer by calling the tool `{TOOL_NAME}` exactly once, with every criterion \
scored. Do not answer in plain text."""


@dataclass
class Judgement:
    """The judge's verdict on one attempt (see the module docstring)."""

    rubric: Rubric
    pass_threshold: float
    response: JudgeResponse | None = None
    score: float | None = None
    passed: bool = False
    flags: list[str] = field(default_factory=list)
    error: str | None = None
    usage: dict[str, int | None] = field(default_factory=dict)
    """The judge call's token counts (:data:`USAGE` keys), empty when the call failed."""

    def rating(self, judge_model: str) -> JudgeRating:
        """This verdict as ``judge_model``'s rating of the attempt, with its token counts.

        Example:
            >>> r = Rubric(criteria=[{"id": "done", "weight": 1.0, "description": "Done"}])
            >>> j = Judgement(r, 0.5, score=0.75, passed=True, usage={"input_tokens": 900})
            >>> j.rating("sim/careful").model_dump(exclude_none=True)
            {'judge_model': 'sim/careful', 'judge_score': 0.75, 'passed': True, 'input_tokens': 900}
        """
        return JudgeRating(
            judge_model=judge_model,
            judge_score=self.score,
            passed=self.passed,
            error=self.error,
            **self.usage,
        )

    def rows(self) -> list[ScoreResult]:
        """The ``checks`` rows: the verdict alone (see the module docstring).

        Example:
            >>> r = Rubric(criteria=[{"id": "done", "weight": 1.0, "description": "Done"}])
            >>> [(x.kind, x.weight, x.passed) for x in Judgement(r, 0.5, error="no").rows()]
            [('judge_verdict', 0.0, False)]
        """
        return [
            ScoreResult(
                check=f"judge: weighted_score >= {self.pass_threshold:g}",
                passed=self.passed,
                detail=self.summary(),
                weight=0.0,
                layer="judge",
                kind="judge_verdict",
            )
        ]

    def summary(self) -> str:
        """One line: the score (or the error), confidence, issues, highlights and flags.

        Example:
            >>> r = Rubric(criteria=[{"id": "done", "weight": 1.0, "description": "Done"}])
            >>> Judgement(r, 0.5, error="timeout").summary()
            'judge error: timeout'
        """
        if self.error is not None:
            return f"judge error: {self.error}"
        resp = self.response
        assert resp is not None and self.score is not None
        parts = [f"weighted_score {self.score:.3f}"]
        parts.append(
            "scores: "
            + ", ".join(
                f"{c.id} {resp.scores[c.id]:.2f}" if c.id in resp.scores else f"{c.id} not scored"
                for c in self.rubric.criteria
            )
        )
        if resp.confidence is not None:
            parts.append(f"confidence {resp.confidence:.2f}")
        if resp.issues:
            parts.append("issues: " + "; ".join(resp.issues))
        if resp.highlights:
            parts.append("highlights: " + "; ".join(resp.highlights))
        if self.flags:
            parts.append("flags: " + "; ".join(self.flags))
        return " | ".join(parts)


def judge_spec(cli: str | None, scenario: str | None) -> str | None:
    """The judge model: ``--judge``, else the scenario's, else ``$EVALNB_JUDGE``, else None.

    Example:
        >>> judge_spec(None, "openai/gpt-4o-mini")
        'openai/gpt-4o-mini'
    """
    return cli or scenario or os.environ.get(JUDGE_ENV) or None


def refuse_self_judging(judge: str, models: Sequence[str], dataset: str | Path) -> None:
    """Refuse a judge model that is one of the models under test: an
    :class:`~evalnb.errors.InputError` on ``--judge`` of ``dataset``.

    Example:
        >>> refuse_self_judging("openai/gpt-4o-mini", ["openai/gpt-4o-mini"], "notes")
        Traceback (most recent call last):
        ...
        evalnb.errors.InputError: notes: --judge: the judge openai/gpt-4o-mini is a model under \
test: pick another judge
    """
    if judge.strip() in {m.strip() for m in models}:
        msg = f"the judge {judge} is a model under test: pick another judge"
        raise InputError(dataset, None, "--judge", msg)


def judge_tool(rubric: Rubric) -> ToolSpec:
    """The ``submit_judgement`` tool: the JudgeResponse schema with the rubric's criteria.

    Example:
        >>> r = Rubric(criteria=[{"id": "done", "weight": 1.0, "description": "Done"}])
        >>> schema = judge_tool(r).input_schema
        >>> schema["properties"]["scores"]["required"], schema["required"][0]
        (['done'], 'scores')
    """
    schema = copy.deepcopy(JudgeResponse.model_json_schema())
    scores = schema["properties"]["scores"]
    scores["properties"] = {
        c.id: {"type": "number", "minimum": 0, "maximum": 1, "description": c.description}
        for c in rubric.criteria
    }
    scores["required"] = [c.id for c in rubric.criteria]
    required = ["scores", *[f for f in rubric.output.require_fields if f != "scores"]]
    schema["required"] = required
    return ToolSpec(TOOL_NAME, "Submit your judgement of the transcript.", schema)


def render_transcript(trace: AgentTrace) -> str:
    """The transcript as the judge reads it: assistant text and each tool call in order.

    Example:
        >>> from evalnb.records import ToolCallResult
        >>> t = AgentTrace(tool_calls=[ToolCallResult(commands="ls", stdout="a\\n", exit_code=0)])
        >>> print(render_transcript(t))
        [tool call 1] $ ls
        exit code: 0
        stdout:
        a
    """
    calls = iter(trace.tool_calls)
    parts: list[str] = []
    n = 0
    for message in trace.messages:
        if message.role != "assistant":
            continue
        for block in message.content:
            if block.type == "text" and block.text:
                parts.append(f"[assistant] {block.text.strip()}")
            elif block.type == "tool_use":
                call = next(calls, None)
                if call is not None:
                    n += 1
                    parts.append(_render_call(n, call))
    for call in calls:  # a trace without messages (imported) has only its tool calls
        n += 1
        parts.append(_render_call(n, call))
    text = "\n\n".join(parts) or "(the agent did nothing)"
    if len(text) > TRANSCRIPT_LIMIT:
        half = TRANSCRIPT_LIMIT // 2
        omitted = len(text) - 2 * half
        note = f"[... {omitted} characters of the transcript omitted ...]"
        text = f"{text[:half]}\n\n{note}\n\n{text[-half:]}"
    return text


def _render_call(n: int, call: ToolCallResult) -> str:
    lines = [f"[tool call {n}] $ {call.commands.strip()}", f"exit code: {call.exit_code}"]
    for name, text, cut in (
        ("stdout", call.stdout, call.stdout_truncated),
        ("stderr", call.stderr, call.stderr_truncated),
    ):
        if text:
            note = " (already truncated by the sandbox)" if cut else ""
            lines.append(f"{name}{note}:\n{shorten(text.rstrip(), OUTPUT_LIMIT)}")
    return "\n".join(lines)


def shorten(text: str, limit: int) -> str:
    """Keep the first three quarters and the last quarter of ``limit`` characters.

    Example:
        >>> shorten("abcdefghij", 4)
        'abc\\n[... 6 characters omitted ...]\\nj'
    """
    if len(text) <= limit:
        return text
    head, tail = limit * 3 // 4, limit - limit * 3 // 4
    return f"{text[:head]}\n[... {len(text) - limit} characters omitted ...]\n{text[-tail:]}"


def judge_prompt(task: Task, trace: AgentTrace, rubric: Rubric) -> str:
    """The user message sent to the judge: task, transcript and rubric.

    Example:
        >>> r = Rubric(criteria=[{"id": "done", "weight": 1.0, "description": "Finished"}])
        >>> p = judge_prompt(Task(id="t", category="c", prompt="Say hi"), AgentTrace(), r)
        >>> "- done (weight 1): Finished" in p
        True
    """
    criteria = "\n".join(
        f"- {c.id} (weight {c.weight:g}): {c.description}" for c in rubric.criteria
    )
    return (
        f"# Task given to the agent\n\n{task.prompt.strip()}\n\n"
        f"# Transcript\n\nLong outputs are shortened; each cut says how much was left out.\n\n"
        f"{render_transcript(trace)}\n\n"
        f"# Rubric\n\n{criteria}\n\n"
        f"Call `{TOOL_NAME}` with a score for each criterion id above."
    )


async def run_judge(
    judge: Provider, rubric: Rubric, task: Task, trace: AgentTrace, pass_threshold: float
) -> Judgement:
    """Ask the judge model about one attempt; never raises for the judge's own failures."""
    request = ChatRequest(
        system=SYSTEM_PROMPT,
        messages=[
            Message(
                role="user",
                content=[ContentBlock(type="text", text=judge_prompt(task, trace, rubric))],
            )
        ],
        tools=[judge_tool(rubric)],
        task=task,
    )
    try:
        reply = await judge.chat(request)
    except ProviderError as exc:
        return Judgement(rubric, pass_threshold, error=str(exc))
    judgement = _read_reply(reply, rubric, pass_threshold)
    judgement.usage = {k: getattr(reply, k) for k in USAGE}
    return judgement


def _read_reply(reply: ChatResponse, rubric: Rubric, pass_threshold: float) -> Judgement:
    """The verdict in a judge's reply (a failed one when the reply holds none)."""
    use = next((u for u in reply.tool_uses if u.name == TOOL_NAME), None)
    if use is None:
        said = " ".join(reply.text.split())[:200]
        return Judgement(
            rubric,
            pass_threshold,
            error=f"the judge did not call {TOOL_NAME} (stop reason {reply.stop_reason}): {said}",
        )
    missing = [f for f in rubric.output.require_fields if f not in use.input]
    if missing:
        return Judgement(rubric, pass_threshold, error=f"the judgement lacks {missing}")
    try:
        response = JudgeResponse.model_validate(use.input)
    except ValidationError as exc:
        err = exc.errors()[0]
        where = ".".join(str(p) for p in err["loc"])
        return Judgement(rubric, pass_threshold, error=f"invalid judgement: {where}: {err['msg']}")
    return score_response(rubric, response, pass_threshold)


def score_response(rubric: Rubric, response: JudgeResponse, pass_threshold: float) -> Judgement:
    """Recompute the weighted score from a validated response and flag inconsistencies."""
    known = {c.id for c in rubric.criteria}
    flags = [
        f"criterion {c.id} not scored (counted 0)"
        for c in rubric.criteria
        if c.id not in response.scores
    ]
    extra = sorted(set(response.scores) - known)
    if extra:
        flags.append(f"ignored scores for unknown criteria {extra}")
    score = math.fsum(_weighted(c, response) for c in rubric.criteria)
    said = response.weighted_score
    if said is not None and abs(said - score) > MISMATCH:
        flags.append(f"judge said weighted_score {said:g}, recomputed {score:.3g}")
    return Judgement(
        rubric,
        pass_threshold,
        response=response,
        score=score,
        passed=score >= pass_threshold,
        flags=flags,
    )


def _weighted(criterion: Criterion, response: JudgeResponse) -> float:
    return criterion.weight * response.scores.get(criterion.id, 0.0)


async def judge_expectation(
    prompt: str, task: Task, trace: AgentTrace, judge: Provider, weight: float
) -> ScoreResult:
    """Spec 000's ``llm_judge:prompt`` expectation, judged for real.

    The prompt becomes a one-criterion rubric (id ``llm_judge``); the check passes
    when the judge scores it at least :data:`EXPECTATION_THRESHOLD`. A judge failure
    fails the check, with the reason in ``detail``.
    """
    rubric = Rubric(criteria=[Criterion(id="llm_judge", weight=1.0, description=prompt)])
    verdict = await run_judge(judge, rubric, task, trace, EXPECTATION_THRESHOLD)
    return ScoreResult(
        check=f"llm_judge:{prompt}",
        passed=verdict.passed,
        detail=verdict.summary(),
        weight=weight,
        kind="llm_judge",
    )
