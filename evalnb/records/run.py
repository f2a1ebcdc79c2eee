"""``run.json``: what one run was (one model over one dataset).

Example:
    >>> RunMeta(run_id="r", provider="p", model="m").status
    'running'
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from evalnb.records.score import ReplayAgreement


class Filters(BaseModel):
    """The ``--tag`` and ``--task`` selections a run was made with (``--resume`` reuses them)."""

    model_config = ConfigDict(extra="forbid")

    tags: list[str] = Field(default_factory=list)
    task_ids: list[str] = Field(default_factory=list)


_LEGACY_FLAGS = ("per_call_tokens", "per_call_latency", "tool_call_duration")


class RunSettings(BaseModel):
    """How a run was made (evalnb runs) or where it came from (imported runs).

    For an evalnb run: ``spec`` (the ``--model`` value, from which ``--resume``
    rebuilds the provider), ``concurrency``, ``seed``, ``base_url``, ``filters``,
    ``provider`` (the provider's own non-secret settings) and, for a replay,
    ``replay_agreement``. For an imported run: ``source_files``, ``unavailable``
    (what the format does not record: ``per_call_tokens``, ``per_call_latency``,
    ``tool_call_duration``, ...), ``target`` and ``command_pattern`` (the tool whose
    commands were scored), ``exit_codes`` (how exit codes were obtained when they are
    not exact) and ``checks_available`` (False when some tasks carry no check verdicts).

    Example:
        >>> RunSettings(spec="reference", filters={"tags": ["json"]}).filters.tags
        ['json']
    """

    model_config = ConfigDict(extra="forbid")

    spec: str | None = None
    concurrency: int | None = None
    seed: int | None = None
    base_url: str | None = None
    filters: Filters = Field(default_factory=Filters)
    provider: dict[str, Any] = Field(default_factory=dict)
    replay_agreement: ReplayAgreement | None = None
    source_files: list[str] = Field(default_factory=list)
    unavailable: list[str] = Field(default_factory=list)
    target: str | None = None
    command_pattern: str | None = None
    exit_codes: str | None = None
    checks_available: bool | None = None

    @model_validator(mode="before")
    @classmethod
    def _upgrade(cls, data: Any) -> Any:
        """Read the untyped ``settings`` of run folders written by evalnb before 0.2."""
        if not isinstance(data, dict):
            return data
        data = dict(data)
        filters = data.get("filters")
        if isinstance(filters, list) and len(filters) == 2:
            data["filters"] = {"tags": filters[0], "task_ids": filters[1]}
        lacking = [k for k in _LEGACY_FLAGS if data.pop(k, None) is False]
        if lacking:
            data["unavailable"] = [*data.get("unavailable", []), *lacking]
        for key in ("source_file", "source_folder"):
            if isinstance(data.get(key), str):
                data["source_files"] = [*data.get("source_files", []), data.pop(key)]
        if isinstance(data.get("files"), list):
            data["source_files"] = [*data.get("source_files", []), *data.pop("files")]
        return data


class RunMeta(BaseModel):
    """``run.json``: one model over one dataset.

    ``status`` is ``partial`` for a run that lacks tasks it should have; then
    ``missing_tasks`` says how many, where the source tells (None: not known).
    """

    model_config = ConfigDict(extra="forbid")

    run_id: str
    provider: str
    model: str
    source: str = "evalnb"
    dataset: str | None = None
    dataset_sha256: str | None = None
    max_turns: int | None = None
    epochs: int = 1
    sandbox: str | None = None
    sandbox_version: str | None = None
    evalnb_version: str | None = None
    guidance: str | None = None
    simulated: bool = False
    recorded_from: str | None = None
    started_at: str | None = None
    finished_at: str | None = None
    status: Literal["running", "partial", "complete"] = "running"
    task_count: int | None = None
    missing_tasks: int | None = None
    settings: RunSettings = Field(default_factory=RunSettings)
