"""Spec 000 healthy profile, friction signals and cross-model diagnostics on hand-built runs.

Every expected figure is worked out by hand from the runs built in the test.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence

import polars as pl
import pytest
from pydantic import ValidationError

from evalnb._analysis.diagnostics import (
    DIAGNOSES,
    common_errors,
    diagnose,
    failing_commands,
    friction,
    normalise_error,
)
from evalnb._analysis.runs import Runs
from evalnb._analysis.thresholds import DiagnosisThresholds, Thresholds
from evalnb.records import (
    AgentTrace,
    ScoreResult,
    Task,
    TaskRecord,
    TaskScore,
    ToolCallResult,
)
from tests.factories import run_of


def attempt(
    task_id: str,
    passed: bool,
    calls: Sequence[tuple[str, int, str]] = (),
    *,
    category: str = "cat",
    epoch: int = 1,
    turns: int = 2,
    tokens: int = 100,
    natural_stop: bool = True,
) -> TaskRecord:
    """One task attempt with one check (passed or not) and ``(commands, exit, stderr)`` calls."""
    return TaskRecord(
        task=Task(id=task_id, category=category, prompt="p"),
        epoch=epoch,
        trace=AgentTrace(
            tool_calls=[
                ToolCallResult(commands=c, exit_code=code, stderr=err, call_index=i)
                for i, (c, code, err) in enumerate(calls)
            ],
            turns=turns,
            natural_stop=natural_stop,
            total_input_tokens=tokens,
        ),
        score=TaskScore(
            task_id=task_id,
            results=[ScoreResult(check="stdout_contains:ok", passed=passed)],
            score=1.0 if passed else 0.0,
            max_score=1.0,
        ),
    )


def run(run_id: str, model: str, records: list[TaskRecord], started: str = "2026-02-07") -> Runs:
    return run_of(records, run_id, model, started_at=started)


OK = ("ls", 0, "")


# --- friction ---------------------------------------------------------------------------


def good_run() -> Runs:
    # 4 passing tasks, 1 successful call each, 2 turns, natural stop, 100 tokens each
    return run("good", "good", [attempt(f"t{i}", True, [OK]) for i in range(4)])


def bad_run() -> Runs:
    fail = ("cat /nope", 1, "cat: /nope: io error: file not found")
    records = [
        attempt("t1", True, [OK], category="a", turns=8, tokens=1000),
        attempt("t2", False, [fail, fail], category="a", turns=8, tokens=1000, natural_stop=False),
        attempt("t3", False, [fail], category="b", turns=8, tokens=1000, natural_stop=False),
        attempt("t4", False, [OK], category="b", turns=8, tokens=1000, natural_stop=False),
    ]
    return run("bad", "bad", records)


def signals(frame: pl.DataFrame, run_id: str) -> dict[str, dict]:
    return {r["signal"]: r for r in frame.filter(run_id=run_id).iter_rows(named=True)}


def test_a_healthy_run_meets_every_criterion_and_shows_no_friction():
    frame = friction(Runs.concat([good_run(), bad_run()]))
    good = signals(frame, "good")
    assert len(good) == 10
    assert not any(r["flagged"] for r in good.values())
    assert all(r["healthy"] for r in good.values())
    assert {r["kind"] for r in good.values()} == {"healthy", "friction"}


def test_a_struggling_run_fails_the_profile_and_raises_every_friction_signal():
    bad = signals(friction(Runs.concat([good_run(), bad_run()])), "bad")
    # overall 1/4; tool calls ok 2 of 5; turns 8 per task; categories a = 1/2, b = 0/2;
    # natural stop on 1 task of 4; tokens per task 1000 vs 100 -> median 550, pass rate 1/4
    expected = {
        "overall_rate": (0.25, 0.90),
        "tool_call_success": (0.4, 0.80),
        "avg_turns": (8.0, 5.0),
        "min_category_rate": (0.0, 0.70),
        "natural_stop": (0.25, 0.50),
        "low_tool_call_success": (0.4, 0.75),
        "weak_category": (0.0, 0.50),
        "many_turns": (8.0, 7.0),
        "high_tokens_low_pass": (1000.0, 550.0),
        "no_natural_stop": (0.75, 0.20),
    }
    assert bad.keys() == expected.keys()
    for name, (value, threshold) in expected.items():
        assert (bad[name]["value"], bad[name]["threshold"]) == pytest.approx((value, threshold))
    assert all(r["flagged"] for r in bad.values())
    assert not any(r["healthy"] for r in bad.values())
    assert bad["low_tool_call_success"]["message"] == (
        "tool call success rate 40.0% < 75.0%: Bashkit compatibility gaps"
    )
    assert "(b)" in bad["weak_category"]["message"]


def test_thresholds_are_overridable():
    bad = signals(friction(bad_run(), Thresholds(friction_avg_turns=9)), "bad")
    assert bad["many_turns"]["threshold"] == 9
    assert bad["many_turns"]["flagged"] is False


def test_a_criterion_at_its_threshold_is_not_met():
    # overall rate 1.0 is not > 1.0
    good = signals(friction(good_run(), Thresholds(overall_rate_min=1.0)), "good")
    assert good["overall_rate"]["flagged"] is True


def test_high_token_usage_needs_other_runs_to_compare_with():
    bad = signals(friction(bad_run()), "bad")
    # alone, the run is its own median: 1000 is not above 1000
    assert bad["high_tokens_low_pass"]["threshold"] == 1000
    assert bad["high_tokens_low_pass"]["flagged"] is False


def test_a_signal_without_data_is_neither_flagged_nor_healthy():
    no_calls = signals(friction(run("r", "m", [attempt("t", True)])), "r")
    assert no_calls["tool_call_success"]["value"] is None
    assert no_calls["tool_call_success"]["flagged"] is None
    assert no_calls["tool_call_success"]["healthy"] is None
    assert no_calls["tool_call_success"]["message"] == "tool call success rate unknown"


# --- diagnose -----------------------------------------------------------------------------


def cross_model_runs() -> Runs:
    awk1 = ("awk '{x' /data/f", 1, "awk: unexpected character: ; at line 3")
    awk2 = ("cat /data/f | awk '{y'", 1, "awk: unexpected character: ; at line 7\nhint: try again")
    m1 = [
        attempt("tool", False, [awk1]),
        attempt("allfail", False, [("grep /data/f", 2, "grep: missing pattern")]),
        attempt("capab", True, [OK]),
        attempt("reason", True, [OK], tokens=100),
        attempt("cost", True, [OK], tokens=100),
        attempt("same", True, [OK], tokens=100),
        attempt("solo", False, [("jq . f", 5, "jq: error")]),
        attempt("epochs", True, [OK], epoch=1),
        attempt("epochs", True, [OK], epoch=2),
        attempt("epochs", False, [OK], epoch=3),
        *(attempt("shown", True, [OK], epoch=e) for e in range(1, 5)),
    ]
    m2 = [
        attempt("tool", False, [awk2]),
        attempt("allfail", False, [("sed 's/' f", 1, "sed: unknown command")]),
        attempt("capab", False, [("tar -C /x", 2, "tar: invalid option -- 'C'")]),
        attempt("reason", True, [OK, OK, OK], tokens=100),
        attempt("cost", True, [OK, OK], tokens=250),
        attempt("same", True, [OK], tokens=200),
        attempt("epochs", True, [OK], epoch=1),
        attempt("epochs", False, [OK], epoch=2),
        *(attempt("shown", False, [OK], epoch=e) for e in range(1, 5)),
    ]
    # an older m1 run that passed "tool": only each model's latest run counts
    old = run("m1-old", "m1", [attempt("tool", True, [OK])], started="2026-01-01")
    return Runs.concat([old, run("m1-new", "m1", m1), run("m2-run", "m2", m2)])


def test_diagnose_classifies_each_cross_model_pattern():
    frame = diagnose(cross_model_runs())
    got = dict(frame.select("task_id", "diagnosis").iter_rows())
    assert got == {
        "allfail": "all models fail",
        "capab": "not enough attempts",
        "cost": "cost efficiency gap",
        "epochs": "not enough attempts",
        "reason": "reasoning efficiency gap",
        "same": "consistent",
        "shown": "model capability difference",
        "solo": "single model",
        "tool": "tool limitation",
    }
    assert set(got.values()) <= set(DIAGNOSES)


def test_diagnose_reads_its_cut_offs_from_diagnosis_thresholds():
    # "reason" takes 3 calls against 1 and "cost" 250 tokens against 100: gaps above 2x
    # but not above 3x; "shown" is 4/4 against 0/4 (p = 0.029), not at most 0.01
    strict = DiagnosisThresholds(gap_factor=3, capability_alpha=0.01)
    got = dict(
        diagnose(cross_model_runs(), thresholds=strict).select("task_id", "diagnosis").rows()
    )
    assert (got["reason"], got["cost"], got["shown"]) == (
        "consistent",
        "consistent",
        "not enough attempts",
    )
    with pytest.raises(ValidationError, match="gap_facter"):
        DiagnosisThresholds(gap_facter=3)


def test_tool_limitation_names_the_shared_stderr_and_the_failing_command():
    row = diagnose(cross_model_runs()).filter(task_id="tool").row(0, named=True)
    assert row["models"] == ["m1", "m2"]
    assert row["passed_by"] == []
    assert row["failed_by"] == ["m1", "m2"]
    # the stderr line is shared once numbers are taken out; `cat` is not blamed (stderr
    # names awk)
    assert row["evidence"] == [
        "stderr: awk: unexpected character: ; at line <n>",
        "failing command: awk (m1, m2)",
        "failed check: stdout_contains:ok (m1, m2)",
    ]


def test_a_model_passes_a_task_on_a_strict_majority_of_epochs():
    row = diagnose(cross_model_runs()).filter(task_id="epochs").row(0, named=True)
    # m1 passed 2 of 3 epochs; m2 1 of 2 (a tie is a fail)
    assert (row["passed_by"], row["failed_by"]) == (["m1"], ["m2"])


def test_one_attempt_each_is_never_a_capability_difference():
    # issue 25: m1 passed its one attempt, m2 failed its one: Fisher's exact p is 1
    row = diagnose(cross_model_runs()).filter(task_id="capab").row(0, named=True)
    assert row["diagnosis"] == "not enough attempts"
    assert row["evidence"] == [
        "passed attempts: m1 1/1, m2 0/1; Fisher exact p = 1 across 2 models",
        "failing command: tar (m2)",
        "failed check: stdout_contains:ok (m2)",
    ]


def test_a_capability_difference_needs_attempts_that_show_it():
    frame = diagnose(cross_model_runs())
    shown = frame.filter(task_id="shown").row(0, named=True)
    # 4/4 against 0/4: p = 2 / C(8, 4) = 0.0286, recounted from the hypergeometric law
    assert shown["evidence"][0] == (
        f"passed attempts: m1 4/4, m2 0/4; Fisher exact p = {2 / math.comb(8, 4):.3g} "
        "across 2 models"
    )
    # 2/3 against 1/2 epochs: a majority each way, but nothing shown
    assert frame.filter(task_id="epochs").get_column("diagnosis").item() == "not enough attempts"


def exact_fisher(table: list[tuple[int, int]]) -> float:
    """Fisher-Freeman-Halton p by enumerating every table with the same margins (plain)."""
    sizes = [a + b for a, b in table]
    passes = sum(a for a, _ in table)

    def prob(xs: tuple[int, ...]) -> float:
        ways = math.prod(math.comb(n, x) for n, x in zip(sizes, xs, strict=True))
        return ways / math.comb(sum(sizes), passes)

    tables = [xs for xs in itertools.product(*(range(n + 1) for n in sizes)) if sum(xs) == passes]
    seen = prob(tuple(a for a, _ in table))
    return sum(prob(xs) for xs in tables if prob(xs) <= seen * (1 + 1e-9))


def test_with_more_models_the_test_is_across_all_of_them():
    four = [("m1", 3), ("m2", 3), ("m3", 1), ("m4", 0)]
    runs = Runs.concat(
        [
            run(f"{m}-run", m, [attempt("t", e <= passed, [OK], epoch=e) for e in (1, 2, 3)])
            for m, passed in four
        ]
    )
    row = diagnose(runs).row(0, named=True)
    exact = exact_fisher([(passed, 3 - passed) for _, passed in four])
    p = float(row["evidence"][0].split("Fisher exact p = ")[1].split()[0])
    assert abs(p - exact) < 0.005  # 20,000 seeded Monte Carlo tables
    assert row["diagnosis"] == (
        "model capability difference" if p <= 0.05 else "not enough attempts"
    )
    assert row["evidence"][0].startswith("passed attempts: m1 3/3, m2 3/3, m3 1/3, m4 0/3;")


def test_diagnose_flags_the_models_whose_attempts_at_a_task_disagree():
    flaky = dict(diagnose(cross_model_runs()).select("task_id", "flaky_for").iter_rows())
    assert flaky["epochs"] == ["m1", "m2"]
    assert {t for t, models in flaky.items() if models} == {"epochs"}


def test_efficiency_gaps_show_the_figures():
    frame = diagnose(cross_model_runs())
    assert frame.filter(task_id="reason").get_column("evidence").to_list() == [
        ["tool calls per attempt: m1 1, m2 3"]
    ]
    assert frame.filter(task_id="cost").get_column("evidence").to_list() == [
        ["tokens per attempt: m1 100, m2 250"]
    ]


def test_categories_fail_for_all_models_or_differ_only_where_the_attempts_show_it():
    def rec(task_id: str, category: str, passed: bool) -> TaskRecord:
        return attempt(task_id, passed, category=category)

    m1 = [rec("a1", "archive", False), rec("a2", "archive", True), rec("a3", "archive", False)]
    m2 = [rec("a1", "archive", False), rec("a2", "archive", False), rec("a3", "archive", True)]
    m1 += [rec("j1", "json", True), rec("f1", "files", True)]
    m2 += [rec("j1", "json", False), rec("f1", "files", True)]
    # sed: m1 passes all 5 attempts, m2 none: Fisher's p = 2 / C(10, 5) shows the split
    m1 += [rec(f"s{i}", "sed", True) for i in range(5)]
    m2 += [rec(f"s{i}", "sed", False) for i in range(5)]
    frame = diagnose(Runs.concat([run("r1", "m1", m1), run("r2", "m2", m2)]), by="category")
    assert dict(frame.select("category", "diagnosis").iter_rows()) == {
        "archive": "tool missing builtins for domain",  # 1/3 and 1/3, both below 0.5
        "files": "consistent",
        "json": "not enough attempts",  # 1/1 against 0/1: Fisher's p is 1
        "sed": "model capability difference",
    }
    archive = frame.filter(category="archive").row(0, named=True)
    assert archive["evidence"] == ["m1: rate 33.3%", "m2: rate 33.3%"]
    evidence = dict(frame.select("category", "evidence").iter_rows())
    assert (
        evidence["json"][-1]
        == "passed attempts: m1 1/1, m2 0/1; Fisher exact p = 1 across 2 models"
    )
    assert evidence["sed"][-1] == (
        f"passed attempts: m1 5/5, m2 0/5; Fisher exact p = {2 / math.comb(10, 5):.3g} "
        "across 2 models"
    )


def test_diagnose_rejects_an_unknown_level():
    with pytest.raises(ValueError, match="by must be"):
        diagnose(Runs.empty(), by="model")  # type: ignore[arg-type]


# --- failing commands and common errors ---------------------------------------------------


def error_runs() -> Runs:
    m1 = [
        attempt(
            "t",
            False,
            [
                ("cat /data/f | awk '{x'", 1, "awk: syntax error"),
                ("echo start; false", 1, ""),
                ("cat /a/b", 1, "cat: /a/b: io error: file not found\n" * 2),
            ],
        )
    ]
    m2 = [
        attempt(
            "t",
            False,
            [
                ("python3 x.py", 127, "bash: python3: command not found"),
                ("cat /c", 1, "cat: /c: io error: file not found"),
                ("awk 'x' f", 2, "awk: bad program"),
                ("awk '1' f", 0, "awk: warning: Error: 3 files missing"),
            ],
        )
    ]
    return Runs.concat([run("r1", "m1", m1), run("r2", "m2", m2)])


def test_failing_commands_blames_the_command_the_stderr_names_or_else_the_last():
    frame = failing_commands(error_runs())
    # awk: m1 call 0 (cat not named) + m2 call 2; cat: m1 call 2 + m2 call 1;
    # false: m1 call 1 (no stderr, last command); python3: m2 call 0; the successful
    # awk call of m2 is no failure
    assert frame.rows() == [
        ("awk", 2, 1, 1),
        ("cat", 2, 1, 1),
        ("false", 1, 1, 0),
        ("python3", 1, 0, 1),
    ]
    assert frame.columns == ["command", "failures", "m1", "m2"]
    assert failing_commands(error_runs(), top=1).get_column("command").to_list() == ["awk"]


def test_common_errors_counts_calls_per_normalised_line():
    frame = common_errors(error_runs())
    rows = {r["error"]: r for r in frame.iter_rows(named=True)}
    cat = rows["cat: <path>: io error: file not found"]
    # m1 repeats the line twice in one call: counted once
    assert (cat["calls"], cat["m1"], cat["m2"]) == (2, 1, 1)
    assert cat["example"] == "cat: /a/b: io error: file not found"
    assert rows["awk: warning: error: <n> files missing"]["calls"] == 1
    assert frame.get_column("error").to_list()[0] == "cat: <path>: io error: file not found"


@pytest.mark.parametrize(
    ("line", "normalised"),
    [
        ("cat: /lib/utils.sh: io error: file not found", "cat: <path>: io error: file not found"),
        ("chmod: invalid mode: '+x'", "chmod: invalid mode: <q>"),
        ("Parse error at line 37,   column 10", "parse error at line <n>, column <n>"),
        ("bash: python3: command not found", "bash: python3: command not found"),
        ('jq: error (at ./in.json:3): "x"', "jq: error (at <path>:<n>): <q>"),
    ],
)
def test_normalise_error(line, normalised):
    assert normalise_error(line) == normalised


# --- real runs (../shared) ------------------------------------------------------------------


def test_real_runs(bashkit_eval_files):
    from evalnb._analysis.load import load

    runs = load(*bashkit_eval_files)
    assert isinstance(runs, Runs)
    frame = diagnose(runs)
    assert frame.height == 25
    assert frame.get_column("models").list.len().unique().to_list() == [3]
    for row in frame.filter(diagnosis="tool limitation").iter_rows(named=True):
        assert len(row["failed_by"]) == 3
        assert row["evidence"][0].startswith("stderr: ")
    gpt = friction(runs).filter(model="gpt-5.2", signal="low_tool_call_success").row(0, named=True)
    # the GPT-5.2 file: 84 tool calls, 48 with exit code 0
    assert gpt["value"] == pytest.approx(48 / 84)
    assert gpt["flagged"] is True
