"""Run summaries, categories, epochs, context growth and paired comparisons (the metrics).

Every expected figure below is worked out by hand from the records built in the test.
"""

from __future__ import annotations

import json
import math

import polars as pl
import pytest
from scipy.stats import binomtest

from evalnb._analysis.categories import by_category
from evalnb._analysis.compare import compare, compare_all
from evalnb._analysis.context import context_growth
from evalnb._analysis.cost import Price, Prices
from evalnb._analysis.flaky import epoch_variance
from evalnb._analysis.load import load
from evalnb._analysis.stats import (
    agresti_coull,
    clustered_wilson,
    detectable_difference,
    mcnemar_exact,
    newcombe_paired_diff,
    paired_rate_diff,
    sign_flip_test,
    wilson,
)
from evalnb._analysis.summary import summary
from evalnb._store import RunStore
from evalnb.records import (
    RunMeta,
)
from tests.factories import record, runs_of

FREE = Prices(models={"*": Price(free=True, source="test")})


# One run, three tasks, worked by hand:
#   t1 (cat a): checks 1+2 pass            -> score 3/3, passed; tools exit 0, 1
#   t2 (cat a): check 1 passes, 3 fails     -> score 1/4, failed; tools exit 0
#   t3 (cat b): check 1 passes but errored  -> score 1/1, counted as failed; no tools
THREE = [
    record(
        "t1",
        [(True, 1), (True, 2)],
        category="a",
        exits=(0, 1),
        turns=2,
        tokens=(100, 10),
        duration_ms=1000,
    ),
    record(
        "t2",
        [(True, 1), (False, 3)],
        category="a",
        exits=(0,),
        natural_stop=False,
        tokens=(200, 20),
        duration_ms=3000,
    ),
    record(
        "t3",
        [(True, 1)],
        category="b",
        turns=0,
        natural_stop=False,
        duration_ms=500,
        error="provider failed",
    ),
]


def test_a_tool_call_without_an_exit_code_is_neither_ok_nor_an_error():
    exits = (0, 1, None, None, 0)  # two calls whose source recorded no exit code
    row = summary(runs_of(("r", "m", [record("t", [(True, 1)], exits=exits)])), prices=FREE)
    row = row.row(0, named=True)
    known = [e for e in exits if e is not None]
    assert row["total_tool_calls"] == len(exits)
    assert row["tool_calls_unknown"] == exits.count(None)
    assert (row["tool_calls_ok"], row["tool_calls_error"]) == (
        known.count(0),
        sum(e != 0 for e in known),
    )
    assert row["tool_call_success_rate"] == pytest.approx(known.count(0) / len(known))
    unknown_only = record("t", [(True, 1)], exits=(None,))
    row = summary(runs_of(("r", "m", [unknown_only])), prices=FREE).row(0, named=True)
    assert (row["tool_calls_error"], row["tool_call_success_rate"]) == (0, None)


def test_summary_recomputes_every_spec_000_field_from_task_rows():
    row = summary(runs_of(("r", "m", THREE)), prices=FREE).row(0, named=True)
    assert row["total_tasks"] == 3
    assert row["total_passed"] == 1
    assert row["errored_tasks"] == 1
    assert row["pass_rate"] == pytest.approx(1 / 3)
    assert (row["total_score"], row["total_max_score"]) == (5.0, 8.0)
    assert row["overall_rate"] == pytest.approx(5 / 8)  # micro; the mean of task rates is 0.75
    assert (row["total_tool_calls"], row["tool_calls_ok"], row["tool_calls_error"]) == (3, 2, 1)
    assert row["tool_call_success_rate"] == pytest.approx(2 / 3)
    assert row["total_turns"] == 3
    assert row["avg_turns_per_task"] == pytest.approx(1.0)
    assert row["avg_tool_calls_per_task"] == pytest.approx(1.0)
    assert row["natural_stop_rate"] == pytest.approx(1 / 3)
    assert (row["total_input_tokens"], row["total_output_tokens"]) == (300, 30)
    assert row["total_duration_ms"] == 4500.0
    assert row["avg_duration_ms"] == pytest.approx(1500.0)
    assert row["cost_usd"] == 0.0


