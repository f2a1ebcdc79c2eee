"""Agentic Inspect AI logs made on the spot: mockllm drives a bash tool over bashkit.

:func:`agentic_log` runs a small Inspect task (4 samples x 2 epochs) whose model is
Inspect's ``mockllm`` with scripted outputs, and whose ``bash`` tool runs in an evalnb
:class:`~evalnb._runtime.sandbox.bashkit.BashkitSandbox` (the tool reports a non-zero
exit code as ``Exit code: N`` in its result, like evalnb's agent). It covers:

- ``count``: two tool calls (one failing with exit 2), then an answer; scored C by
  ``includes()`` and with a dict-valued scorer (``{"answer": 1.0, "tools": 0.5}``),
- ``greet``: two tool calls (the second refused with an Inspect ``ToolError``) and a
  wrong answer (scored I),
- ``loop``: keeps calling tools until the message limit stops it (an Inspect limit),
- ``crash``: its tool raises an unexpected exception, so the sample errors,

and writes an ``.eval`` log (``fmt="json"`` for a ``.json`` one) under ``log_dir``.
Only tests import this module, and only when ``inspect_ai`` is installed.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from inspect_ai import Task, eval
from inspect_ai.dataset import Sample
from inspect_ai.log import EvalLog
from inspect_ai.model import ModelOutput, ModelUsage, get_model
from inspect_ai.scorer import Score, Scorer, Target, includes, mean, scorer
from inspect_ai.solver import TaskState, generate, use_tools
from inspect_ai.tool import Tool, ToolError, tool

from evalnb._runtime.sandbox.bashkit import BashkitSandbox

MODEL = "mockllm/model"
LOOP_CALLS = 4  # the message limit (8) stops the loop sample after 4 model calls


@tool
def bash() -> Tool:
    """A bash tool over bashkit (one interpreter per tool instance)."""
    box = BashkitSandbox(files={"/data/n.txt": "1\n2\n3\n"})

    async def execute(cmd: str) -> str:
        """Run a bash command.

        Args:
            cmd: the command to run.
        """
        if cmd == "crash":
            raise RuntimeError("the tool itself broke")
        if cmd.startswith("sudo"):
            raise ToolError("sudo: permission denied")
        result = await box.exec(cmd)
        text = result.stdout + result.stderr
        if result.exit_code != 0:
            text += f"Exit code: {result.exit_code}"
        return text

    return execute


@scorer(metrics={"answer": [mean()], "tools": [mean()]})
def parts() -> Scorer:
    """A dict-valued scorer: full answer credit when 'three' is said, half for tools."""

    async def score(state: TaskState, target: Target) -> Score:
        said = "three" in state.output.completion
        return Score(value={"answer": 1.0 if said else 0.0, "tools": 0.5})

    return score


def _usage(out: ModelOutput, step: int) -> ModelOutput:
    """Token counts set by hand (mockllm would otherwise count them with tiktoken)."""
    out.usage = ModelUsage(
        input_tokens=100 + 40 * step,
        output_tokens=10 + step,
        total_tokens=110 + 41 * step + 30,
        input_tokens_cache_read=30,
    )
    return out


def _call(cmd: str, step: int) -> ModelOutput:
    return _usage(ModelOutput.for_tool_call(MODEL, "bash", {"cmd": cmd}), step)


def _say(text: str, step: int) -> ModelOutput:
    return _usage(ModelOutput.from_content(MODEL, text), step)


def _script(epochs: int) -> list[ModelOutput]:
    one_epoch = [
        _call("wc -l < /data/n.txt", 0),
        _call("cat /nope", 1),
        _say("There are three lines.", 2),
        _call("echo hello", 0),
        _call("sudo ls", 1),
        _say("goodbye", 2),
        *[_call(f"seq {n} 60", n) for n in range(LOOP_CALLS)],  # a longer output
        _call("crash", 0),
    ]
    return one_epoch * epochs


def agentic_log(
    log_dir: Path, *, epochs: int = 2, fmt: Literal["eval", "json"] = "eval"
) -> EvalLog:
    """Run the scripted agentic task and return its log (written under ``log_dir``)."""
    samples = [
        Sample(id="count", input="How many lines are in /data/n.txt?", target="three"),
        Sample(id="greet", input="Say hello using bash.", target="hello"),
        Sample(id="loop", input="Keep going.", target="done"),
        Sample(id="crash", input="Break the tool.", target="x"),
    ]
    task = Task(
        dataset=samples,
        solver=[use_tools(bash()), generate(tool_calls="loop")],
        scorer=[includes(), parts()],
        epochs=epochs,
        message_limit=8,
    )
    model = get_model(MODEL, custom_outputs=_script(epochs))
    [log] = eval(
        task,
        model=model,
        log_dir=str(log_dir),
        log_format=fmt,
        max_samples=1,
        fail_on_error=False,
        display="none",
        score_display=False,
    )
    return log
