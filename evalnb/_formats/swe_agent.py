"""Read SWE-agent trajectories (``.traj``: ``trajectory``, ``history``, ``info``, ...).

A ``.traj`` file is one task attempt and one run (provider ``swe-agent``). SWE-agent
records tokens only as the attempt's totals, so evalnb keeps exactly those:

- ``task_id``: the problem statement's ``id`` in ``replay_config`` (else the file's
  name); ``prompt``: the first user message of ``history``.
- Model: ``replay_config.agent.model.name`` (``replay_config`` may be a JSON string),
  else ``agent.model.name`` or ``model_name`` in the ``args.yaml`` beside the file,
  else the first ``__``-separated part of the folder's name.
- Tokens: ``info.model_stats``: ``tokens_sent`` (the prompts of every call, summed:
  total input) and ``tokens_received`` (output); ``api_calls`` is ``turns``;
  ``instance_cost`` is the recorded cost. There are no per-call rows (``llm_calls``
  stays empty and ``per_call_tokens`` is listed as unavailable) and no cache counts.
- ``tool_calls``: one per ``trajectory`` entry: ``commands`` = ``action``, ``stdout`` =
  ``observation``, ``duration_ms`` = ``execution_time``; SWE-agent does not record exit
  codes (null).
- Ending: ``info.exit_status`` ``submitted`` is a natural stop; a status that names an
  error (``exit_error``, ``exit_environment_error``, ...) errors the task; others (cost,
  context or format limits, ``submitted (exit_cost)``) are neither. ``passed`` is null:
  the SWE-bench evaluation is not in the file. ``duration_ms`` is unknown (null).

Example:
    >>> from evalnb._formats.detect import Probe
    >>> FORMAT.recognises(Probe("/"))
    False
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from evalnb._formats.agent_logs import Attempt, Usage, one_run, task_record
from evalnb._formats.detect import Format, Probe
from evalnb._formats.json_file import read_json, validate
from evalnb._formats.yamlio import load_model
from evalnb.records import ContentBlock, Message, RunMeta, TaskRecord, ToolCallResult

SOURCE = "swe-agent"


class _Open(BaseModel):
    model_config = ConfigDict(extra="ignore")


class Step(_Open):
    """One ``trajectory`` entry."""

    action: str = ""
    observation: str = ""
    thought: str = ""
    execution_time: float | str | None = None


class ModelStats(_Open):
    tokens_sent: int | None = Field(None, ge=0)
    tokens_received: int | None = Field(None, ge=0)
    api_calls: int | None = Field(None, ge=0)
    instance_cost: float | None = None


class Info(_Open):
    exit_status: str | None = None
    model_stats: ModelStats = Field(default_factory=ModelStats)


class Traj(_Open):
    """The ``.traj`` file."""

    trajectory: list[Step]
    history: list[dict[str, Any]] = Field(default_factory=list)
    info: Info = Field(default_factory=Info)
    replay_config: dict[str, Any] | str | None = None


def _config(traj: Traj) -> dict[str, Any]:
    config = traj.replay_config
    if isinstance(config, str):
        try:
            config = json.loads(config)
        except ValueError:
            config = None
    return config if isinstance(config, dict) else {}


def _model(path: Path, config: dict[str, Any]) -> str:
    name = ((config.get("agent") or {}).get("model") or {}).get("name")
    if isinstance(name, str) and name:
        return name
    args = path.parent / "args.yaml"
    if args.is_file():
        loaded = load_model(args, dict[str, Any], display=str(args))
        model = (loaded.get("agent") or {}).get("model") or {}
        for key in ("name", "model_name"):
            if isinstance(model.get(key), str):
                return str(model[key])
    return path.parent.name.split("__")[0] or "unknown"


def _text(content: Any) -> str:
    if isinstance(content, list):
        return "".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
    return str(content or "")


def _seconds_ms(value: float | str | None) -> float | None:
    try:
        return float(value) * 1000 if value is not None else None
    except ValueError:
        return None


def read_swe_agent(path: str | Path) -> list[tuple[RunMeta, list[TaskRecord]]]:
    """Read one ``.traj`` file as a run of one task attempt (module docstring).

    Example:
        >>> import tempfile, pathlib, json
        >>> p = pathlib.Path(tempfile.mkdtemp()) / "gpt4__repo" / "i1.traj"
        >>> p.parent.mkdir()
        >>> _ = p.write_text(json.dumps({"trajectory": [{"action": "ls"}], "info": {
        ...     "exit_status": "submitted", "model_stats": {"tokens_sent": 900,
        ...     "tokens_received": 40, "api_calls": 2}}}))
        >>> [(m.model, r.trace.turns, r.trace.total_input_tokens) for m, [r] in read_swe_agent(p)]
        [('gpt4', 2, 900)]
    """
    path = Path(path)
    text, doc = read_json(path)
    traj = validate(path, text, doc, Traj)
    config = _config(traj)
    statement = config.get("problem_statement") or {}
    stats = traj.info.model_stats
    status = traj.info.exit_status
    prompt = next((_text(m.get("content")) for m in traj.history if m.get("role") == "user"), None)
    messages = (
        [Message(role="user", content=[ContentBlock(type="text", text=prompt)])] if prompt else []
    )
    tools = []
    for n, step in enumerate(traj.trajectory):
        tools.append(
            ToolCallResult(
                commands=step.action,
                stdout=step.observation,
                exit_code=None,
                duration_ms=_seconds_ms(step.execution_time),
            )
        )
        call_id = f"step-{n}"
        messages += [
            Message(
                role="assistant",
                content=[
                    *([ContentBlock(type="text", text=step.thought)] if step.thought else []),
                    ContentBlock(
                        type="tool_use",
                        id=call_id,
                        name="swe-agent",
                        input={"commands": step.action},
                    ),
                ],
            ),
            Message(
                role="tool_result",
                content=[
                    ContentBlock(type="tool_result", tool_use_id=call_id, content=step.observation)
                ],
            ),
        ]
    task_id = str(statement.get("id") or path.stem)
    attempt = Attempt(
        task_id=task_id,
        category=SOURCE,
        prompt=prompt,
        tool_calls=tools,
        messages=messages,
        turns=stats.api_calls,
        totals=Usage(stats.tokens_sent, stats.tokens_received),
        natural_stop=None if status is None else status == "submitted",
        error=f"swe-agent exit status {status}" if status and "error" in status else None,
        extra={
            "exit_status": status,
            "recorded_cost_usd": stats.instance_cost,
            "submission": (doc.get("info") or {}).get("submission"),
        },
    )
    unavailable = [
        "per_call_tokens",
        "llm_calls",
        "exit_codes",
        "cache_read_tokens",
        "cache_write_tokens",
        "checks",
        "duration",
    ]
    return one_run(
        path,
        task_record(attempt),
        source=SOURCE,
        provider=SOURCE,
        model=_model(path, config),
        key=path.stem,
        unavailable=unavailable,
    )


def _recognises(probe: Probe) -> bool:
    if probe.is_dir:
        return False
    keys = probe.keys()
    return {"trajectory", "info"} <= keys and bool(keys & {"history", "replay_config"})


FORMAT = Format("a SWE-agent trajectory", _recognises, read=read_swe_agent, key="swe-agent")
