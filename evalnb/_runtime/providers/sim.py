"""Simulated agents ``sim/<persona>``: offline demo runs that behave like models.

A simulated agent plays the task's ``solution`` through the same agent loop, sandbox
and scorer as a real model. The solution is split into steps (:func:`split_steps`),
the steps are spread over turns, and a :class:`Persona` decides, with a seeded RNG,
how the agent behaves: it may look at the input files first, read ``<cmd> --help``,
batch several tool calls in one turn, make a mistake and fix it on a later turn (or
repeat the failing command, or give up), skip a step or stop early.

Mistakes (``MISTAKE_KINDS``), each tried only on the first attempt at a step:

====================  =================================================================
``misspelt_command``  a typo in a command name (``grep`` -> ``gerp``, ``jq`` -> ``jqq``)
``wrong_flag``        an option the command rejects (``sort --reverse-numeric``)
``wrong_path``        an input path gone wrong (``/data/x.csv`` -> ``/dat/x.csv``,
                      ``data/x.csv`` or ``/data/xs.csv``)
``unsupported``       a tool the sandbox lacks (``gsed``, ``gdate``, ``fd``, ``gojq``)
====================  =================================================================

The agent reads the tool results: a mistake is noticed when its call exits non-zero
or writes to stderr; a correct step counts as failed only when it does both (so
``diff`` or ``grep`` exiting 1 quietly is not a failure). An unnoticed mistake is
taken for success, so the step it replaced never runs.

Usage is synthetic: ``input_tokens`` is the persona's fixed system-and-tool overhead
plus a quarter of the characters of every message sent; ``output_tokens`` is a
quarter of the characters emitted plus a little noise; latency is log-normal per
persona (only slept with ``sleep=True``). Runs are marked simulated.

Asked for a judgement (a request offering the judge's ``submit_judgement`` tool), a
persona plays an offline judge instead (:mod:`.sim_judge`).

Determinism: each attempt's RNG is seeded from ``(seed, persona, task id, epoch)``,
so a run is reproducible whatever order concurrent tasks interleave in. The plan of
an attempt is made on turn 1, kept under ``(task id, epoch)`` and dropped when the
agent stops; an attempt cut off at the turn limit leaves its plan until that
``(task id, epoch)`` starts again.

Example:
    >>> import asyncio
    >>> from evalnb._runtime.agent import run_agent
    >>> from evalnb._runtime.sandbox import BashkitSandbox
    >>> from evalnb.records import Task
    >>> t = Task(id="t", category="c", prompt="p",
    ...          solution="mkdir -p /out\\necho hi > /out/a.txt\\ncat /out/a.txt")
    >>> out = asyncio.run(run_agent(t, SimProvider("careful"), BashkitSandbox()))
    >>> out.trace.natural_stop, out.trace.tool_calls[-1].stdout
    (True, 'hi\\n')
"""

from __future__ import annotations

import asyncio
import json
import math
import random
import re
import shlex
from dataclasses import dataclass, field
from functools import cache
from pathlib import PurePosixPath
from typing import Any

import bashkit
from pydantic import BaseModel, ConfigDict, Field

from evalnb._runtime.providers.sim_judge import asks_for_judgement, judge_turn
from evalnb.errors import ProviderError
from evalnb.records import Message, Task
from evalnb.records.interfaces import ChatRequest, ChatResponse, Recording, ToolUse


