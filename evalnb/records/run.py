"""``run.json``: what one run was (one model over one dataset).

Example:
    >>> RunMeta(run_id="r", provider="p", model="m").status
    'running'
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field


class RunMeta(BaseModel):
    """``run.json``: one model over one dataset."""

    model_config = ConfigDict(extra="allow")

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
    settings: dict[str, Any] = Field(default_factory=dict)
