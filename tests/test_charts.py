"""Charts: each renders to Vega-Lite, exports to PNG and SVG, and plots the metrics' figures."""

from __future__ import annotations

import subprocess
import sys

import altair as alt
import polars as pl
import pytest

from evalnb._analysis.categories import by_category
from evalnb._analysis.guidance import compare_guidance
from evalnb._analysis.interaction import interaction
from evalnb._analysis.pass_at_k import pass_at_k
from evalnb._analysis.runs import Runs
from evalnb._analysis.stats import clustered_wilson, wilson
from evalnb._analysis.summary import summary
from evalnb._present import charts, groups
from evalnb._present.charts.parts import OVERALL_LABEL, PASS_LABEL, SIMULATED_NOTE, run_color
from evalnb._present.charts.tools import ALL_CATEGORIES
from evalnb._store.tables import TABLES, TOOL_CALL_FIGURES, tables_from_records
from evalnb.records import (
    AgentTrace,
    ContentBlock,
    LLMCall,
    Message,
    RunMeta,
    ScoreResult,
    Task,
    TaskRecord,
    TaskScore,
    ToolCallResult,
)
from tests.factories import run_of
from tests.factories import runs_of as make_metric_runs
from tests.test_context_peaks import attempt
from tests.test_pass_at_k import attempts

pytestmark = pytest.mark.filterwarnings("ignore:no price for model")

CATEGORY = {"t1": "files", "t2": "files", "t3": "json", "t4": "json"}

# Per run, per task: (check verdicts, tool call exit codes, input tokens per LLM call,
# natural stop). One LLM call per tool call plus a final text-only call.
RUN_SPECS = {
    ("a1", "alpha", False, "v1", "2026-01-01T10:00:00Z"): {
        "t1": ([True, True], [0], [100, 150], True),
        "t2": ([True, False], [1, 0], [100, 160, 230], True),
        "t3": ([True], [0, 0], [100, 140, 200], True),
        "t4": ([False], [2, 2, 2], [100, 200, 300, 400], False),
    },
    ("b1", "beta", True, "v1", "2026-01-01T11:00:00Z"): {
        "t1": ([True, True], [0], [300, 330], True),
        "t2": ([True, True], [0], [300, 340], True),
        "t3": ([False], [1, 0], [300, 350, 420], True),
        "t4": ([False], [2], [300, 380], False),
    },
    ("a2", "alpha", False, "v2", "2026-01-02T10:00:00Z"): {
        "t1": ([True, True], [0], [100, 150], True),
        "t2": ([True, True], [0], [100, 150], True),
        "t3": ([True], [0], [100, 150], True),
        "t4": ([True], [2, 0], [100, 200, 290], True),
    },
}


def record(task_id: str, checks: list[bool], exits: list[int], tokens: list[int], stop: bool):
    """One task attempt with a full transcript, as the runner would record it."""
    calls = [
        ToolCallResult(
            commands=f"step{i} {task_id}",
            stdout=f"out {task_id} {i}",
            stderr="" if code == 0 else f"step{i}: failed with {code}",
            exit_code=code,
            call_index=i,
            call_number=i + 1,
            duration_ms=5.0,
        )
        for i, code in enumerate(exits)
    ]
    llm = [
        LLMCall(
            call_number=n + 1,
            input_tokens=tok,
            output_tokens=20,
            cumulative_input=sum(tokens[: n + 1]),
            latency_ms=100.0 * (n + 1),
            tool_calls_made=int(n < len(exits)),
            stop_reason="tool_use" if n < len(exits) else "end_turn",
        )
        for n, tok in enumerate(tokens)
    ]
    messages = [Message(role="user", content=[ContentBlock(type="text", text=f"do {task_id}")])]
    for i, call in enumerate(calls):
        messages.append(
            Message(
                role="assistant",
                content=[
                    ContentBlock(type="text", text=f"thinking about step {i}"),
                    ContentBlock(
                        type="tool_use", id=f"u{i}", name="bash", input={"commands": call.commands}
                    ),
                ],
            )
        )
        messages.append(
            Message(
                role="tool_result",
                content=[
                    ContentBlock(
                        type="tool_result",
                        tool_use_id=f"u{i}",
                        content=call.stdout,
                        is_error=call.exit_code != 0,
                    )
                ],
            )
        )
    messages.append(Message(role="assistant", content=[ContentBlock(type="text", text="done")]))
    results = [
        ScoreResult(
            check=f"stdout_contains:x{j}",
            passed=ok,
            detail=f"detail {task_id} {j}",
            kind="stdout_contains",
        )
        for j, ok in enumerate(checks)
    ]
    return TaskRecord(
        task=Task(id=task_id, category=CATEGORY[task_id], prompt=f"do {task_id}"),
        trace=AgentTrace(
            messages=messages,
            tool_calls=calls,
            llm_calls=llm,
            turns=len(tokens),
            natural_stop=stop,
            total_input_tokens=sum(tokens),
            total_output_tokens=20 * len(tokens),
            duration_ms=1000.0,
        ),
        score=TaskScore.from_results(task_id, results),
    )


