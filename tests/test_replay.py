"""Replay: recorded commands run again in a fresh sandbox, re-scored, compared with the record."""

from __future__ import annotations

import asyncio
import json

import polars as pl

from evalnb._analysis.load import load
from evalnb._analysis.runs import read_run_folder
from evalnb._cli import main
from evalnb._runtime.cases import load_cases
from evalnb._runtime.runner import run_cases
from evalnb._store import RunStore
from evalnb.records import ReplayAgreement


def test_replaying_an_evalnb_run_reproduces_its_commands_and_verdicts(tmp_path):
    data = tmp_path / "tasks.jsonl"
    data.write_text(
        json.dumps(
            {
                "id": "a",
                "category": "c",
                "prompt": "p",
                "solution": "mkdir -p /o && echo hi > /o/f && cat /o/f",
                "expectations": [
                    {"check": "file_contains:/o/f:hi"},
                    {"check": "stdout_contains:hi"},
                ],
            }
        )
        + "\n"
        + json.dumps(
            {
                "id": "b",
                "category": "c",
                "prompt": "p",
                "solution": "ls /missing",
                "expectations": [{"check": "exit_code:0"}],
            }
        )
        + "\n"
    )
    cases = load_cases(data)
    [original] = asyncio.run(run_cases(cases, ["reference"], tmp_path / "a", progress=False))
    [replayed] = asyncio.run(
        run_cases(cases, [f"replay:{original}"], tmp_path / "b", progress=False)
    )
    meta = RunStore.open(replayed).meta
    assert meta.model == "replay:reference" and meta.recorded_from == str(original)
    assert meta.settings.replay_agreement == ReplayAgreement(checks_agree=3, checks_compared=3)
    a, b = read_run_folder(original), read_run_folder(replayed)
    cols = ["task_id", "call_index", "commands", "stdout", "exit_code"]
    assert a.tool_calls.select(cols).sort(cols[:2]).equals(b.tool_calls.select(cols).sort(cols[:2]))
    assert (
        a.tasks.sort("task_id")["passed"].to_list() == b.tasks.sort("task_id")["passed"].to_list()
    )


def test_replaying_the_published_bashkit_eval_runs(tmp_path, bashkit_eval_files, capsys):
    for path in bashkit_eval_files:
        out = tmp_path / path.stem
        assert main(["run", str(path), "--model", f"replay:{path}", "--out", str(out)]) == 0
        [run_dir] = out.iterdir()
        meta = RunStore.open(run_dir).meta
        agreement = meta.settings.replay_agreement
        recorded = load(path)
        replayed = read_run_folder(run_dir)
        # every task is replayed, every recorded command runs again, in order
        assert replayed.tasks.height == recorded.tasks.height == 25
        keys = ["task_id", "call_index"]
        assert (
            replayed.tool_calls.sort(keys)["commands"].to_list()
            == recorded.tool_calls.sort(keys)["commands"].to_list()
        )
        # turns and tokens are copied from the recording; categories are the recording's
        cols = ["task_id", "category", "turns", "total_input_tokens", "total_output_tokens"]
        assert (
            replayed.tasks.select(cols)
            .sort("task_id")
            .equals(recorded.tasks.select(cols).sort("task_id"))
        )
        # the agreement figure is a real comparison: every check compared, verdict by verdict
        nth = pl.int_range(pl.len()).over("task_id", "check").alias("nth")
        key = ["task_id", "check", "nth"]
        both = (
            recorded.checks.with_columns(nth)
            .select(*key, "passed")
            .join(replayed.checks.with_columns(nth).select(*key, "passed"), on=key)
        )
        assert agreement.checks_compared == recorded.checks.height == both.height
        assert (
            agreement.checks_agree == both.filter(pl.col("passed") == pl.col("passed_right")).height
        )
        assert 0 < agreement.checks_agree <= agreement.checks_compared
        print(
            f"{meta.model}: {agreement.checks_agree}/{agreement.checks_compared} "
            "check verdicts agree with the recording"
        )
    shown = capsys.readouterr().out
    assert "check verdicts agree" in shown
