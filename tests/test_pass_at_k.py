"""pass@k and pass^k: each task's estimate checked against Inspect AI's reducers, and the
means and task counts against a recount from the attempts."""

from __future__ import annotations

import json
import math
import random

import polars as pl
import pytest
from inspect_ai.scorer import Score, pass_at, pass_k

import evalnb as en
from evalnb._analysis.load import load
from evalnb._analysis.pass_at_k import pass_at_k
from evalnb._analysis.summary import summary
from evalnb._cli import main
from evalnb._store import RunStore
from evalnb.records import RunMeta
from tests.factories import record, runs_of
from tests.test_metrics import FREE


def attempts(task_id: str, outcomes: list[bool], error_on: int | None = None) -> list:
    """One task's attempts, epoch 1.., each passing or failing its one check."""
    return [
        record(task_id, [(ok, 1)], epoch=e + 1, error="boom" if e == error_on else None)
        for e, ok in enumerate(outcomes)
    ]


def random_tasks(seed: int) -> dict[str, list[bool]]:
    """Tasks with 1 to 6 attempts and any mix of passes."""
    rng = random.Random(seed)
    return {
        f"t{i}": [rng.random() < rng.random() for _ in range(rng.randint(1, 6))] for i in range(12)
    }


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_each_figure_is_the_mean_of_inspects_reducers_over_tasks_with_k_attempts(seed):
    tasks = random_tasks(seed)
    runs = runs_of(("r", "m", [a for t, oks in tasks.items() for a in attempts(t, oks)]))
    frame = pass_at_k(runs, k=[1, 2, 3, 5])
    for row in frame.iter_rows(named=True):
        k = row["k"]
        scores = {t: [Score(value=float(ok)) for ok in oks] for t, oks in tasks.items()}
        used = [t for t, oks in tasks.items() if len(oks) >= k]
        assert row["tasks"] == len(used)
        at = [pass_at(k)(scores[t]).value for t in used]
        hat = [pass_k(k)(scores[t]).value for t in used]
        assert row["pass_at_k"] == pytest.approx(sum(at) / len(at), abs=1e-12)
        assert row["pass_hat_k"] == pytest.approx(sum(hat) / len(hat), abs=1e-12)


def test_the_formulas_recounted_by_hand():
    # 5 attempts, 2 passed: pass@2 = 1 - C(3,2)/C(5,2) = 0.7; pass^2 = C(2,2)/C(5,2) = 0.1
    runs = runs_of(("r", "m", attempts("a", [True, True, False, False, False])))
    row = pass_at_k(runs, k=[2]).row(0, named=True)
    assert row["pass_at_k"] == pytest.approx(1 - math.comb(3, 2) / math.comb(5, 2))
    assert row["pass_hat_k"] == pytest.approx(math.comb(2, 2) / math.comb(5, 2))


def test_an_errored_attempt_counts_as_not_passed():
    runs = runs_of(("r", "m", attempts("a", [True, True], error_on=1)))
    assert pass_at_k(runs, k=[1]).get_column("pass_at_k").item() == 0.5


def test_a_k_above_every_tasks_attempts_has_no_estimate():
    runs = runs_of(("r", "m", attempts("a", [True, False])))
    row = pass_at_k(runs, k=[3]).row(0, named=True)
    assert row["tasks"] == 0
    assert row["pass_at_k"] is None and row["pass_at_k_lo"] is None


def test_intervals_hold_the_estimate_and_never_collapse():
    every_pass = {f"t{i}": [True] * 3 for i in range(8)}
    mixed = random_tasks(4)
    for tasks in (every_pass, mixed):
        runs = runs_of(("r", "m", [a for t, oks in tasks.items() for a in attempts(t, oks)]))
        for row in pass_at_k(runs, k=[1, 2]).iter_rows(named=True):
            for name in ("pass_at_k", "pass_hat_k"):
                lo, value, hi = row[f"{name}_lo"], row[name], row[f"{name}_hi"]
                assert lo <= value <= hi and hi - lo > 0.01