def make_runs() -> Runs:
    """The three hand-built runs of RUN_SPECS (beta is simulated)."""
    parts = []
    for (run_id, model, simulated, guidance, started), spec in RUN_SPECS.items():
        meta = RunMeta(
            run_id=run_id,
            provider="sim" if simulated else "anthropic",
            model=model,
            simulated=simulated,
            guidance=guidance,
            started_at=started,
            status="complete",
        )
        recs = [record(task_id, *args) for task_id, args in spec.items()]
        parts.append(Runs(**tables_from_records(meta, recs)))
    return Runs.concat(parts)


@pytest.fixture(scope="module")
def runs() -> Runs:
    return make_runs()


def rows(chart: alt.TopLevelMixin) -> list[dict]:
    """Every data row embedded in a chart's Vega-Lite spec (all its datasets)."""
    spec = chart.to_dict()
    return [row for values in spec.get("datasets", {}).values() for row in values]


def by(rows_: list[dict], *keys: str) -> dict[tuple, dict]:
    """Index the rows that have every key by those keys' values."""
    return {tuple(r[k] for k in keys): r for r in rows_ if all(k in r for k in keys)}


def title_of(chart: alt.TopLevelMixin) -> dict:
    return chart.to_dict()["title"]


PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


@pytest.mark.parametrize("name", list(charts.CHARTS))
def test_every_chart_renders_to_vega_lite_and_exports_png_and_svg(runs, name, tmp_path):
    chart = charts.CHARTS[name](runs)
    spec = chart.to_dict()
    assert spec["$schema"].startswith("https://vega.github.io/schema/vega-lite/")
    assert spec["title"]["text"]
    png = charts.save(chart, tmp_path / "out" / f"{name}.png")
    svg = charts.save(chart, tmp_path / f"{name}.svg")
    assert png.read_bytes().startswith(PNG_SIGNATURE)
    assert "<svg" in svg.read_text()


def test_all_charts_gives_every_chart_by_name(runs):
    made = charts.all_charts(runs)
    assert list(made) == list(charts.CHARTS)
    assert all(isinstance(c, alt.TopLevelMixin) for c in made.values())


def test_importing_evalnb_leaves_the_altair_theme_alone():
    code = "import altair as alt, evalnb; evalnb.charts; print(alt.theme.active)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "default"


def test_the_evalnb_theme_is_opt_in_and_applied_once_enabled():
    assert "evalnb" in alt.theme.names()
    try:
        charts.enable_theme()
        spec = charts.rates_by_model(Runs.empty()).to_dict()
    finally:
        alt.theme.enable("default")
    assert spec["config"]["range"]["category"] == charts.theme()["config"]["range"]["category"]


def test_save_uses_the_evalnb_theme_without_enabling_it(runs, tmp_path):
    svg = charts.save(charts.natural_stop(runs), tmp_path / "a.svg").read_text()
    assert charts.theme()["config"]["font"].split(",")[0] in svg
    assert alt.theme.active == "default"


def test_save_picks_the_format_from_the_suffix(runs, tmp_path):
    chart = charts.natural_stop(runs)
    assert charts.save(chart, tmp_path / "a.pdf").read_bytes().startswith(b"%PDF")
    html = charts.save(chart, tmp_path / "deep" / "er" / "a.html").read_text()
    assert "<html" in html.lower() and "vega" in html.lower()
    assert "cdn.jsdelivr.net" not in html  # scripts inlined: the file works offline


def test_save_rejects_an_unknown_suffix(runs, tmp_path):
    with pytest.raises(ValueError, match=r"\.jpg"):
        charts.save(charts.natural_stop(runs), tmp_path / "a.jpg")
    assert not (tmp_path / "a.jpg").exists()


