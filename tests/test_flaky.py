"""Flaky tasks and run consistency, recounted from each task's attempts."""

from __future__ import annotations

import json

import pytest

from evalnb._analysis.flaky import consistency, flaky_tasks
from evalnb._analysis.stats import wilson
from evalnb._cli import main
from evalnb._store import RunStore
from evalnb.records import RunMeta
from tests import factories
from tests.test_pass_at_k import attempts

# two runs of model m (seeds), one of model n; task -> outcomes per run
M1 = {"steady": [True, True], "coin": [True, False], "never": [False, False], "once": [True]}
M2 = {"steady": [True], "coin": [False, False], "never": [False]}
N1 = {"steady": [True, False, False], "never": [False] * 3}


def runs_of(*specs: tuple[str, str, dict[str, list[bool]]]):
    return factories.runs_of(
        *(
            (r, m, [a for t, oks in tasks.items() for a in attempts(t, oks)])
            for r, m, tasks in specs
        )
    )


def test_a_task_is_flaky_for_a_model_when_its_attempts_disagree_over_all_its_runs():
    frame = flaky_tasks(runs_of(("m1", "m", M1), ("m2", "m", M2), ("n1", "n", N1)))
    # recount: m coin = 1 of 2 + 0 of 2; m steady = 2 + 1 of 3 (not flaky); n steady 1 of 3
    assert frame.select("model", "task_id", "attempts", "passed", "runs").rows() == [
        ("m", "coin", 4, 1, 2),
        ("n", "steady", 3, 1, 1),
    ]
    assert frame.get_column("pass_share").to_list() == [0.25, pytest.approx(1 / 3)]


def test_consistency_is_the_share_of_repeated_tasks_whose_attempts_agree():
    frame = consistency(runs_of(("m1", "m", M1), ("m2", "m", M2), ("n1", "n", N1)))
    rows = {r["run_id"]: r for r in frame.iter_rows(named=True)}
    # m1 repeats steady, coin, never (once has one attempt): coin is flaky
    assert (rows["m1"]["repeated_tasks"], rows["m1"]["flaky_tasks"]) == (3, 1)
    assert rows["m1"]["consistency"] == pytest.approx(2 / 3)
    assert (rows["m1"]["consistency_lo"], rows["m1"]["consistency_hi"]) == wilson(2, 3)
    # m2 repeats only coin, and its two attempts agree (both failed)
    assert (rows["m2"]["repeated_tasks"], rows["m2"]["consistency"]) == (1, 1.0)
    assert rows["n1"]["consistency"] == 0.5


def test_a_run_without_repeated_tasks_has_no_consistency():
    row = consistency(runs_of(("r", "m", {"a": [True], "b": [False]}))).row(0, named=True)
    assert (row["repeated_tasks"], row["consistency"], row["consistency_lo"]) == (0, None, None)


def test_the_flaky_command_prints_both_tables(tmp_path, capsys):
    recs = [a for t, oks in M1.items() for a in attempts(t, oks)]
    meta = RunMeta(run_id="m1", provider="reference", model="reference")
    folder = RunStore.write_records(tmp_path, meta, recs)
    assert main(["flaky", str(folder), "--json"]) == 0
    rows = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert rows[0]["flaky_tasks"] == 1 and rows[1]["task_id"] == "coin"