class Persona(BaseModel):
    """How a simulated agent behaves: probabilities, batching, tokens and latency.

    Example:
        >>> PERSONAS["careful"].p_mistake < PERSONAS["flailing"].p_mistake
        True
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str
    summary: str = Field(description="what the persona is like")
    p_explore: float = Field(
        ge=0, le=1, description="chance of looking at the input files in the first turn"
    )
    p_help: float = Field(
        ge=0,
        le=1,
        description="chance of a `<cmd> --help` turn before a step (at most 2 per attempt)",
    )
    p_mistake: float = Field(
        ge=0, le=1, description="chance that the first attempt at a step has a mistake"
    )
    weak_spots: dict[str, float] = Field(
        default_factory=dict,
        description="task category -> factor f: there p_mistake is times f, p_recover over f",
    )
    p_recover: float = Field(
        ge=0, le=1, description="chance of issuing the correct step after a noticed mistake"
    )
    p_give_up: float = Field(
        ge=0,
        le=1,
        description="chance of stopping after a failure not recovered (else it repeats it)",
    )
    p_skip: float = Field(ge=0, le=1, description="chance of leaving a step out")
    p_stop_early: float = Field(
        ge=0, le=1, description="chance of declaring success after a turn while steps remain"
    )
    p_batch: float = Field(
        ge=0, le=1, description="chance of adding one more step to a turn as another tool call"
    )
    max_batch: int = Field(ge=1, description="most steps in one turn")
    verbosity: int = Field(ge=0, description="most extra remarks added to a tool-call turn's text")
    overhead_tokens: int = Field(
        ge=0, description="system prompt and tool definition tokens in every call"
    )
    latency_median_ms: float = Field(gt=0, description="median latency of a call (ms)")
    latency_sigma: float = Field(ge=0, description="log-normal sigma of the latency")


PERSONAS: dict[str, Persona] = {
    p.name: p
    for p in (
        Persona(
            name="careful",
            summary="looks first, reads help, rarely errs and fixes what it breaks",
            p_explore=0.8,
            p_help=0.15,
            p_mistake=0.05,
            weak_spots={"archive_operations": 5.0, "log_analysis": 5.0},
            p_recover=0.95,
            p_give_up=0.5,
            p_skip=0.0,
            p_stop_early=0.0,
            p_batch=0.15,
            max_batch=2,
            verbosity=3,
            overhead_tokens=1400,
            latency_median_ms=2400,
            latency_sigma=0.35,
        ),
        Persona(
            name="hasty",
            summary="batches steps, slips often, sometimes skips a step or stops early",
            p_explore=0.1,
            p_help=0.0,
            p_mistake=0.2,
            weak_spots={"json_processing": 3.0, "text_processing": 3.0},
            p_recover=0.7,
            p_give_up=0.6,
            p_skip=0.06,
            p_stop_early=0.08,
            p_batch=0.6,
            max_batch=4,
            verbosity=0,
            overhead_tokens=1250,
            latency_median_ms=1100,
            latency_sigma=0.5,
        ),
        Persona(
            name="flailing",
            summary="errs a lot, rarely fixes the cause and repeats failing commands",
            p_explore=0.4,
            p_help=0.3,
            p_mistake=0.5,
            weak_spots={"scripting": 1.8, "archive_operations": 1.8},
            p_recover=0.15,
            p_give_up=0.05,
            p_skip=0.06,
            p_stop_early=0.03,
            p_batch=0.25,
            max_batch=3,
            verbosity=1,
            overhead_tokens=1500,
            latency_median_ms=3200,
            latency_sigma=0.7,
        ),
    )
}
"""The built-in personas, by name."""

MISTAKE_KINDS = ("misspelt_command", "wrong_flag", "wrong_path", "unsupported")

WRONG_FLAGS = {
    "sort": "--reverse-numeric",
    "grep": "--recursive-only",
    "wc": "--words-only",
    "head": "--count=5",
    "tail": "--count=5",
    "cut": "--separator=,",
    "jq": "--raw",
    "sed": "--inline",
    "uniq": "--count-only",
    "awk": "--posix-mode",
    "tr": "--squeeze-all",
    "xargs": "--null-data",
    "tar": "--gzip-level=9",
    "ls": "--color=always",
    "date": "--format=%F",
    "mkdir": "--parent",
    "touch": "--date-now",
    "diff": "--unified-context",
    "column": "--table-sep",
}
"""Plausible options each command rejects in bashkit (a ``wrong_flag`` mistake)."""

UNSUPPORTED = {
    "sed": "gsed",
    "date": "gdate",
    "sort": "gsort",
    "tar": "gtar",
    "find": "fd",
    "jq": "gojq",
    "cat": "bat",
    "readlink": "greadlink",
    "base64": "gbase64",
}
"""Tools the sandbox lacks that an agent may reach for instead (``unsupported``)."""

HELP_COMMANDS = frozenset(
    {"awk", "base64", "column", "comm", "cut", "date", "diff", "find", "grep", "gzip", "jq"}
    | {"join", "paste", "sed", "sort", "tar", "tr", "uniq", "xargs"}
)
"""Commands an agent may look up with ``--help`` before using them."""

_PLAIN = frozenset(
    {"echo", "printf", "cd", "test", "[", "[[", "true", "false", "set", "export", "local"}
    | {"read", "exit", "return"}
)

_HEREDOC = re.compile(r"(?<!<)<<(-?)[ \t]*(['\"]?)([A-Za-z_][A-Za-z0-9_]*)\2")
_CONTINUED = re.compile(r"(\\|&&|\|\||\|)[ \t]*$")

_TEXT = {
    "explore": [
        "Let me look at the input files first.",
        "First, a quick look at what is there.",
        "I'll inspect the files before changing anything.",
    ],
    "help": [
        "Let me check which options `{cmd}` supports here.",
        "Checking `{cmd} --help` before using it.",
        "I'm not sure which flags `{cmd}` accepts in this shell, so I'll check.",
    ],
    "first": [
        "I'll start with `{cmd}`.",
        "Let me begin with the `{cmd}` step.",
        "First step: `{cmd}`.",
    ],
    "next": [
        "That worked. Now `{cmd}`.",
        "Next I'll run `{cmd}`.",
        "Good. Moving on to `{cmd}`.",
        "Now the `{cmd}` step.",
    ],
    "batch": [
        "I'll run the next {n} steps together.",
        "Doing these {n} steps in one go.",
        "Running {n} commands at once.",
    ],
    "unsupported": [
        "`{bad}` will be simpler for this.",
        "I'll use `{bad}` here.",
    ],
    "misspelt_command": [
        "Typo: `{bad}` should be `{good}`. Fixing it.",
        "I misspelt `{good}`. Running it again.",
    ],
    "wrong_flag": [
        "`{cmd}` does not accept `{bad}` here; dropping it.",
        "Wrong option for `{cmd}`. Retrying without `{bad}`.",
    ],
    "wrong_path": [
        "Wrong path: the file is `{good}`, not `{bad}`.",
        "`{bad}` does not exist; the input is at `{good}`.",
    ],
    "unsupported_fix": [
        "`{bad}` is not available in this sandbox; using `{good}` instead.",
        "No `{bad}` here. Falling back to `{good}`.",
    ],
    "retry": [
        "Let me try that again.",
        "Trying once more.",
        "Running it again.",
        "Retrying the same command.",
    ],
    "give_up": [
        "I can't get this to work in this environment, so I'll stop here.",
        "This keeps failing; stopping with the task unfinished.",
        "I wasn't able to complete this step.",
    ],
    "stop_early": [
        "That should be everything.",
        "Done: the main part is complete.",
        "I think that covers it.",
    ],
    "remark": [
        "I'll check the output before moving on.",
        "This leaves the input files unchanged.",
        "The result goes to stdout so I can verify it.",
        "If this fails I'll read the error message first.",
        "Keeping each step small so errors are easy to spot.",
        "Using absolute paths to avoid surprises.",
        "This should be enough for this step.",
        "No extra tools should be needed for this.",
    ],
    "finish": [
        "Done. All steps completed.",
        "The task is complete.",
        "Finished: everything ran without errors.",
        "All done.",
    ],
}


def persona_table() -> str:
    """The personas' parameters as a Markdown table (one row per parameter).

    Example:
        >>> persona_table().splitlines()[0]
        '| parameter | meaning | careful | hasty | flailing |'
    """
    names = list(PERSONAS)
    rows = [
        "| parameter | meaning | " + " | ".join(names) + " |",
        "|---|---|" + "---|" * len(names),
    ]
    for key, info in Persona.model_fields.items():
        if key == "name":
            continue
        meaning = info.description or ""
        values = [str(getattr(PERSONAS[n], key)) for n in names]
        rows.append(f"| {key} | {meaning} | " + " | ".join(values) + " |")
    return "\n".join(rows)


@cache
def _parser() -> bashkit.Bash:
    return bashkit.Bash()


def _parses(script: str) -> bool:
    try:
        _parser().analyze(script)
    except bashkit.BashError:
        return False
    return True


def command_names(step: str) -> list[str]:
    """The commands a step runs, in order (empty when it does not parse).

    Example:
        >>> command_names("sort /data/a.txt | uniq -c")
        ['sort', 'uniq']
    """
    try:
        return list(_parser().analyze(step).command_names)
    except bashkit.BashError:
        return []


def split_steps(script: str) -> list[str]:
    """Split a script at top-level newlines into steps that each parse on their own.

    Heredocs, multi-line loops, ``if`` blocks and functions, line continuations and
    lines ending in ``|``, ``&&`` or ``||`` stay in one step; blank lines are dropped
    and comment lines go with the step after them.

    Example:
        >>> script = "mkdir -p /o\\nfor i in 1 2; do\\n  echo $i\\ndone\\ncat <<'E' > /o/f\\na\\nE"
        >>> split_steps(script)
        ['mkdir -p /o', 'for i in 1 2; do\\n  echo $i\\ndone', "cat <<'E' > /o/f\\na\\nE"]
    """
    steps: list[str] = []
    chunk: list[str] = []
    heredocs: list[tuple[bool, str]] = []
    for line in script.splitlines():
        if heredocs:
            chunk.append(line)
            strip_tabs, delimiter = heredocs[0]
            if (line.lstrip("\t") if strip_tabs else line) == delimiter:
                heredocs.pop(0)
            if heredocs:
                continue
        elif chunk or line.strip():
            chunk.append(line)
            heredocs = [(m.group(1) == "-", m.group(3)) for m in _HEREDOC.finditer(line)]
            if heredocs:
                continue
        else:
            continue
        text = "\n".join(chunk)
        if _CONTINUED.search(text) or _only_comments(chunk) or not _parses(text):
            continue
        steps.append(text)
        chunk = []
    if chunk and not _only_comments(chunk):
        steps.append("\n".join(chunk))
    return steps


def _only_comments(lines: list[str]) -> bool:
    return all(not line.strip() or line.lstrip().startswith("#") for line in lines)


@dataclass(frozen=True)
class Mistake:
    """A wrong version of a step: its kind, the command run, and the wrong/right tokens."""

    kind: str
    command: str
    cmd: str
    bad: str
    good: str


def make_mistake(kind: str, step: str, task: Task, rng: random.Random) -> Mistake | None:
    """A mistake of ``kind`` in ``step``, or None when that kind does not apply.

    Example:
        >>> t = Task(id="t", category="c", prompt="p", files={"/data/a.txt": "x"})
        >>> make_mistake("wrong_flag", "sort /data/a.txt", t, random.Random(1)).command
        'sort --reverse-numeric /data/a.txt'
        >>> make_mistake("unsupported", "echo hi", t, random.Random(1)) is None
        True
    """
    if kind == "wrong_path":
        return _wrong_path(step, task, rng)
    table = {"wrong_flag": WRONG_FLAGS, "unsupported": UNSUPPORTED}.get(kind)
    names = sorted({n for n in command_names(step) if n.isalpha() if table is None or n in table})
    spans = {n: span for n in names if (span := _command_span(step, n))}
    if not spans:
        return None
    cmd = rng.choice(sorted(spans))
    start, end = spans[cmd]
    if kind == "misspelt_command":
        bad = _typo(cmd, rng)
        return Mistake(kind, step[:start] + bad + step[end:], cmd, bad, cmd)
    if kind == "wrong_flag":
        bad = WRONG_FLAGS[cmd]
        return Mistake(kind, f"{step[:end]} {bad}{step[end:]}", cmd, bad, "")
    bad = UNSUPPORTED[cmd]
    return Mistake(kind, step[:start] + bad + step[end:], cmd, bad, cmd)


def _command_span(step: str, name: str) -> tuple[int, int] | None:
    """Where ``name`` first appears in command position (not as an argument)."""
    pattern = (
        r"(?:^|[|;&(`{]|\$\(|\b(?:then|do|else|if|while|until|xargs)\b|!)[ \t]*("
        + re.escape(name)
        + r")(?=[ \t;|&)]|$)"
    )
    match = re.search(pattern, step, re.MULTILINE)
    return match.span(1) if match else None


def _typo(name: str, rng: random.Random) -> str:
    """Swap two adjacent letters after the first, or double the last for short names."""
    if len(name) >= 4:
        i = rng.randrange(1, len(name) - 1)
        typo = name[:i] + name[i + 1] + name[i] + name[i + 2 :]
        if typo != name:
            return typo
    return name + name[-1]


def _wrong_path(step: str, task: Task, rng: random.Random) -> Mistake | None:
    """Mangle an input path the step mentions: relative, truncated dir or wrong file name."""
    candidates = sorted({p for p in task.files if _path_span(step, p)})
    if not candidates:
        return None
    path = rng.choice(candidates)
    parts = PurePosixPath(path).parts[1:]
    options = []
    if len(parts) >= 2:
        options.append(path[1:])
        if len(parts[0]) >= 4:
            options.append("/" + "/".join((parts[0][:-1], *parts[1:])))
    stem, dot, ext = parts[-1].partition(".")
    renamed = (stem[:-1] if stem.endswith("s") and len(stem) > 1 else stem + "s") + dot + ext
    options.append(str(PurePosixPath(path).with_name(renamed)))
    bad = rng.choice(options)
    start, end = _path_span(step, path) or (0, 0)
    return Mistake("wrong_path", step[:start] + bad + step[end:], "", bad, path)


def _path_span(step: str, path: str) -> tuple[int, int] | None:
    match = re.search(r"(?<![\w./-])" + re.escape(path) + r"(?![\w.-])", step)
    return match.span() if match else None


@dataclass
class _Call:
    """A tool call the agent issued: its step (None for looking around) and mistake."""

    command: str
    step: int | None = None
    mistake: Mistake | None = None


@dataclass
class _Attempt:
    """The plan and progress of one (task, epoch) attempt."""

    rng: random.Random
    steps: list[str]
    names: list[list[str]]
    pos: int = 0
    tried: set[int] = field(default_factory=set)
    looked_up: set[str] = field(default_factory=set)
    last: list[tuple[str, _Call]] = field(default_factory=list)


class SimProvider:
    """A simulated agent with a named persona; see the module docstring.

    Example:
        >>> SimProvider("hasty").model
        'sim/hasty'
        >>> SimProvider("lazy")
        Traceback (most recent call last):
        ...
        ValueError: unknown persona 'lazy' (known: careful, hasty, flailing)
    """

    provider = "sim"
    simulated = True
    recording: Recording | None = None

    def __init__(self, persona: str, seed: int = 7, sleep: bool = False) -> None:
        if persona not in PERSONAS:
            known = ", ".join(PERSONAS)
            raise ValueError(f"unknown persona {persona!r} (known: {known})")
        self.persona = PERSONAS[persona]
        self.seed = seed
        self.sleep = sleep
        self.model = f"sim/{persona}"
        self._attempts: dict[tuple[str, int], _Attempt] = {}

    def settings(self) -> dict[str, Any]:
        """The seed, whether latencies are slept, and the persona's parameters."""
        return {"seed": self.seed, "sleep": self.sleep, "persona": self.persona.model_dump()}

    async def chat(self, request: ChatRequest) -> ChatResponse:
        """Play one turn of the attempt ``(request.task.id, request.epoch)``, or judge one
        (:mod:`.sim_judge`)."""
        if asks_for_judgement(request):
            reply = judge_turn(self.persona, self.seed, request)
            if self.sleep and reply.latency_ms is not None:
                await asyncio.sleep(reply.latency_ms / 1000)
            return reply
        key = (request.task.id, request.epoch)
        if request.turn == 1:
            self._attempts[key] = self._plan(request.task, request.epoch)
        attempt = self._attempts.get(key)
        if attempt is None:
            raise ProviderError(f"no simulated attempt in progress for {key} at turn > 1")
        text, calls = self._turn(attempt, request)
        rng, p = attempt.rng, self.persona
        if calls:
            remarks = rng.sample(_TEXT["remark"], rng.randint(0, p.verbosity))
            text = " ".join([text, *remarks])
        uses = [
            ToolUse(id=f"sim_{request.turn}_{i}", name="bash", input={"commands": c.command})
            for i, c in enumerate(calls, start=1)
        ]
        attempt.last = [(u.id, c) for u, c in zip(uses, calls, strict=True)]
        if not calls:
            del self._attempts[key]
        emitted = len(text) + sum(len(json.dumps(u.input)) for u in uses)
        latency = rng.lognormvariate(math.log(p.latency_median_ms), p.latency_sigma)
        if self.sleep:
            await asyncio.sleep(latency / 1000)
        return ChatResponse(
            text=text,
            tool_uses=uses,
            stop_reason="tool_use" if uses else "end_turn",
            input_tokens=p.overhead_tokens + math.ceil(_message_chars(request.messages) / 4),
            output_tokens=math.ceil(emitted / 4) + rng.randint(1, 8),
            latency_ms=round(latency, 1),
        )

    def _plan(self, task: Task, epoch: int) -> _Attempt:
        if not task.solution:
            raise ProviderError(f"task {task.id!r} has no 'solution' to simulate")
        rng = random.Random(f"{self.seed}:{self.persona.name}:{task.id}:{epoch}")
        steps = split_steps(task.solution)
        if not steps:
            raise ProviderError(f"task {task.id!r}: 'solution' has no commands")
        kept = [s for s in steps if rng.random() >= self.persona.p_skip]
        steps = kept or steps[:1]
        return _Attempt(rng=rng, steps=steps, names=[command_names(s) for s in steps])

    def _turn(self, a: _Attempt, request: ChatRequest) -> tuple[str, list[_Call]]:
        """Read the last turn's results, then choose this turn's text and tool calls."""
        p, rng = self.persona, a.rng
        failed, progressed = _absorb(a, request.messages)
        if failed is not None:
            m = failed.mistake
            weakness = p.weak_spots.get(request.task.category, 1.0)
            if m is not None and rng.random() < p.p_recover / weakness:
                key = "unsupported_fix" if m.kind == "unsupported" else m.kind
                text = _say(rng, key, cmd=m.cmd, bad=m.bad, good=m.good)
                return text, self._batch(a, request.task)
            if rng.random() < p.p_give_up:
                return _say(rng, "give_up"), []
            return _say(rng, "retry"), [failed]
        if a.pos >= len(a.steps):
            return _say(rng, "finish"), []
        if progressed and rng.random() < p.p_stop_early:
            return _say(rng, "stop_early"), []
        if request.turn == 1 and rng.random() < p.p_explore:
            return _say(rng, "explore"), [_Call(c) for c in _explore_commands(request.task)]
        lookup = [n for n in a.names[a.pos] if n in HELP_COMMANDS and n not in a.looked_up]
        if lookup and len(a.looked_up) < 2 and rng.random() < p.p_help:
            a.looked_up.add(lookup[0])
            return _say(rng, "help", cmd=lookup[0]), [_Call(f"{lookup[0]} --help")]
        calls = self._batch(a, request.task)
        first = calls[0]
        if first.mistake is not None and first.mistake.kind == "unsupported":
            text = _say(rng, "unsupported", bad=first.mistake.bad)
        elif len(calls) > 1:
            text = _say(rng, "batch", n=len(calls))
        else:
            text = _say(rng, "first" if a.pos == 0 else "next", cmd=_describe(a.names[a.pos]))
        return text, calls

    def _batch(self, a: _Attempt, task: Task) -> list[_Call]:
        """The steps from ``a.pos`` on, one per tool call, each first try maybe wrong."""
        p, rng = self.persona, a.rng
        calls: list[_Call] = []
        for i in range(a.pos, len(a.steps)):
            calls.append(self._attempt_step(a, task, i))
            if len(calls) >= p.max_batch or rng.random() >= p.p_batch:
                break
        return calls

    def _attempt_step(self, a: _Attempt, task: Task, i: int) -> _Call:
        step, rng = a.steps[i], a.rng
        if i in a.tried:
            return _Call(step, i)
        a.tried.add(i)
        factor = self.persona.weak_spots.get(task.category, 1.0)
        if rng.random() < min(1.0, self.persona.p_mistake * factor):
            kinds = list(MISTAKE_KINDS)
            rng.shuffle(kinds)
            for kind in kinds:
                mistake = make_mistake(kind, step, task, rng)
                if mistake is not None:
                    return _Call(mistake.command, i, mistake)
        return _Call(step, i)