A1, A2 = "alpha · guidance v1", "alpha · guidance v2"
B1 = "beta (simulated) · guidance v1"
"""Charts draw one group per model and guidance version; the fixture's three runs are three."""


def group_of(runs: Runs) -> dict[str, str]:
    return dict(groups.group_labels(runs).select("run_id", "group").rows())


def group_summary(runs: Runs) -> pl.DataFrame:
    return summary(groups.pooled(runs)).with_columns(pl.col("run_id").alias("run_label"))


def test_labels_mark_simulated_runs_and_tell_apart_runs_of_one_model(runs):
    got = dict(charts.labels(runs).select("run_id", "run_label").iter_rows())
    assert got == {"a1": "alpha · a1", "a2": "alpha · a2", "b1": "beta (simulated)"}


def test_a_chart_of_simulated_runs_says_so_in_its_subtitle(runs):
    assert SIMULATED_NOTE in title_of(charts.rates_by_model(runs))["subtitle"]
    real = runs.filter(pl.col("run_id") == "a1")
    assert SIMULATED_NOTE not in title_of(charts.rates_by_model(real)).get("subtitle", [])


def test_rates_by_model_plots_the_summary_pass_and_overall_rates_with_intervals(runs):
    data = by(rows(charts.rates_by_model(runs)), "run_label", "measure")
    summary = group_summary(runs)
    for row in summary.iter_rows(named=True):
        passed = data[row["run_label"], PASS_LABEL]
        overall = data[row["run_label"], OVERALL_LABEL]
        assert (passed["value"], passed["lo"], passed["hi"]) == (
            row["pass_rate"],
            row["pass_rate_lo"],
            row["pass_rate_hi"],
        )
        assert (overall["value"], overall["lo"], overall["hi"]) == (
            row["overall_rate"],
            row["overall_rate_lo"],
            row["overall_rate_hi"],
        )
    # By hand, run a1: t1 and t3 pass of 4 tasks; checks 2 + 1 + 1 + 0 of 2 + 2 + 1 + 1.
    assert data[A1, PASS_LABEL]["value"] == 0.5
    assert data[A1, OVERALL_LABEL]["value"] == pytest.approx(4 / 6)
    assert data[A1, PASS_LABEL]["count"] == "2/4 tasks passed"


def test_category_heatmap_annotates_passed_over_total(runs):
    data = by(rows(charts.category_heatmap(runs)), "run_label", "category")
    assert data[A1, "files"]["cell"] == "1/2"  # t1 passed, t2 failed
    assert data[B1, "json"]["cell"] == "0/2"  # t3 and t4 failed
    assert data[A2, "json"]["pass_rate"] == 1.0
    expected = by_category(runs).filter(run_id="b1", category="files").row(0, named=True)
    got = data[B1, "files"]
    assert (got["pass_rate_lo"], got["pass_rate_hi"]) == (
        expected["pass_rate_lo"],
        expected["pass_rate_hi"],
    )


def test_tool_success_counts_exit_code_zero_per_category_and_overall(runs):
    data = by(rows(charts.tool_success(runs)), "run_label", "category")
    # Run a1: files t1 [0] + t2 [1, 0] -> 2 of 3 ok; json t3 [0, 0] + t4 [2, 2, 2] -> 2 of 5.
    assert (data[A1, "files"]["ok"], data[A1, "files"]["calls"]) == (2, 3)
    assert data[A1, "json"]["value"] == pytest.approx(2 / 5)
    summary = group_summary(runs)
    for row in summary.iter_rows(named=True):
        overall = data[row["run_label"], ALL_CATEGORIES]
        assert overall["value"] == pytest.approx(row["tool_call_success_rate"])
        assert overall["lo"] == pytest.approx(row["tool_call_success_rate_lo"])
        assert overall["hi"] == pytest.approx(row["tool_call_success_rate_hi"])


def test_tool_success_frames_the_cells_below_the_healthy_threshold(runs):
    frames = charts.tool_success(runs).to_dict()["layer"][1]
    assert frames["transform"] == [{"filter": "(datum.value < 0.8)"}]