def test_summary_intervals_are_clustered_by_task():
    row = summary(runs_of(("r", "m", THREE)), prices=FREE).row(0, named=True)
    # One attempt per task: the pass rate's interval is the exact binomial one.
    exact = binomtest(1, 3).proportion_ci(method="exact")
    assert (row["pass_rate_lo"], row["pass_rate_hi"]) == pytest.approx(exact)
    # Tool calls: t1 has 1 of 2 ok, t2 1 of 1, t3 none: clusters (1, 2) and (1, 1).
    assert (row["tool_call_success_rate_lo"], row["tool_call_success_rate_hi"]) == pytest.approx(
        clustered_wilson([1, 1, 0], [2, 1, 0], counts=True)
    )
    assert (row["overall_rate_lo"], row["overall_rate_hi"]) == pytest.approx(
        clustered_wilson([3, 1, 1], [3, 4, 1])
    )


def test_epochs_of_a_task_count_as_one_unit_in_every_interval():
    # 4 tasks x 5 epochs; each task passes all or none of its epochs: 10 of 20 attempts
    # but only 2 of 4 tasks' worth of evidence.
    recs = [
        record(f"t{i}", [(i < 2, 1)], epoch=e, exits=(0 if i < 2 else 1,))
        for i in range(4)
        for e in range(1, 6)
    ]
    row = summary(runs_of(("r", "m", recs)), prices=FREE).row(0, named=True)
    assert (row["total_tasks"], row["distinct_tasks"], row["total_passed"]) == (20, 4, 10)
    # r = 0.5, V = 0.25 / 4: n_eff = 4 tasks, small-sample corrected to 3 with t(3).
    expected = pytest.approx(agresti_coull(1.5, 3, z=3.182446))
    assert (row["pass_rate_lo"], row["pass_rate_hi"]) == expected
    assert (row["overall_rate_lo"], row["overall_rate_hi"]) == expected
    assert (row["tool_call_success_rate_lo"], row["tool_call_success_rate_hi"]) == expected
    assert row["pass_rate_hi"] - row["pass_rate_lo"] > 2 * (wilson(10, 20)[1] - 0.5)


def test_the_overall_rate_interval_does_not_collapse_at_100_percent():
    recs = [record(f"t{i}", [(True, 1), (True, 2)], epoch=e) for i in range(5) for e in (1, 2)]
    row = summary(runs_of(("r", "m", recs)), prices=FREE).row(0, named=True)
    assert row["overall_rate"] == 1.0
    # Every task at the same rate: the effective sample size is the 5 tasks, small-sample
    # corrected to 4 with t(0.975, 4) = 2.776445 (two epochs: the variance is estimated).
    corrected = pytest.approx(agresti_coull(4, 4, z=2.776445)[0])
    assert row["overall_rate_lo"] == corrected and row["overall_rate_hi"] == 1
    assert row["pass_rate_lo"] == corrected


def test_nan_scores_count_as_unknown_not_as_nan():
    recs = [record("t1", [(True, 1)]), record("t2", [(True, 1)])]
    runs = runs_of(("r", "m", recs))
    runs.tasks = runs.tasks.with_columns(
        pl.when(pl.col("task_id") == "t2")
        .then(float("nan"))
        .otherwise(pl.col("max_score"))
        .alias("max_score")
    )
    row = summary(runs, prices=FREE).row(0, named=True)
    assert (row["total_score"], row["total_max_score"], row["overall_rate"]) == (1.0, 1.0, 1.0)
    assert row["total_passed"] == 2
    cats = by_category(runs).row(0, named=True)
    assert (cats["score"], cats["max_score"], cats["rate"]) == (1.0, 1.0, 1.0)


def test_summary_of_a_run_without_tasks_has_a_row_with_null_rates():
    runs = runs_of(("empty", "m", []), ("r", "m", THREE))
    row = summary(runs, prices=FREE).filter(pl.col("run_id") == "empty").row(0, named=True)
    assert (row["total_tasks"], row["total_passed"], row["total_tool_calls"]) == (0, 0, 0)
    for rate in ("pass_rate", "overall_rate", "tool_call_success_rate", "avg_turns_per_task"):
        assert row[rate] is None
    assert row["pass_rate_lo"] is None and row["overall_rate_lo"] is None