def test_k_may_be_one_whole_number():
    runs = runs_of(("r", "m", [a for t, oks in random_tasks(5).items() for a in attempts(t, oks)]))
    assert en.pass_at_k(runs, k=3).equals(en.pass_at_k(runs, k=[3]))


def pass_rate_and_pass_at_1(runs) -> tuple[tuple, tuple]:
    """``(value, lo, hi)`` of the summary's pass rate and of pass@1."""
    rate = summary(runs, prices=FREE).select("pass_rate", "pass_rate_lo", "pass_rate_hi")
    at_1 = pass_at_k(runs, k=[1]).select("pass_at_k", "pass_at_k_lo", "pass_at_k_hi")
    return rate.row(0), at_1.row(0)


@pytest.mark.parametrize("epochs", [1, 3])
def test_pass_at_1_is_the_pass_rate_interval_and_all(epochs):
    rng = random.Random(epochs)
    tasks = {f"t{i}": [rng.random() < 0.6 for _ in range(epochs)] for i in range(9)}
    runs = runs_of(("r", "m", [a for t, oks in tasks.items() for a in attempts(t, oks)]))
    rate, at_1 = pass_rate_and_pass_at_1(runs)
    assert at_1 == pytest.approx(rate, abs=1e-12)


def test_an_unscored_attempt_is_left_out_as_in_the_pass_rate():
    runs = runs_of(("r", "m", [*attempts("a", [True, False]), *attempts("b", [False, False])]))
    # b's second attempt has no verdict (an Inspect sample no scorer scored)
    runs.tasks = runs.tasks.with_columns(
        pl.when((pl.col("task_id") == "b") & (pl.col("epoch") == 2))
        .then(None)
        .otherwise(pl.col("passed"))
        .alias("passed")
    )
    rate, at_1 = pass_rate_and_pass_at_1(runs)
    assert rate[0] == 1 / 3 and at_1[0] == (1 / 2 + 0 / 1) / 2
    assert pass_at_k(runs, k=2).get_column("tasks").item() == 1  # b has one attempt left


def test_k_must_be_at_least_one():
    with pytest.raises(ValueError, match="at least 1"):
        pass_at_k(runs_of(("r", "m", attempts("a", [True]))), k=[0])


def test_summary_json_adds_pass_at_k_and_pass_hat_k_with_limits(tmp_path, capsys):
    recs = [*attempts("a", [True, False, True]), *attempts("b", [True] * 3)]
    folder = RunStore.write_records(
        tmp_path, RunMeta(run_id="r", provider="reference", model="reference"), recs
    )
    assert main(["summary", str(folder), "--k", "1,3", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    expected = pass_at_k(load(folder), k=[1, 3]).row(1, named=True)  # k = 3
    assert doc["pass_at_3"] == expected["pass_at_k"] == 1.0
    assert doc["pass_hat_3"] == expected["pass_hat_k"] == pytest.approx((0 + 1) / 2)
    assert (doc["pass_hat_3_lo"], doc["pass_hat_3_hi"]) == (
        expected["pass_hat_k_lo"],
        expected["pass_hat_k_hi"],
    )
    assert doc["pass_at_1"] == pytest.approx((2 / 3 + 1) / 2) and doc["pass_at_3_tasks"] == 2
    assert main(["summary", str(folder), "--k", "1,3"]) == 0
    assert "k=3  pass@k 100.0%" in capsys.readouterr().out


def test_summary_refuses_a_k_below_one(tmp_path, capsys):
    folder = RunStore.write_records(
        tmp_path, RunMeta(run_id="r", provider="reference", model="reference"), []
    )
    assert main(["summary", str(folder), "--k", "0"]) == 2
    assert "expected an integer >= 1" in capsys.readouterr().err
