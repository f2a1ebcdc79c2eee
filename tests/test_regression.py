"""The flipped tasks between two runs, recounted from per-task results, and the CI gate's
exit codes from the command line: in a fresh interpreter once, as CI runs it, and otherwise
through ``main`` in this process (the same code, without paying an interpreter start each)."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from evalnb._analysis.compare import compare
from evalnb._analysis.regression import regression_gate, task_diff
from evalnb._analysis.stats import holm, mcnemar_exact
from evalnb._cli import main
from evalnb._store import RunStore
from evalnb.records import RunMeta, ScoreResult
from tests.factories import record, runs_of


def outcomes_run(outcomes: dict[str, list[bool]]) -> list:
    """Attempts whose check ``exit_code:0`` passes or fails; a second check fails with it."""
    recs = []
    for task_id, oks in outcomes.items():
        for epoch, ok in enumerate(oks, start=1):
            rec = record(task_id, [(ok, 1)], epoch=epoch)
            rec.score.results.append(ScoreResult(check="stdout_contains:done", passed=ok))
            recs.append(rec)
    return recs


A = {"kept": [True], "lost": [True], "won": [False], "never": [False], "lost2": [True, True]}
B = {"kept": [True], "lost": [False], "won": [True], "never": [False], "lost2": [True, False]}


def test_task_diff_lists_regressions_first_with_the_checks_that_failed():
    runs = runs_of(("a", "ma", outcomes_run(A)), ("b", "mb", outcomes_run(B)))
    diff = task_diff(runs, "a", "b")
    # recount: a task flips when its majority verdict differs (lost2: 2/2 vs 1/2, a tie fails)
    expected = [
        (t, "pass→fail" if sum(A[t]) * 2 > len(A[t]) else "fail→pass")
        for t in sorted(A)
        if (sum(A[t]) * 2 > len(A[t])) != (sum(B[t]) * 2 > len(B[t]))
    ]
    expected.sort(key=lambda row: (row[1] != "pass→fail", row[0]))
    assert diff.select("task_id", "flip").rows() == expected
    lost = diff.filter(task_id="lost").row(0, named=True)
    assert lost["failed_checks_a"] == []
    assert lost["failed_checks_b"] == ["exit_code:0", "stdout_contains:done"]
    assert diff.filter(task_id="lost2").select("passed_b", "attempts_b").row(0) == (1, 2)


def test_task_diff_names_an_errored_attempt():
    errored = record("t", [(True, 1)], error="provider unreachable")
    runs = runs_of(("a", "ma", [record("t", [(True, 1)])]), ("b", "mb", [errored]))
    assert task_diff(runs, "a", "b").get_column("failed_checks_b").item().to_list() == [
        "error: provider unreachable"
    ]


def test_the_gate_is_holm_adjusted_over_the_metrics_it_watches():
    worse = {f"t{i}": [i < 2] for i in range(12)}
    runs = runs_of(
        ("a", "ma", outcomes_run({t: [True] for t in worse})), ("b", "mb", outcomes_run(worse))
    )
    comparison = compare(runs, "a", "b")
    gate = regression_gate(comparison, ["pass_rate", "weighted_rate"], alpha=0.05)
    p = mcnemar_exact(10, 0)
    assert gate.get_column("p").to_list()[0] == p
    assert gate.get_column("p_holm").to_list() == holm([p, comparison.rate_p])
    assert gate.get_column("regressed").to_list() == [True, True]
    # the other way round B is better: never a regression, however small p is
    better = regression_gate(compare(runs, "b", "a"), ["pass_rate"])
    assert better.get_column("regressed").to_list() == [False]
    with pytest.raises(ValueError, match="unknown metric 'speed'"):
        regression_gate(comparison, ["speed"])


def evalnb_process(*args: str) -> subprocess.CompletedProcess[str]:
    """The command line in a fresh interpreter, as CI runs it."""
    return subprocess.run(
        [sys.executable, "-m", "evalnb._cli", *args], capture_output=True, text=True, check=False
    )


@pytest.fixture
def evalnb(capsys) -> Callable[..., subprocess.CompletedProcess[str]]:
    """The command line's ``main`` in this process: its exit code, stdout and stderr."""

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        code = main(list(args))
        out, err = capsys.readouterr()
        return subprocess.CompletedProcess(args, code, out, err)

    return run


def mostly_errored(tasks: int, errored: int) -> list:
    """One failed attempt per task, the first ``errored`` of them errored (as an outage)."""
    return [
        record(f"t{i}", [(False, 1)], error="provider unreachable" if i < errored else None)
        for i in range(tasks)
    ]


@pytest.fixture(scope="module")
def folders(tmp_path_factory) -> tuple[Path, Path, Path]:
    """Base passing all 12 tasks; head passing 2; head with 10 of 12 attempts errored."""
    root = tmp_path_factory.mktemp("gate")
    worse = {f"t{i}": [i < 2] for i in range(12)}
    base = outcomes_run({t: [True] for t in worse})
    meta = {"provider": "reference", "model": "reference"}
    a = RunStore.write_records(root, RunMeta(run_id="base", **meta), base)
    b = RunStore.write_records(root, RunMeta(run_id="head", **meta), outcomes_run(worse))
    broken = RunStore.write_records(root, RunMeta(run_id="broken", **meta), mostly_errored(12, 10))
    return a, b, broken


