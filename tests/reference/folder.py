"""A run folder as written: ``run.json`` and the finished records of ``events.jsonl``.

Each ``task_finished`` event carries the whole record of one attempt; an attempt run
again (``--resume --retry-errored``) is the last record written for its (task, epoch).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any


@dataclass
class Run:
    """One run: its ``run.json`` fields and its attempts' records, in order of first
    appearance."""

    info: dict[str, Any]
    records: list[dict[str, Any]] = field(default_factory=list)

    @property
    def run_id(self) -> str:
        return self.info["run_id"]

    @property
    def model(self) -> str:
        return self.info["model"]


def read_run(folder: str | Path) -> Run:
    """The run of ``folder``, read with :mod:`json` only."""
    folder = Path(folder)
    info = json.loads((folder / "run.json").read_text(encoding="utf-8"))
    latest: dict[tuple[str, int], dict[str, Any]] = {}
    for line in (folder / "events.jsonl").read_text(encoding="utf-8").splitlines():
        event = json.loads(line)
        if event["event"] == "task_finished":
            latest[(event["task_id"], event["epoch"])] = event["record"]
    return Run(info, list(latest.values()))
