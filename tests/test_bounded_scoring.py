"""Scoring is bounded: an attempt's checks and gates share one deadline (``--task-timeout``)
and never block the event loop (:mod:`evalnb._scoring.deadline`).

Each run here is a real ``evalnb run`` in a child process with a time limit, so a run that
hangs (as every one of them did before the deadline) fails the test instead of stalling
the suite.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

from tests.test_bad_input import jsonl, task

DEADLINE_S = 2
HANG_LIMIT_S = 50
"""A run still going after this long has hung (its slow gates would take 60 s)."""
TIMED_OUT = f"timed out: scoring ran past its {DEADLINE_S}s deadline"


def evalnb_run(dataset: Path, model: str, out: Path) -> tuple[float, list[dict]]:
    """Run ``evalnb run`` with the deadline; return its wall time and its task records."""
    argv = [sys.executable, "-m", "evalnb._cli", "run", str(dataset), "--model", model]
    argv += ["--out", str(out), "--task-timeout", str(DEADLINE_S), "--quiet"]
    started = time.monotonic()
    done = subprocess.run(argv, capture_output=True, text=True, timeout=HANG_LIMIT_S, check=False)
    elapsed = time.monotonic() - started
    assert done.returncode == 0, done.stderr
    [folder] = out.iterdir()
    events = [json.loads(line) for line in (folder / "events.jsonl").read_text().splitlines()]
    records = [e["record"] for e in events if e["event"] == "task_finished"]
    return elapsed, sorted(records, key=lambda r: r["task"]["id"])


def test_a_catastrophic_regex_is_answered_at_once_and_blocks_nothing(tmp_path):
    pathological = "stdout_regex:^(a+)+$"  # exponential in a backtracking engine (Python's re)
    dataset = tmp_path / "t.jsonl"
    dataset.write_text(
        jsonl(
            task(
                id="bomb",
                solution="printf 'a%.0s' {1..34}; echo b",
                expectations=[{"check": pathological}, {"check": "exit_code:0"}],
            ),
            task(id="beside", solution="sleep 1; echo ok"),
        )
    )
    _, (beside, bomb) = evalnb_run(dataset, "reference", tmp_path / "runs")
    verdicts = [(r["check"], r["passed"]) for r in bomb["score"]["results"]]
    assert verdicts == [(pathological, False), ("exit_code:0", True)]  # RE2: linear time
    assert bomb["error"] is None
    assert beside["error"] is None and beside["score"]["score"] == 1.0


SCENARIO = """name: {name}
target: {{binary: wc, mode: local}}
task: Write a.txt.
run: {{timeout: 60}}
gates:
{gates}"""
QUICK = "  - {type: file_exists, path: a.txt}\n"


def test_slow_gate_commands_and_script_gates_are_cut_at_the_deadline(tmp_path):
    folder = tmp_path / "scenarios"
    folder.mkdir()
    slow_command = "  - {type: command_succeeds, command: 'sleep 30'}\n"
    slow_script = (
        "  - {type: script, description: slow, command: 'sleep 30; echo {\"passed\": true}'}\n"
    )
    (folder / "a.yaml").write_text(SCENARIO.format(name="command", gates=slow_command + QUICK))
    (folder / "b.yaml").write_text(SCENARIO.format(name="script", gates=QUICK + slow_script))
    agent = tmp_path / "agent.yaml"
    agent.write_text("turns:\n  - commands: ['echo hi > a.txt']\n  - text: done\n")
    elapsed, (command, script) = evalnb_run(folder, f"scripted:{agent}", tmp_path / "runs")
    verdicts = {
        r["task"]["id"]: [(c["kind"], c["passed"], c["detail"]) for c in r["score"]["results"]]
        for r in (command, script)
    }
    assert verdicts == {
        "command": [("command_succeeds", False, TIMED_OUT), ("file_exists", False, TIMED_OUT)],
        "script": [("file_exists", True, "a.txt exists (file)"), ("script", False, TIMED_OUT)],
    }
    for record in (command, script):
        assert record["scenario"]["outcome"] == "fail"
        assert record["error"].startswith("scoring timeout:")
    assert elapsed < HANG_LIMIT_S / 2  # each gate would have run 30 s


def test_a_catastrophic_command_pattern_is_answered_at_once(tmp_path):
    # no_transcript_errors and the interaction score match the command pattern against
    # each run of the tool: in a backtracking engine (Python's re) this one never ends
    folder = tmp_path / "scenarios"
    folder.mkdir()
    (folder / "a.yaml").write_text(
        "name: bomb\ntarget: {binary: wc, mode: local, command_pattern: '^wc (a+)+$'}\n"
        "task: Count.\ngates:\n  - {type: no_transcript_errors}\n"
        "evaluation:\n  composite: {gate_weight: 0.5, judge_weight: 0, interaction_weight: 0.5}\n"
    )
    bomb = "wc " + "a" * 34 + "b"
    agent = tmp_path / "agent.yaml"
    agent.write_text(f"turns:\n  - commands: ['{bomb}']\n  - text: done\n")
    _, [record] = evalnb_run(folder, f"scripted:{agent}", tmp_path / "runs")
    [gate] = record["score"]["results"]
    assert gate["detail"] == f"1 of 1 target command(s) failed: `{bomb}` (exit 1)"
    assert record["error"] is None
    assert record["scenario"]["interaction_score"] == 0.0  # its one command failed