def test_summary_of_a_run_without_tool_calls_has_a_null_success_rate():
    runs = runs_of(("r", "m", [record("t", [(True, 1)])]))
    row = summary(runs, prices=FREE).row(0, named=True)
    assert row["total_tool_calls"] == 0
    assert row["tool_call_success_rate"] is None
    assert row["tool_call_success_rate_lo"] is None
    assert row["pass_rate"] == 1.0


def test_summary_cost_is_null_with_a_warning_for_an_unpriced_model():
    runs = runs_of(("r", "unpriced-model", THREE))
    with pytest.warns(UserWarning, match="unpriced-model"):
        row = summary(runs, prices=Prices(models={})).row(0, named=True)
    assert row["cost_usd"] is None


def test_summary_cost_sums_task_costs():
    prices = Prices(
        models={"m": Price(input=1, output=10, cached_input=0, as_of="2026-02", source="t")}
    )
    # 300 input * $1/M + 30 output * $10/M.
    row = summary(runs_of(("r", "m", THREE)), prices=prices).row(0, named=True)
    assert row["cost_usd"] == pytest.approx((300 + 300) / 1e6)


def test_summary_rows_are_per_run_and_keep_run_identity_first():
    runs = runs_of(("r1", "m1", THREE), ("r2", "m2", THREE[:1]))
    out = summary(runs, prices=FREE).sort("run_id")
    assert out.columns[:10] == [
        "run_id",
        "model",
        "model_family",
        "provider",
        "source",
        "simulated",
        "guidance",
        "started_at",
        "status",
        "missing_tasks",
    ]
    assert out.get_column("total_tasks").to_list() == [3, 1]
    assert out.get_column("overall_rate").to_list() == pytest.approx([5 / 8, 1.0])


def test_summary_rows_follow_the_runs_table():
    names = [f"r{i:02}" for i in range(40, 0, -1)]  # not in sorted order
    runs = runs_of(*((name, "m", THREE[: 1 + i % 3]) for i, name in enumerate(names)))
    for _ in range(5):
        assert summary(runs, prices=FREE).get_column("run_id").to_list() == names


def test_by_category_sums_scores_and_counts_errored_tasks_as_failed():
    out = by_category(runs_of(("r", "m", THREE)))
    a, b = out.rows(named=True)
    assert (a["category"], a["tasks"], a["passed"], a["score"], a["max_score"]) == (
        "a",
        2,
        1,
        4.0,
        7.0,
    )
    assert a["rate"] == pytest.approx(4 / 7)
    assert a["pass_rate"] == 0.5
    exact = binomtest(1, 2).proportion_ci(method="exact")  # one attempt per task
    assert (a["pass_rate_lo"], a["pass_rate_hi"]) == pytest.approx(exact)
    assert (b["category"], b["tasks"], b["passed"], b["rate"], b["pass_rate"]) == (
        "b",
        1,
        0,
        1.0,
        0.0,
    )


def test_epoch_variance_reports_pass_share_and_sample_std_of_rates():
    # rates 1, 0.5, 1: mean 5/6; squared deviations 1/36 + 1/9 + 1/36 = 1/6; / (3-1) -> 1/12.
    recs = [
        record("t", [(True, 1), (True, 1)], epoch=1),
        record("t", [(True, 1), (False, 1)], epoch=2),
        record("t", [(True, 1), (True, 1)], epoch=3),
        record("u", [(True, 1)], epoch=1),
    ]
    t, u = epoch_variance(runs_of(("r", "m", recs))).rows(named=True)
    assert (t["epochs"], t["passed"]) == (3, 2)
    assert t["pass_share"] == pytest.approx(2 / 3)
    assert t["rate_mean"] == pytest.approx(5 / 6)
    assert t["rate_std"] == pytest.approx(math.sqrt(1 / 12))
    assert (u["epochs"], u["rate_std"]) == (1, None)