def test_tool_success_stays_readable_at_thirty_runs_and_sixty_categories(runs):
    one = runs.filter(pl.col("run_id") == "a1")

    def renamed(table: pl.DataFrame, i: int) -> pl.DataFrame:
        changes = {"run_id": pl.lit(f"r{i:02}"), "model": pl.lit(f"model-{i % 15:02}")}
        changes["category"] = pl.col("category") + pl.lit(f"-{i}")
        return table.with_columns(
            **{col: expr for col, expr in changes.items() if col in table.columns}
        )

    many = Runs.concat(
        [Runs(**{name: renamed(getattr(one, name), i) for name in TABLES}) for i in range(30)]
    )
    spec = charts.tool_success(many).to_dict()
    data = rows(charts.tool_success(many))
    assert len({r["category"] for r in data}) == 61  # 60 categories + all
    # 30 runs of 15 models: one column per model, naming the two runs it pools.
    assert {r["run_label"] for r in data} == {
        f"model-{i:02} · guidance v1 · 2 runs" for i in range(15)
    }
    width = spec["width"]["step"] * 15
    height = spec["height"]["step"] * 61
    assert width <= 1400 and height <= 1400


def test_tool_success_aggregates_a_million_tool_calls_before_plotting(runs):
    n = 1_000_000
    keys = runs.tasks.select("run_id", "model", "task_id", "epoch")
    idx = pl.int_range(0, n, eager=True)
    big = (
        pl.DataFrame({"i": idx})
        .with_columns((pl.col("i") % keys.height).alias("k"))
        .join(keys.with_row_index("k").with_columns(pl.col("k").cast(pl.Int64)), on="k")
        .with_columns(
            pl.when(pl.col("i") % 7 == 0).then(1).otherwise(0).alias("exit_code"),
            pl.lit("echo hi").alias("commands"),
        )
        .drop("i", "k")
    )
    # the tasks' figures summed up from a million tool-call rows, as loading does
    tasks = runs.tasks.drop(TOOL_CALL_FIGURES)
    big_runs = Runs(runs.runs, tasks, runs.llm_calls, big, runs.checks, runs.messages)
    assert big_runs.tasks.get_column("tool_call_count").sum() == n
    chart = charts.tool_success(big_runs)
    data = rows(chart)
    bars = [r for r in data if "run_label" in r]
    assert len(bars) == 3 * 3  # 3 runs x (2 categories + all)
    assert sum(r["calls"] for r in bars if r["category"] == ALL_CATEGORIES) == n
    expected = dict(summary(big_runs).select("run_id", "tool_call_success_rate").rows())
    labels = {v: k for k, v in group_of(runs).items()}
    for r in bars:
        if r["category"] == ALL_CATEGORIES:
            assert r["value"] == pytest.approx(expected[labels[r["run_label"]]])


def test_turns_and_calls_summarises_per_task_distributions(runs):
    data = by(rows(charts.turns_and_calls(runs)), "run_label", "n", "min", "max")
    # Run a1 turns per task: 2, 3, 3, 4 -> median 3, mean 3.
    turns = data[A1, 4, 2, 4]
    assert (turns["median"], turns["mean"], turns["q1"], turns["q3"]) == (3, 3, 2.75, 3.25)
    # Run a1 tool calls per task: 1, 2, 2, 3.
    assert data[A1, 4, 1, 3]["median"] == 2


def test_natural_stop_share_matches_the_summary(runs):
    data = {r["run_label"]: r for r in rows(charts.natural_stop(runs))}
    assert (data[A1]["stops"], data[A1]["tasks"]) == (3, 4)
    summary = group_summary(runs)
    for label, rate in summary.select("run_label", "natural_stop_rate").iter_rows():
        assert data[label]["value"] == pytest.approx(rate)
        assert data[label]["lo"] <= rate <= data[label]["hi"]


def test_token_economics_shows_tokens_cost_and_tokens_per_passed_task(runs):
    data = rows(charts.token_economics(runs))
    tokens = {(r["run_label"], r["kind"]): r["n"] for r in data if "kind" in r}
    # Run a1 input tokens: (100+150) + (100+160+230) + (100+140+200) + (100+200+300+400).
    assert tokens[A1, "input"] == 2180
    assert tokens[A1, "output"] == 20 * 12
    per_pass = {r["run_label"]: r["per_pass"] for r in data if "per_pass" in r}
    assert per_pass[A1] == (2180 + 240) / 2
    costs = {r["run_label"]: r["cost_text"] for r in data if "cost_text" in r}
    assert costs[A1] == "unknown"  # no price for "alpha": never shown as $0