def test_the_gate_exits_1_on_a_significant_regression_and_0_otherwise(folders, evalnb):
    base, head, _ = map(str, folders)
    failed = evalnb_process("compare", base, head, "--fail-on-regression")
    assert failed.returncode == 1, failed.stderr
    assert "pass_rate: A - B +0.833" in failed.stdout and "FAIL: B regressed" in failed.stdout
    assert "Tasks that flipped from A to B: 10 pass→fail, 0 fail→pass" in failed.stdout
    passed = evalnb("compare", head, base, "--fail-on-regression", "--alpha", "0.01")
    assert passed.returncode == 0, passed.stderr
    assert "PASS: no significant regression" in passed.stdout
    # without the flag compare only reports
    assert evalnb("compare", base, head).returncode == 0


def test_the_gate_counts_errored_attempts_as_failed(folders, evalnb):
    base, _, broken = map(str, folders)
    # 10 of B's 12 attempts errored, the other 2 failed: B passed nothing
    done = evalnb("compare", base, broken, "--fail-on-regression")
    assert done.returncode == 1, done.stdout + done.stderr
    assert "Tasks that flipped from A to B: 12 pass→fail, 0 fail→pass" in done.stdout
    assert "pass_rate: A - B +1.000" in done.stdout
    assert "errored attempts counted as failed: 0 in A, 10 in B" in done.stdout
    doc = json.loads(evalnb("compare", base, broken, "--fail-on-regression", "--json").stdout)
    assert doc["p"] == mcnemar_exact(12, 0) and doc["regressed"] is True
    assert (doc["errored_counted_failed_a"], doc["errored_counted_failed_b"]) == (0, 10)
    # without the gate, compare still leaves errored attempts out, and says so
    plain = evalnb("compare", base, broken)
    assert plain.returncode == 0
    assert "errored attempts left out: 0 in A, 10 in B" in plain.stdout


def test_the_gate_refuses_a_comparison_that_left_errored_attempts_out():
    runs = runs_of(
        ("a", "ma", [record(f"t{i}", [(True, 1)]) for i in range(12)]),
        ("b", "mb", mostly_errored(12, 10)),
    )
    with pytest.raises(ValueError, match="left 10 errored attempts out"):
        regression_gate(compare(runs, "a", "b"))
    gate = regression_gate(compare(runs, "a", "b", include_errored=True))
    assert gate.select("b", "regressed").row(0) == (0.0, True)


def test_the_gate_exits_2_on_bad_input(folders, tmp_path, evalnb):
    base, head, _ = map(str, folders)
    for args in (
        ["--fail-on-regression", "--metric", "speed"],
        ["--fail-on-regression", "--alpha", "1.5"],
        ["--metric", "pass_rate"],  # without --fail-on-regression
    ):
        done = evalnb("compare", base, head, *args)
        assert done.returncode == 2, args
        assert done.stderr.strip(), args
    assert (
        evalnb("compare", base, str(tmp_path / "missing"), "--fail-on-regression").returncode == 2
    )


def test_the_gate_json_is_machine_readable(folders, evalnb):
    base, head, _ = map(str, folders)
    done = evalnb("compare", base, head, "--fail-on-regression", "--json")
    assert done.returncode == 1
    doc = json.loads(done.stdout)
    assert doc["regressed"] is True
    assert [r["metric"] for r in doc["regression"]] == ["pass_rate"]
    assert len(doc["flipped"]) == 10 and doc["flipped"][0]["flip"] == "pass→fail"
    assert doc["p"] == mcnemar_exact(10, 0)


def test_the_flips_text_keeps_each_check_on_one_line(tmp_path, capsys):
    multi = record("t1", [(False, 1)])
    multi.score.results.append(ScoreResult(check="stdout_contains:first\nsecond", passed=False))
    trace = "Traceback (most recent call last):\n" + "  frame\n" * 40 + "Boom"
    meta = {"provider": "reference", "model": "reference"}
    base = [record("t1", [(True, 1)]), record("t2", [(True, 1)])]
    head = [multi, record("t2", [(True, 1)], error=trace)]
    a = RunStore.write_records(tmp_path, RunMeta(run_id="base", **meta), base)
    b = RunStore.write_records(tmp_path, RunMeta(run_id="head", **meta), head)
    assert main(["compare", str(a), str(b)]) == 0
    out = capsys.readouterr().out
    flips = out[out.index("Tasks that flipped") :].splitlines()
    assert flips[2] == "      B failed: exit_code:0, stdout_contains:first\\nsecond"
    error = flips[4].removeprefix("      B failed: ")
    assert error.startswith("error: Traceback (most recent call last):\\n  frame\\n")
    assert len(error) == 120 and error.endswith("…")
    assert len(flips) == 5  # the head, then two lines for each flipped task