def test_context_growth_per_task_follows_spec_003():
    recs = [
        record("grow", [(True, 1)], call_inputs=(100, 150, 220)),  # (220-100)/2 = 60
        record("one", [(True, 1)], call_inputs=(500,)),  # a single call grows 0
        record("shrink", [(True, 1)], call_inputs=(300, 200)),  # -100: may be negative
        record("blind", [(True, 1)], call_inputs=(None, None)),  # no per-call tokens
        record("none", [(True, 1)]),  # no LLM call records at all
    ]
    out = context_growth(runs_of(("r", "m", recs)))
    rows = {r["task_id"]: r for r in out.rows(named=True)}
    assert (rows["grow"]["calls"], rows["grow"]["base_context"]) == (3, 100)
    assert rows["grow"]["context_growth_avg"] == 60.0
    assert rows["grow"]["final_cumulative_input"] == 470
    assert (rows["one"]["context_growth_avg"], rows["one"]["final_cumulative_input"]) == (0.0, 500)
    assert rows["shrink"]["context_growth_avg"] == -100.0
    for key in ("blind", "none"):
        assert rows[key]["has_call_tokens"] is False
        assert rows[key]["base_context"] is None
        assert rows[key]["context_growth_avg"] is None
        assert rows[key]["final_cumulative_input"] is None
    assert (rows["blind"]["calls"], rows["none"]["calls"]) == (2, 0)
    assert rows["grow"]["has_call_tokens"] is True


def test_null_token_counts_follow_spec_003s_formulas_issue_25_item_5():
    """An unknown count makes a figure unknown when spec 003's formula needs it: call 1's
    for base_context, calls 1 and N for the growth (the sum of consecutive differences
    telescopes, so the calls between cancel out), every call for the running total."""
    recs = [
        record("first_unknown", [(True, 1)], call_inputs=(None, 1200, 1500)),
        record("middle_unknown", [(True, 1)], call_inputs=(1000, None, 1600)),
        record("last_unknown", [(True, 1)], call_inputs=(1000, 1300, None)),
        record("one_unknown", [(True, 1)], call_inputs=(None,)),
    ]
    rows = {r["task_id"]: r for r in context_growth(runs_of(("r", "m", recs))).rows(named=True)}
    figures = ["base_context", "context_growth_avg", "final_cumulative_input"]
    assert [rows["first_unknown"][f] for f in figures] == [None, None, None]
    assert [rows["middle_unknown"][f] for f in figures] == [1000, 300.0, None]
    assert [rows["last_unknown"][f] for f in figures] == [1000, None, None]
    assert [rows["one_unknown"][f] for f in figures] == [None, None, None]
    assert rows["middle_unknown"]["has_call_tokens"] is True
    assert rows["first_unknown"]["has_call_tokens"] is False


def test_context_growth_per_run_and_model_aggregates_tasks_with_tokens():
    runs = runs_of(
        ("r1", "m", [record("a", [(True, 1)], call_inputs=(100, 150, 220))]),
        (
            "r2",
            "m",
            [
                record("a", [(True, 1)], call_inputs=(300, 200)),
                record("b", [(True, 1)], call_inputs=(None,)),
            ],
        ),
    )
    per_run = {r["run_id"]: r for r in context_growth(runs, by="run").rows(named=True)}
    assert per_run["r2"]["tasks"] == 2
    assert per_run["r2"]["share_with_call_tokens"] == 0.5
    assert per_run["r2"]["context_growth_avg_mean"] == -100.0
    (model,) = context_growth(runs, by="model").rows(named=True)
    assert model["tasks"] == 3
    assert model["share_with_call_tokens"] == pytest.approx(2 / 3)
    assert model["context_growth_avg_mean"] == pytest.approx((60 - 100) / 2)
    assert model["base_context_median"] == pytest.approx((100 + 300) / 2)
    assert model["calls_mean"] == pytest.approx((3 + 2 + 1) / 3)
    with pytest.raises(ValueError, match="by must be"):
        context_growth(runs, by="category")  # type: ignore[arg-type]