def test_context_growth_draws_median_and_middle_half_per_call_number(runs):
    data = rows(charts.context_growth(runs))
    curve = by([r for r in data if "call_number" in r], "run_label", "call_number")
    # Run a1, call 2 of its four tasks: 150, 160, 140, 200.
    assert curve[A1, 2]["median"] == 155
    assert (curve[A1, 2]["q1"], curve[A1, 2]["q3"]) == (147.5, 170)
    # Call 4 is reached only by t4.
    assert (curve[A1, 4]["median"], curve[A1, 4]["tasks"]) == (400, 1)
    boxes = [r for r in data if "mean" in r and r["run_label"] == B1]
    assert {"min": 300, "max": 300} in [{"min": b["min"], "max": b["max"]} for b in boxes]


def test_context_growth_says_when_no_call_has_token_counts(runs):
    blank = Runs.concat([runs])
    blank.llm_calls = runs.llm_calls.with_columns(pl.lit(None, pl.Int64).alias("input_tokens"))
    spec = charts.context_growth(blank).to_dict()
    assert spec["mark"]["type"] == "text"
    assert "No per-LLM-call token counts" in rows(charts.context_growth(blank))[0]["text"]


def test_task_matrix_puts_tasks_every_model_failed_first(runs):
    older = runs.filter(pl.col("run_id").is_in(["a1", "b1"]))
    chart = charts.task_matrix(older)
    order = chart.to_dict()["layer"][0]["encoding"]["y"]["sort"]
    # t4 fails for alpha (a1) and beta; t2 and t3 fail for one of them; t1 passes both.
    assert order == ["t4", "t2", "t3", "t1"]
    cells = by(rows(chart), "task_id", "model_label")
    assert cells["t4", "alpha"]["outcome"] == "fail"
    assert cells["t3", "alpha"]["outcome"] == "pass"
    # one attempt each: a split, but no evidence of a capability difference (issue 25)
    assert cells["t3", "beta (simulated)"]["diagnosis"] == "not enough attempts"


def test_interaction_by_guidance_plots_the_spec_002_run_metrics(runs):
    data = by(rows(charts.interaction_by_guidance(runs)), "run_label", "metric")
    per_run = interaction(runs, by="run")
    labels = group_of(runs)
    for row in per_run.iter_rows(named=True):
        label = labels[row["run_id"]]
        assert data[label, "error rate"]["value"] == pytest.approx(row["error_rate"])
        assert data[label, "first-try success rate"]["value"] == pytest.approx(
            row["first_try_success_rate"]
        )
        assert data[label, "completion rate"]["value"] == pytest.approx(row["completion_rate"])
    # Run a1 ran 8 commands and 4 failed (t2's first, t4's three).
    assert data[A1, "error rate"]["value"] == 0.5
    assert data[A1, "error rate"]["guidance"] == "v1"
    assert data[A2, "error rate"]["guidance"] == "v2"


def test_interaction_by_guidance_intervals_are_clustered_by_task(runs):
    data = by(rows(charts.interaction_by_guidance(runs)), "run_label", "metric")
    a1 = interaction(runs, by="task").filter(run_id="a1")
    # Each task's commands are one cluster: the scalar clustered Wilson over tasks.
    lo, hi = clustered_wilson(
        a1.get_column("error_count").to_list(),
        a1.get_column("total_commands").to_list(),
        counts=True,
    )
    got = data[A1, "error rate"]
    assert (got["lo"], got["hi"]) == pytest.approx((lo, hi))
    # Wider than Wilson over the 8 commands as if independent (4 failed, 3 in one task).
    assert got["hi"] - got["lo"] > wilson(4, 8)[1] - wilson(4, 8)[0]


def test_guidance_differences_plot_the_paired_comparison(runs):
    data = by(rows(charts.guidance_differences(runs)), "comparison", "metric")
    paired = compare_guidance(runs).paired
    alpha = paired.filter(model="alpha", metric="error_rate").row(0, named=True)
    got = data["alpha: v2 − v1", "error rate"]
    assert (got["diff"], got["diff_lo"], got["diff_hi"]) == (
        alpha["diff"],
        alpha["diff_lo"],
        alpha["diff_hi"],
    )
    # Per task error rates, a1 -> a2: t1 0 -> 0, t2 1/2 -> 0, t3 0 -> 0, t4 1 -> 1/2.
    assert got["diff"] == pytest.approx((0 - 0.5 + 0 - 0.5) / 4)
    assert {r["comparison"] for r in data.values()} == {"alpha: v2 − v1"}  # beta ran v1 only


