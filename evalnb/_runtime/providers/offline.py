"""Offline agents: ``reference`` (runs the task's solution) and ``scripted:<file>``.

Both go through the same agent loop, sandbox and scorer as the real providers.

Scripted-agent file (YAML or JSON)::

    model: my-agent     # optional: the model name reports show (default: the file's stem)
    # the same turns for every task ...
    turns:
      - text: "Let me look first."
        commands: ["ls /data", "wc -l /data/*.csv"]   # one tool call each, in one turn
        input_tokens: 900                            # optional, per turn
        output_tokens: 40
      - text: "Done."                                # no commands: the agent stops
    # ... and/or turns for particular tasks, which win over ``turns``
    tasks:
      my_task_id:
        - commands: ["echo hi"]

A turn list that runs out ends the attempt with a final text-only turn.

Example:
    >>> import asyncio
    >>> from evalnb.records.interfaces import ChatRequest, Recording
    >>> from evalnb.records import Task
    >>> t = Task(id="t", category="c", prompt="p", solution="echo ok")
    >>> r = asyncio.run(ReferenceProvider().chat(ChatRequest("", [], [], t)))
    >>> r.tool_uses[0].input
    {'commands': 'echo ok'}
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, model_validator

from evalnb._formats.yamlio import load_model
from evalnb.errors import InputError, ProviderError
from evalnb.records.interfaces import ChatRequest, ChatResponse, Recording, ToolUse


class ReferenceProvider:
    """Runs the task's ``solution`` as one tool call, then stops.

    It is not a model: it reports no token counts (they are null, not 0). A task
    without a solution raises :class:`ProviderError`, so it is recorded as
    errored with a clear reason.
    """

    provider = "reference"
    model = "reference"
    simulated = False
    recording: Recording | None = None

    async def chat(self, request: ChatRequest) -> ChatResponse:
        """Turn 1: the solution as a tool call. Turn 2: a final text turn."""
        if request.turn == 1:
            if not request.task.solution:
                raise ProviderError(f"task {request.task.id!r} has no 'solution' to run")
            use = ToolUse(id="ref_1", name="bash", input={"commands": request.task.solution})
            return ChatResponse("Running the reference solution.", [use], "tool_use")
        return ChatResponse("Done.", [], "end_turn")

    def settings(self) -> dict[str, Any]:
        """Nothing to configure."""
        return {}


class ScriptedTurn(BaseModel):
    """One canned assistant turn."""

    model_config = ConfigDict(extra="forbid")

    text: str = ""
    commands: list[str] = Field(default_factory=list)
    input_tokens: int | None = Field(default=None, ge=0)
    output_tokens: int | None = Field(default=None, ge=0)
    latency_ms: float | None = Field(default=None, ge=0)


class Script(BaseModel):
    """A scripted-agent file: default ``turns`` and per-task ``tasks``."""

    model_config = ConfigDict(extra="forbid")

    model: str | None = Field(default=None, min_length=1)
    turns: list[ScriptedTurn] = Field(default_factory=list)
    tasks: dict[str, list[ScriptedTurn]] = Field(default_factory=dict)

    @model_validator(mode="after")
    def _not_empty(self) -> Script:
        if not self.turns and not self.tasks:
            raise ValueError("a script needs 'turns' or 'tasks'")
        return self


class ScriptedProvider:
    """Plays canned turns from a YAML/JSON file (tests, demos, documentation)."""

    provider = "scripted"
    simulated = False
    recording: Recording | None = None

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.script: Script = load_model(self.path, Script, display=str(path))
        self.model = self.script.model or self.path.stem

    def check_tasks(self, task_ids: set[str]) -> None:
        """Refuse a script whose ``tasks`` name a task the dataset does not have (a typo
        would otherwise silently play the default ``turns``).

        Example:
            >>> import tempfile, pathlib
            >>> p = pathlib.Path(tempfile.mkdtemp()) / "s.yaml"
            >>> _ = p.write_text("tasks:\\n  nope:\\n    - text: hi\\n")
            >>> ScriptedProvider(p).check_tasks({"a"})  # doctest: +ELLIPSIS
            Traceback (most recent call last):
            ...
            evalnb.errors.InputError: ...s.yaml: tasks.nope: no task 'nope' in the dataset
        """
        for task_id in self.script.tasks:
            if task_id not in task_ids:
                message = f"no task {task_id!r} in the dataset"
                raise InputError(self.path, None, f"tasks.{task_id}", message)

    async def chat(self, request: ChatRequest) -> ChatResponse:
        """Return turn ``request.turn`` of the task's script, or a final stop."""
        turns = self.script.tasks.get(request.task.id, self.script.turns)
        if request.turn > len(turns):
            return ChatResponse("Done.", [], "end_turn")
        turn = turns[request.turn - 1]
        uses = [
            ToolUse(id=f"call_{request.turn}_{i}", name="bash", input={"commands": c})
            for i, c in enumerate(turn.commands, start=1)
        ]
        return ChatResponse(
            text=turn.text,
            tool_uses=uses,
            stop_reason="tool_use" if uses else "end_turn",
            input_tokens=turn.input_tokens,
            output_tokens=turn.output_tokens,
            latency_ms=turn.latency_ms,
        )

    def settings(self) -> dict[str, Any]:
        """The script file played."""
        return {"script": str(self.path)}