def pass_fail_run(run_id: str, model: str, outcomes: list[bool], **kw) -> tuple:
    recs = [record(f"t{i}", [(ok, 1), (True, 1)], **kw) for i, ok in enumerate(outcomes)]
    return run_id, model, recs


def test_compare_pairs_shared_tasks_with_mcnemar_and_newcombe():
    runs = runs_of(
        pass_fail_run("x", "mx", [True, True, True, False, True, True]),
        pass_fail_run("y", "my", [True, False, False, False, True]),  # no t5
    )
    c = compare(runs, "x", "y")
    assert (c.tasks, c.tasks_only_a, c.tasks_only_b) == (5, 1, 0)
    assert (c.a_higher, c.b_higher, c.tied) == (2, 0, 3)
    assert (c.pass_rate_a, c.pass_rate_b, c.diff) == pytest.approx((0.8, 0.4, 0.4))
    assert c.test == "exact McNemar" and c.p == mcnemar_exact(2, 0) == 0.5
    assert (c.diff_lo, c.diff_hi) == newcombe_paired_diff(2, 2, 0, 1)
    # Weighted: x scores 2, 2, 2, 1, 2 of 2 and y 2, 1, 1, 1, 2.
    expected = paired_rate_diff([2, 2, 2, 1, 2], [2] * 5, [2, 1, 1, 1, 2], [2] * 5)
    assert (c.rate_diff, c.rate_diff_lo, c.rate_diff_hi) == pytest.approx(expected)
    assert (c.rate_a, c.rate_b) == pytest.approx((0.9, 0.7))
    assert c.rate_p == sign_flip_test([0, 0.5, 0.5, 0, 0]) == 0.5
    assert c.per_task.get_column("outcome").to_list() == [
        "tied",
        "a_higher",
        "a_higher",
        "tied",
        "tied",
    ]
    assert "not shared: 1 tasks only in A, 0 only in B" in str(c)


def test_compare_with_epochs_uses_per_task_shares_and_the_sign_flip_test():
    x = [record(f"t{i}", [(e <= 2, 1)], epoch=e) for i in range(4) for e in (1, 2, 3)]
    y = [record(f"t{i}", [(e <= i % 2, 1)], epoch=e) for i in range(4) for e in (1, 2, 3)]
    c = compare(runs_of(("x", "mx", x), ("y", "my", y)), "x", "y")
    # x passes 2 of 3 epochs of every task; y passes 0, 1, 0, 1: shares differ by
    # 2/3, 1/3, 2/3, 1/3, all in A's favour: 2 of 16 sign patterns as extreme.
    assert (c.tasks, c.attempts_a, c.attempts_b) == (4, 12, 12)
    assert c.test == "exact sign-flip" and c.p == pytest.approx(2 / 16)
    assert c.diff == pytest.approx(8 / 12 - 2 / 12)
    expected = paired_rate_diff([2] * 4, [3] * 4, [0, 1, 0, 1], [3] * 4, counts=True)
    assert (c.diff_lo, c.diff_hi) == pytest.approx(expected[1:])
    assert (c.a_higher, c.b_higher, c.tied) == (4, 0, 0)


def test_compare_weighted_rate_is_the_reports_overall_rate():
    x = [record(f"t{i}", [(True, 1), (i % 2 == 0, 3)], epoch=e) for i in range(5) for e in (1, 2)]
    y = [record(f"t{i}", [(i < 2, 1), (True, 3)], epoch=e) for i in range(5) for e in (1, 2)]
    runs = runs_of(("x", "mx", x), ("y", "my", y))
    rates = dict(summary(runs, prices=FREE).select("run_id", "overall_rate").iter_rows())
    c = compare(runs, "x", "y")
    assert (c.rate_a, c.rate_b) == pytest.approx((rates["x"], rates["y"]))