def test_trend_follows_one_model_over_its_dated_runs_of_one_dataset(runs):
    again = runs.filter(pl.col("run_id") == "a2")
    again.runs = again.runs.with_columns(
        pl.lit("v1").alias("guidance"), pl.lit("2026-01-03T10:00:00Z").alias("started_at")
    )
    again = Runs(
        **{name: getattr(again, name).with_columns(pl.lit("a3").alias("run_id")) for name in TABLES}
    )
    data = rows(charts.trend(Runs.concat([runs, again])))
    alpha = sorted(
        (r["when"], r["point"], r["value"])
        for r in data
        if r["model_label"] == "alpha · guidance v1" and r["measure"] == PASS_LABEL
    )
    # a1 (v1, Jan 1) then a3 (v1, Jan 3); a2 ran guidance v2, so it is no point of the trend.
    assert [(point, v) for _, point, v in alpha] == [
        ("alpha · guidance v1 · 2026-01-01", 0.5),
        ("alpha · guidance v1 · 2026-01-03", 1.0),
    ]
    assert not [r for r in data if r["model_label"] == "beta (simulated)"]  # a single run


def seeds(runs: Runs, started: list[str]) -> Runs:
    """Copies of run a1 (model alpha, guidance v1), one per start time, as seeds."""
    a1 = runs.filter(pl.col("run_id") == "a1")
    copies = []
    for i, when in enumerate(started):
        copy = Runs(
            **{n: getattr(a1, n).with_columns(pl.lit(f"s{i}").alias("run_id")) for n in TABLES}
        )
        copy.runs = copy.runs.with_columns(pl.lit(when).alias("started_at"))
        copies.append(copy)
    return Runs.concat(copies)


def test_pooled_runs_count_the_attempts_of_every_run(runs):
    two = seeds(runs, ["2026-01-05T10:00:00Z", "2026-01-06T10:00:00Z"])
    pooled = summary(groups.pooled(two)).row(0, named=True)
    assert pooled["total_tasks"] == two.tasks.height == 8
    assert pooled["total_passed"] == summary(two).get_column("total_passed").sum()


def test_seeds_started_seconds_apart_are_no_trend(runs):
    same_day = seeds(runs, ["2026-01-05T10:00:00Z", "2026-01-05T10:00:03Z", "2026-01-05T10:00:09Z"])
    assert "several dates" in rows(charts.trend(same_day))[0]["text"]


def test_seeds_of_one_day_are_one_point_of_the_trend(runs):
    two_days = seeds(runs, ["2026-01-05T10:00:00Z", "2026-01-05T10:00:04Z", "2026-01-06T09:00:00Z"])
    data = [r for r in rows(charts.trend(two_days)) if r["measure"] == PASS_LABEL]
    assert sorted((r["point"], r["runs_pooled"], r["total_tasks"]) for r in data) == [
        ("alpha · guidance v1 · 2026-01-05", 2, 8),  # two seeds' attempts pooled
        ("alpha · guidance v1 · 2026-01-06", 1, 4),
    ]


def test_guidance_versions_of_one_model_on_the_same_days_are_two_lines(runs):
    v1 = seeds(runs, ["2026-01-05T10:00:00Z", "2026-01-06T10:00:00Z"])
    v2 = Runs(**{n: getattr(v1, n).with_columns(pl.col("run_id") + "-v2") for n in TABLES})
    v2.runs = v2.runs.with_columns(pl.lit("v2").alias("guidance"))
    data = [r for r in rows(charts.trend(Runs.concat([v1, v2]))) if r["measure"] == PASS_LABEL]
    assert sorted((r["point"], r["runs_pooled"]) for r in data) == [
        ("alpha · guidance v1 · 2026-01-05", 1),
        ("alpha · guidance v1 · 2026-01-06", 1),
        ("alpha · guidance v2 · 2026-01-05", 1),
        ("alpha · guidance v2 · 2026-01-06", 1),
    ]


