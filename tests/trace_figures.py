"""Helpers for the tests of the agent-trace readers: the shared fixtures and every figure a
reader produces, gathered in one dict so a test compares them all with its own recount."""

from __future__ import annotations

import warnings
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest

from evalnb._analysis.load import load
from evalnb._analysis.runs import Runs
from tests.conftest import ROOT

SHARED = ROOT.parent / "shared" / "fixtures"


def fixture(*parts: str) -> Path:
    """A path under ``../shared/fixtures``; skips the test where it is absent."""
    path = SHARED.joinpath(*parts)
    if not path.exists():
        pytest.skip(f"../shared/fixtures/{'/'.join(parts)} is absent")
    return path


def quiet_load(*paths: str | Path) -> Runs:
    """``en.load`` with its warnings (local times, refs not found) silenced."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return load(*paths)


def figures(runs: Runs) -> dict[str, Any]:
    """Every figure the readers must get right, per task attempt in load order."""
    tasks, tools = runs.tasks, runs.tool_calls
    exit_code = tools.get_column("exit_code")
    return {
        "tasks": tasks.height,
        "passed": tasks.get_column("passed").to_list(),
        "llm_calls": runs.llm_calls.height,
        "tool_calls": (
            int((exit_code == 0).sum()),
            int((exit_code != 0).sum()),
            exit_code.null_count(),
        ),
        **{
            name: tasks.get_column(name).to_list()
            for name in (
                "total_input_tokens",
                "total_output_tokens",
                "cache_read_tokens",
                "cache_write_tokens",
                "base_context",
                "context_growth_avg",
                "duration_ms",
            )
        },
    }


def growth(inputs: list[int]) -> float:
    """Spec 003's average context growth, recounted."""
    return (inputs[-1] - inputs[0]) / (len(inputs) - 1) if len(inputs) > 1 else 0.0


def span_ms(times: list[str]) -> float:
    """Milliseconds from the first to the last of ISO times (``Z`` or an offset)."""
    parsed = [datetime.fromisoformat(t.replace("Z", "+00:00")) for t in times]
    return (max(parsed) - min(parsed)).total_seconds() * 1000


def sim_run(out: Path) -> Path:
    """A finished evalnb run of the packaged ``smoke`` tasks x 2 epochs by ``sim/flailing``
    (token usage, latencies, failed commands and failed tasks)."""
    from evalnb._cli import main

    assert (
        main(["run", "smoke", "--model", "sim/flailing", "--epochs", "2", "--out", str(out)]) == 0
    )
    [run] = out.iterdir()
    return run


SUMMARY_FIGURES = [
    "total_tasks",
    "distinct_tasks",
    "total_passed",
    "errored_tasks",
    "pass_rate",
    "total_score",
    "total_max_score",
    "overall_rate",
    "total_tool_calls",
    "tool_calls_ok",
    "tool_calls_error",
    "tool_calls_unknown",
    "total_turns",
    "natural_stop_rate",
    "total_input_tokens",
    "total_output_tokens",
    "total_duration_ms",
    "cost_usd",
]
"""The figures of ``en.summary`` a round trip through another format must keep."""