def test_compare_leaves_errored_attempts_out_and_counts_them():
    x = pass_fail_run("x", "mx", [True, True, True])
    y = (
        "y",
        "my",
        [
            record("t0", [(True, 1)]),
            record("t1", [(True, 1)], error="timeout"),
            record("t2", [(False, 1)]),
        ],
    )
    runs = runs_of(x, y)
    c = compare(runs, "x", "y")
    assert (c.tasks, c.tasks_errored, c.errored_a, c.errored_b) == (2, 1, 0, 1)
    assert (c.a_higher, c.b_higher) == (1, 0)
    assert "errored attempts left out: 0 in A, 1 in B (1 tasks with none left)" in str(c)
    counted = compare(runs, "x", "y", include_errored=True)
    assert (counted.tasks, counted.a_higher, counted.errored_b) == (3, 2, 0)


def test_compare_leaves_a_task_with_an_unknown_score_out_of_the_weighted_test():
    # Issue 25 item 6: a NaN-score task counted as a score of 0 in the sign-flip test
    # while the weighted rates left it out.
    x = pass_fail_run("x", "mx", [True, True, True, True])
    y = pass_fail_run("y", "my", [True, False, False, True])
    runs = runs_of(x, y)
    runs.tasks = runs.tasks.with_columns(
        pl.when((pl.col("run_id") == "x") & (pl.col("task_id") == "t0"))
        .then(float("nan"))
        .otherwise(pl.col("score"))
        .alias("score")
    )
    c = compare(runs, "x", "y")
    assert c.tasks == 4 and c.tasks_unscored == 1
    # x scores -, 2, 2, 2 of 2 and y 2, 1, 1, 2: t0 is in neither rate nor the test
    assert (c.rate_a, c.rate_b) == pytest.approx((6 / 6, 6 / 8))
    assert c.rate_p == sign_flip_test([0.5, 0.5, 0.0]) == 0.5
    assert "1 tasks without a known score on a side" in str(c)


def test_a_comparison_on_few_tasks_says_what_it_could_detect():
    few = runs_of(
        pass_fail_run("x", "mx", [True] * 8 + [False] * 4),
        pass_fail_run("y", "my", [True] * 4 + [False] * 8),
    )
    c = compare(few, "x", "y")
    assert c.tasks == 12 and c.detectable == detectable_difference(12, 0.5)
    sentence = (
        f"With 12 shared tasks only pass-rate differences of +{c.detectable * 100:.1f} pp or "
        "more are detectable at 80% power (exact McNemar test at α = 0.05, around the pooled "
        "pass rate 50.0%"
    )
    assert sentence in str(c) and sentence in c._repr_markdown_()
    many = runs_of(pass_fail_run("x", "mx", [True] * 25), pass_fail_run("y", "my", [True] * 25))
    c = compare(many, "x", "y")
    assert c.detectable is None and "detectable" not in str(c)


def test_compare_refuses_a_run_compared_with_itself():
    runs = runs_of(pass_fail_run("x", "mx", [True, False]))
    with pytest.raises(ValueError, match="itself"):
        compare(runs, "x", "mx")


def test_compare_names_runs_by_unique_model_and_lists_candidates_otherwise():
    runs = runs_of(
        pass_fail_run("x1", "dup", [True]),
        pass_fail_run("x2", "dup", [False]),
        pass_fail_run("y", "solo", [True]),
    )
    assert compare(runs, "solo", "x1").a == "y"
    with pytest.raises(ValueError, match=r"'dup' matches 2 runs.*x1 \(dup\), x2 \(dup\)"):
        compare(runs, "dup", "y")
    with pytest.raises(ValueError, match=r"no run 'nope'.*x1 \(dup\)"):
        compare(runs, "nope", "y")


def test_compare_without_shared_tasks_is_an_error():
    runs = runs_of(pass_fail_run("x", "mx", [True]), ("y", "my", [record("other", [(True, 1)])]))
    with pytest.raises(ValueError, match="share no"):
        compare(runs, "x", "y")


