"""Hostile commands in the bashkit and local sandboxes: bounded, recorded, contained."""

from __future__ import annotations

import asyncio
import hashlib
import os
import resource
from pathlib import Path

import pytest
import yaml

from evalnb.analysis.runs import read_run_folder
from evalnb.records import Task
from evalnb.runtime.bash_case import BashCase
from evalnb.runtime.runner import run_cases
from evalnb.runtime.sandbox.base import DEFAULT_MAX_OUTPUT_CHARS
from evalnb.runtime.sandbox.local import LocalSandbox, confinement
from tests.hostile import HOSTILE_COMMANDS

TIMEOUT_S = 1.0
FAKE_KEY = "sk-ant-evalnb-fake-0123456789abcdefghij"
REPO = Path(__file__).resolve().parents[1]
SKIP_NAMES = {".pytest_cache", "runs", "reports", ".cache"}


def host_snapshot(canary: Path) -> dict[str, str]:
    """Names (and hashes of small files) under the watched host folders and the canary.

    /tmp is not watched directly (other tests write there at the same time); the
    canary, a folder of files next to the workspaces, stands in for it.
    """
    out = {}
    for folder in (Path("/"), Path("/etc"), Path.home(), REPO, canary):
        for entry in sorted(folder.iterdir()):
            if entry.name in SKIP_NAMES or entry.name.startswith("."):
                continue
            digest = ""
            if entry.is_file() and not entry.is_symlink() and entry.stat().st_size < 1_000_000:
                digest = hashlib.sha256(entry.read_bytes()).hexdigest()
            out[str(entry)] = digest
    return out


class BashkitCase(BashCase):
    """A bash case with a short per-call timeout."""

    def __init__(self, task: Task) -> None:
        super().__init__(task, timeout_s=TIMEOUT_S)


class LocalCase(BashCase):
    """The same task in the local sandbox (real bash, confined where namespaces allow)."""

    sandbox_kind = "local"

    async def sandbox(self) -> LocalSandbox:
        return LocalSandbox(timeout_s=TIMEOUT_S)


@pytest.mark.parametrize("case_type", [BashkitCase, LocalCase], ids=["bashkit", "local"])
def test_every_hostile_command_is_bounded_recorded_and_contained(tmp_path, monkeypatch, case_type):
    if case_type is LocalCase and confinement() == "none":
        pytest.fail("this machine has no Linux namespaces: the local sandbox cannot be confined")
    monkeypatch.setenv("ANTHROPIC_API_KEY", FAKE_KEY)
    monkeypatch.setenv("EVALNB_TEST_API_KEY", FAKE_KEY)
    canary = tmp_path / "canary"
    canary.mkdir()
    (canary / "keep.txt").write_text("do not touch\n")
    before = host_snapshot(canary)
    rss_before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss

    # each hostile command is one task; its second turn proves the sandbox still answers
    script = {
        "tasks": {
            name: [{"commands": [cmd]}, {"commands": ["echo alive"]}]
            for name, cmd in HOSTILE_COMMANDS.items()
        }
    }
    script_path = tmp_path / "hostile.yaml"
    script_path.write_text(yaml.safe_dump(script))
    cases = [
        case_type(
            Task(
                id=name,
                category="hostile",
                prompt="do it",
                expectations=[{"check": "stdout_contains:alive"}],
            )
        )
        for name in HOSTILE_COMMANDS
    ]
    [run] = asyncio.run(
        run_cases(
            cases, [f"scripted:{script_path}"], tmp_path / "runs", concurrency=8, progress=False
        )
    )

    runs = read_run_folder(run)
    assert len(HOSTILE_COMMANDS) >= 40
    assert runs.tasks.height == len(HOSTILE_COMMANDS)
    assert runs.tasks["error"].is_null().all()
    # the run goes on: after every hostile command, the sandbox still answers
    alive = runs.tool_calls.filter(runs.tool_calls["commands"] == "echo alive")
    assert alive.height == len(HOSTILE_COMMANDS)
    assert (alive["stdout"] == "alive\n").all(), alive.filter(alive["stdout"] != "alive\n")
    hostile = runs.tool_calls.filter(runs.tool_calls["call_index"] == 0)
    # bounded in time and size
    assert hostile["duration_ms"].max() < (TIMEOUT_S + 2) * 1000
    limit = DEFAULT_MAX_OUTPUT_CHARS + 200
    assert hostile["stdout"].str.len_chars().max() <= limit
    assert hostile["stderr"].str.len_chars().max() <= limit
    flooded = hostile.filter(hostile["task_id"] == "output_100mb")
    assert flooded["stdout_truncated"].item() is True  # truncation is recorded, never silent
    # no API key is visible to a command, and none reached disk
    for path in run.iterdir():
        assert FAKE_KEY.encode() not in path.read_bytes(), path
    assert not hostile["stdout"].str.contains(FAKE_KEY, literal=True).any()
    # the host is unchanged, and memory stayed bounded
    assert host_snapshot(canary) == before
    assert not Path("/evalnb_pwned").exists()
    grown_mb = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - rss_before) / 1024
    assert grown_mb < 1024, f"peak RSS grew by {grown_mb:.0f} MB"
    assert os.environ["ANTHROPIC_API_KEY"] == FAKE_KEY