def test_a_model_keeps_its_colour_in_the_trend(runs):
    b1 = runs.filter(pl.col("run_id") == "b1")
    aardvark = Runs(
        **{n: getattr(b1, n).with_columns(pl.lit("z1").alias("run_id")) for n in TABLES}
    )
    aardvark.runs = aardvark.runs.with_columns(pl.lit("aardvark").alias("model"))  # sorts first
    mixed = Runs.concat(
        [seeds(runs, ["2026-01-05T10:00:00Z", "2026-01-06T10:00:00Z"]), make_runs(), aardvark]
    )
    scale = run_color(groups.pooled(mixed)).to_dict()["scale"]  # every model chart's
    colour = dict(zip(scale["domain"], scale["range"], strict=True))
    trend = charts.trend(mixed).to_dict()["spec"]["layer"][0]["encoding"]["color"]["scale"]
    assert trend["domain"] == ["alpha · guidance v1"]
    # alpha's latest run in the trend is s1, of group "alpha · guidance v1 · 3 runs"
    assert trend["range"] == [colour["alpha · guidance v1 · 3 runs"]]


def test_trend_of_guidance_versions_is_no_trend(runs):
    assert "several dates" in rows(charts.trend(runs))[0]["text"]


def test_charts_of_no_runs_still_render(tmp_path):
    for name, chart in charts.all_charts(Runs.empty()).items():
        assert chart.to_dict()["title"], name


def test_save_all_draws_each_chart_once_as_the_same_svg_save_writes_and_a_png(runs, tmp_path):
    chart = charts.natural_stop(runs)
    [(name, svg_path)] = charts.save_all({"natural_stop": chart}, tmp_path / "all").items()
    alone = charts.save(chart, tmp_path / "alone.svg").read_text()
    assert name == "natural_stop"
    assert svg_path.read_text() == alone  # the evalnb theme, the same drawing
    png = (tmp_path / "all" / "natural_stop.png").read_bytes()
    assert png.startswith(PNG_SIGNATURE)
    width = int.from_bytes(png[16:20], "big")  # the IHDR width: drawn at 2x
    assert width == 2 * int(float(alone.split('width="', 1)[1].split('"', 1)[0]))


def test_the_vega_bundle_is_built_once_and_then_read_from_the_cache(tmp_path, monkeypatch):
    from evalnb._present import offline

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    offline._packed_bundle.cache_clear()
    try:
        offline.prepare_bundle()
        [cached] = (tmp_path / "evalnb").iterdir()
        built = cached.read_text()
        cached.write_text("from-the-cache")  # the next process reads the file, not vl-convert
        offline._packed_bundle.cache_clear()
        assert offline._packed_bundle() == "from-the-cache"
    finally:
        offline._packed_bundle.cache_clear()
    assert len(built) > 100_000


def test_pass_at_k_curves_draw_the_pooled_figures_over_k():
    tasks = {"a": [True, False, True], "b": [True, True, True], "c": [False, False, True]}
    runs = make_metric_runs(("r", "m", [x for t, oks in tasks.items() for x in attempts(t, oks)]))
    data = rows(charts.pass_at_k_curves(runs))
    expected = pass_at_k(groups.pooled(runs), k=[1, 2, 3])
    for row in expected.iter_rows(named=True):
        drawn = by(data, "measure", "k")
        assert drawn["pass@k (one of k passes)", row["k"]]["value"] == row["pass_at_k"]
        assert drawn["pass^k (all k pass)", row["k"]]["hi"] == row["pass_hat_k_hi"]


def test_context_peaks_chart_marks_the_drops():
    records = [attempt("t1", [100, 400, 150, 300], {3}), attempt("t2", [100, 200])]
    runs = run_of(records)
    data = rows(charts.context_peaks(runs))
    assert [(r["task_id"], r["call_number"]) for r in data if r["dropped"]] == [("t1", 3)]
    assert {r["task_id"] for r in data} == {"t1", "t2"}


def test_guidance_charts_are_drawn_only_of_runs_with_guidance(runs):
    unguided = Runs(**{n: getattr(runs, n) for n in TABLES})
    unguided.runs = unguided.runs.with_columns(pl.lit(None, pl.Utf8).alias("guidance"))
    assert not set(charts.GUIDANCE_CHARTS) & set(charts.all_charts(unguided))
    both = Runs.concat(
        [seeds(runs, ["2026-01-05T10:00:00Z"]), unguided.filter(pl.col("run_id") == "b1")]
    )
    both.runs = both.runs.with_columns(
        pl.when(pl.col("run_id") == "b1").then(None).otherwise(pl.col("guidance")).alias("guidance")
    )
    drawn = rows(charts.all_charts(both)["interaction_by_guidance"])
    assert {r["run_label"] for r in drawn} == {"alpha · guidance v1"}  # b1 ran no guidance