def test_comparison_renders_as_frame_text_and_markdown():
    runs = runs_of(
        pass_fail_run("x", "mx", [True, True, False]),
        pass_fail_run("y", "my", [True, False, False]),
    )
    c = compare(runs, "x", "y")
    frame = c.as_frame()
    assert frame.height == 1 and "per_task" not in frame.columns
    assert frame.select("tasks", "a_higher", "b_higher").row(0) == (3, 1, 0)
    text = str(c)
    assert "mx (x) vs B = my (y): 3 shared tasks" in text and "exact McNemar p = 1" in text
    md = c._repr_markdown_()
    assert "| pass rate | 66.7% | 33.3% | +33.3 pp |" in md


def test_compare_all_pairs_every_run_and_adds_holm_adjusted_p_values():
    runs = runs_of(
        pass_fail_run("x", "mx", [True] * 8),
        pass_fail_run("y", "my", [False] * 8),
        pass_fail_run("z", "mz", [True] * 4 + [False] * 4),
        ("w", "mw", [record("elsewhere", [(True, 1)])]),  # shares no task: not paired
    )
    out = compare_all(runs)
    assert out.select("a", "b").unique(maintain_order=True).rows() == [
        ("x", "y"),
        ("x", "z"),
        ("y", "z"),
    ]
    assert out.height == 6
    x_y = out.filter((pl.col("b") == "y") & (pl.col("metric") == "pass rate")).row(0, named=True)
    assert x_y["p"] == mcnemar_exact(8, 0)
    # Holm: the smallest of six p-values is multiplied by 6.
    assert x_y["p_holm"] == pytest.approx(min(1.0, 6 * out.get_column("p").min()))
    assert (out.get_column("p_holm") >= out.get_column("p")).all()


def test_compare_all_reads_the_tasks_columns_it_needs_once_and_agrees_with_compare(tmp_path):
    for run_id, model, recs in (
        pass_fail_run("x", "mx", [True, True, False, True, True]),
        pass_fail_run("y", "my", [True, False, False, False, True]),
        pass_fail_run("z", "mz", [False, True, True, True, False]),
    ):
        RunStore.write_records(tmp_path, RunMeta(run_id=run_id, provider="t", model=model), recs)
    runs = load(*sorted(tmp_path.iterdir()))  # lazy: each table a parquet scan
    out = compare_all(runs)
    # the tasks table was scanned for its few columns, never loaded whole
    assert "tasks" not in repr(runs).split("tables loaded:")[1]
    assert out.height == 6
    for row in out.iter_rows(named=True):
        c = compare(runs, row["a"], row["b"])
        if row["metric"] == "pass rate":
            assert (row["value_a"], row["value_b"], row["p"]) == (c.pass_rate_a, c.pass_rate_b, c.p)
        else:
            assert (row["value_a"], row["value_b"], row["p"]) == (c.rate_a, c.rate_b, c.rate_p)
        assert row["tasks"] == c.tasks == 5


@pytest.fixture
def fixture_runs(bashkit_eval_files):
    return load(*bashkit_eval_files)


def test_real_runs_match_the_published_per_task_figures(fixture_runs):
    out = summary(fixture_runs).sort("model")
    assert out.get_column("model").to_list() == ["claude-haiku-4-5", "claude-opus-4-6", "gpt-5.2"]
    assert out.get_column("overall_rate").round(3).to_list() == [0.915, 0.868, 0.868]
    assert out.get_column("tool_call_success_rate").round(3).to_list() == [0.802, 0.752, 0.571]
    assert out.get_column("total_passed").to_list() == [19, 17, 19]
    assert out.get_column("total_tasks").to_list() == [25, 25, 25]
    assert out.get_column("cost_usd").null_count() == 0


def test_real_figures_come_from_task_rows_not_the_files_summary(bashkit_eval_files, tmp_path):
    for path in bashkit_eval_files:
        doc = json.loads(path.read_text())
        doc["summary"] = {k: 0 for k, v in doc["summary"].items() if isinstance(v, int | float)} | {
            "by_category": {}
        }
        (tmp_path / path.name).write_text(json.dumps(doc))
    tampered = summary(load(str(tmp_path / "*.json"))).sort("model")
    original = summary(load(*bashkit_eval_files)).sort("model")
    assert tampered.drop("started_at").equals(original.drop("started_at"))
    assert tampered.get_column("total_passed").to_list() == [19, 17, 19]