def _absorb(a: _Attempt, messages: list[Message]) -> tuple[_Call | None, bool]:
    """Advance ``a.pos`` past the steps that worked last turn.

    Returns the first failed step call (None if none) and whether any step worked.
    """
    results: dict[str, tuple[bool, str]] = {}
    if messages and messages[-1].role == "tool_result":
        for block in messages[-1].content:
            results[block.tool_use_id or ""] = (bool(block.is_error), block.content or "")
    progressed = False
    for use_id, call in a.last:
        if call.step is None:
            continue
        is_error, content = results.get(use_id, (True, "STDERR: no result"))
        noisy = "STDERR:" in content
        failed = (is_error or noisy) if call.mistake else (is_error and noisy)
        if failed:
            a.pos = call.step
            return call, progressed
        a.pos = call.step + 1
        progressed = True
    return None, progressed


def _explore_commands(task: Task) -> list[str]:
    """``ls`` of the first input directory and ``head`` of up to two input files."""
    files = sorted(task.files)
    if not files:
        return ["pwd && ls -la"]
    directory = str(PurePosixPath(files[0]).parent)
    heads = [f"head -n 20 {shlex.quote(f)}" for f in files[:2]]
    return [f"ls -la {shlex.quote(directory)}", *heads]


def _describe(names: list[str]) -> str:
    """The command a step is about: its first non-trivial command."""
    interesting = [n for n in names if n not in _PLAIN]
    return (interesting or names or ["the shell"])[0]


def _say(rng: random.Random, key: str, **values: Any) -> str:
    return rng.choice(_TEXT[key]).format(**values)


def _message_chars(messages: list[Message]) -> int:
    """Characters of all text, tool inputs and tool results in a conversation."""
    total = 0
    for message in messages:
        for block in message.content:
            total += len(block.text or "") + len(block.content or "")
            if block.input is not None:
                total += len(json.dumps(block.input))
    return total
