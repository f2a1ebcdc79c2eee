"""Widgets: the task HTML shows the whole attempt; live widgets refresh; static fallbacks render."""

from __future__ import annotations

import altair as alt
import ipywidgets
import polars as pl
import pytest
from IPython.display import HTML

from evalnb._analysis.runs import Runs
from evalnb._present import charts, widgets
from evalnb.records import (
    AgentTrace,
    ScoreResult,
    Task,
    TaskRecord,
    TaskScore,
    ToolCallResult,
)
from tests.factories import record, run_of, runs_of
from tests.test_charts import make_runs

pytestmark = pytest.mark.filterwarnings("ignore:no price for model")


@pytest.fixture(scope="module")
def runs() -> Runs:
    return make_runs()


def test_task_html_shows_the_transcript_tool_calls_and_per_call_figures(runs):
    page = widgets.task_html(runs, "a1", "t2")
    assert "t2" in page and "FAILED" in page  # t2 of run a1 failed one of its two checks
    assert "do t2" in page  # the user prompt
    assert "thinking about step 0" in page and "done" in page  # assistant text
    assert "$ step0 t2" in page and "$ step1 t2" in page  # each tool call's commands
    assert "out t2 0" in page  # stdout
    assert "step0: failed with 1" in page  # stderr
    assert "exit code 1" in page and "exit code 0" in page
    # Per LLM call: input tokens 100, 160, 230 and latencies 100, 200, 300 ms.
    assert "LLM call 2: input 160 tokens · output 20 tokens · latency 200 ms" in page
    assert "LLM call 3: input 230 tokens" in page


def test_task_html_lists_every_check_with_its_verdict_and_detail(runs):
    page = widgets.task_html(runs, "a1", "t2")
    checks = page[page.index("<h4>Checks</h4>") :]
    assert checks.count("<tr>") == 3  # header + two checks
    assert '<span class="pass">pass</span>' in checks and "detail t2 0" in checks
    assert '<span class="fail">fail</span>' in checks and "detail t2 1" in checks
    assert "stdout_contains:x1" in checks


def one_task_run(stdout: str) -> Runs:
    rec = TaskRecord(
        task=Task(id="t", category="c", prompt="p"),
        trace=AgentTrace(tool_calls=[ToolCallResult(commands="cat big", stdout=stdout)]),
        score=TaskScore(task_id="t"),
    )
    return run_of([rec])


def test_long_tool_output_is_folded_and_short_output_is_not():
    long_text = "\n".join(f"line {i}" for i in range(50))
    folded = widgets.task_html(one_task_run(long_text), "r", "t")
    assert "<details><summary>50 lines" in folded and "line 49" in folded
    assert "<details>" not in widgets.task_html(one_task_run("short"), "r", "t")


def test_task_html_escapes_what_the_model_and_the_tools_wrote():
    page = widgets.task_html(one_task_run("<script>alert(1)</script>"), "r", "t")
    assert "<script>" not in page and "&lt;script&gt;" in page


def test_task_html_of_an_unknown_task_names_it(runs):
    with pytest.raises(ValueError, match="no task 'nope' in run 'a1'"):
        widgets.task_html(runs, "a1", "nope")


def test_outside_a_jupyter_kernel_there_is_no_widget_frontend(runs):
    assert widgets.widget_frontend() is False
    assert isinstance(widgets.task_browser(runs), HTML)  # static=None detects it


def test_static_task_browser_starts_at_the_first_failed_task(runs):
    page = widgets.task_browser(runs, static=True).data
    assert "FAILED" in page and "run a1" in page and ">t2 " in page  # a1's failures: t2, t4
    chosen = widgets.task_browser(runs, "b1", "t1", static=True).data
    assert "PASSED" in chosen and "run b1" in chosen


def test_live_task_browser_follows_the_dropdowns(runs):
    box = widgets.task_browser(runs, static=False)
    assert isinstance(box, ipywidgets.VBox)
    (run_dd, task_dd), view = box.children[0].children, box.children[-1]
    assert "$ step0 t2" in view.value
    task_dd.value = ("t4", 1)
    assert "$ step2 t4" in view.value
    run_dd.value = "b1"  # same task in another run
    assert "run b1" in view.value and task_dd.value == ("t4", 1)
    assert task_dd.options[0] == ("t1 (pass)", ("t1", 1))


def epochs_run() -> Runs:
    """One task run three times: epochs 1 and 3 pass, epoch 2 fails."""
    records = [
        TaskRecord(
            task=Task(id="t", category="c", prompt="p"),
            epoch=epoch,
            trace=AgentTrace(tool_calls=[ToolCallResult(commands=f"echo {epoch}")]),
            score=TaskScore(
                task_id="t", results=[ScoreResult(check="exit_code:0", passed=epoch != 2)]
            ),
        )
        for epoch in (1, 2, 3)
    ]
    return run_of(records)


def test_the_task_browser_lists_every_attempt_with_its_own_outcome():
    runs = epochs_run()
    assert widgets.attempt_choices(runs, "r") == [
        ("t · epoch 1 (pass)", ("t", 1)),
        ("t · epoch 2 (fail)", ("t", 2)),
        ("t · epoch 3 (pass)", ("t", 3)),
    ]
    box = widgets.task_browser(runs, static=False)
    (_, task_dd), view = box.children[0].children, box.children[-1]
    assert task_dd.value == ("t", 2)  # it starts at the failed attempt
    assert "FAILED" in view.value and "epoch 2" in view.value and "$ echo 2" in view.value
    task_dd.value = ("t", 3)
    assert "PASSED" in view.value and "epoch 3" in view.value and "$ echo 3" in view.value


def test_all_in_the_picker_is_a_real_dropdown_value_not_none(runs):
    box = widgets.picker(runs, static=False)
    run_dd, model_dd = box.children[0].children
    for dropdown in (run_dd, model_dd):
        assert dropdown.value == widgets.ALL and dropdown.label == "all"
        assert None not in [value for _, value in dropdown.options]


def test_an_empty_selection_draws_every_chart_with_a_message_not_an_error(runs):
    box = widgets.picker(runs, static=False)
    run_dd, model_dd = box.children[0].children
    _, chart_dd = box.children[1].children
    for name in charts.CHARTS:
        chart_dd.value = name
        run_dd.value, model_dd.value = "b1", "alpha"  # no run is both
        shown = box.children[2].children[0]
        text = shown.outputs if isinstance(shown, ipywidgets.Output) else shown.children[1].value
        assert "error" not in str(text).lower()
    scenario_like = widgets.subset(runs, "b1", "alpha")
    scenario_like.tasks = scenario_like.tasks.with_columns(
        pl.lit(None, pl.Utf8).alias("command_pattern")
    )
    assert charts.guidance_differences(scenario_like).to_dict()["mark"]["type"] == "text"


def test_the_comparer_never_compares_a_run_with_itself(runs):
    assert "pick two different runs" in widgets.comparison_html(runs, "a1", "a1")
    box = widgets.comparer(runs, "a1", "b1", static=False)
    a_dd, b_dd = box.children[0].children
    b_dd.value = "a1"  # B set to A: neither moves behind the reader's back
    assert (a_dd.value, b_dd.value) == ("a1", "a1")
    assert widgets.SAME_RUN in box.children[1].value and box.children[2].options == ()
    b_dd.value = "a2"
    assert "A = alpha (a1) vs B = alpha (a2)" in box.children[1].value


def test_dropdowns_are_as_wide_as_their_longest_label(runs):
    box = widgets.comparer(runs, static=False)
    for dropdown in box.children[0].children:
        assert dropdown.layout.width == "max-content"
        assert dropdown.style.description_width == "initial"


def test_tables_show_every_row_and_the_whole_text():
    long_error = "bash: jq: command not found " * 10
    frame = pl.DataFrame({"task_id": [f"t{i}" for i in range(40)], "error": [long_error] * 40})
    page = widgets.show(frame).data
    assert page.count("<tr>") == 41 and long_error.strip() in page


def test_static_picker_shows_the_chart_as_svg_and_the_task_table(runs):
    page = widgets.picker(runs, static=True).data
    assert "<svg" in page
    assert page.count("<tr>") == 1 + runs.tasks.height
    assert "Pass rate by category" in page


def test_live_picker_filters_the_task_table(runs):
    box = widgets.picker(runs, static=False)
    run_dd, model_dd = box.children[0].children
    category_dd, chart_dd = box.children[1].children
    table = box.children[3]
    assert table.value.count("<tr>") == 1 + 12
    run_dd.value = "a1"
    assert table.value.count("<tr>") == 1 + 4
    category_dd.value = "json"
    assert (
        table.value.count("<tr>") == 1 + 2 and ">t3<" in table.value and ">t1<" not in table.value
    )
    run_dd.value = None
    model_dd.value = "alpha"
    assert table.value.count("<tr>") == 1 + 4  # json tasks of a1 and a2
    chart_dd.value = "tool_success"  # any chart renders for the selection


def test_subset_keeps_every_table_consistent(runs):
    part = widgets.subset(runs, model="alpha", category="files")
    assert set(part.runs.get_column("run_id")) == {"a1", "a2"}
    assert set(part.tasks.get_column("task_id")) == {"t1", "t2"}
    for name in ("llm_calls", "tool_calls", "checks", "messages"):
        assert set(getattr(part, name).get_column("task_id")) <= {"t1", "t2"}, name
    assert part.tool_calls.filter(pl.col("run_id") == "a1").height == 3  # t1: 1 call, t2: 2


def test_comparer_shows_the_paired_comparison_and_the_disagreements(runs):
    page = widgets.comparer(runs, "a1", "a2", static=True).data
    # a1 passed t1, t3; a2 passed all four: only B passed t2 and t4.
    assert "only A passed 0, only B passed 2" in page
    assert "Tasks that flipped from A to B (2)" in page
    assert ">t2<" in page and ">t4<" in page and ">t1<" not in page
    assert page.count(">fail→pass<") == 2


def test_live_comparer_recomputes_on_a_new_pair(runs):
    box = widgets.comparer(runs, static=False)
    a_dd, b_dd = box.children[0].children
    view = box.children[1]
    b_dd.value = "b1"
    a_dd.value = "a2"
    assert "A = alpha (a2) vs B = beta (b1)" in view.value
    b_dd.value = "a1"
    assert "A = alpha (a2) vs B = alpha (a1)" in view.value


def test_a_pair_that_cannot_be_compared_gives_a_message(runs):
    page = widgets.comparison_html(runs, "a1", "zz")
    assert page.startswith("<p>Cannot compare: no run 'zz'; runs: a1 (alpha)")


def test_helpers_say_what_is_missing_on_empty_runs():
    assert "No tasks" in widgets.task_browser(Runs.empty(), static=True).data
    assert "at least two runs" in widgets.comparer(Runs.empty(), static=True).data


def test_the_task_browser_keeps_failures_only_and_steps_to_the_next_failure(runs):
    box = widgets.task_browser(runs, "a1", "t1", static=False)
    (_, task_dd), (failures, next_btn, _), view = (
        box.children[0].children,
        box.children[1].children,
        box.children[-1],
    )
    assert task_dd.value == ("t1", 1)
    next_btn.click()  # a1 failed t2 and t4
    assert task_dd.value == ("t2", 1) and "FAILED" in view.value
    next_btn.click()
    assert task_dd.value == ("t4", 1)
    next_btn.click()  # wraps round
    assert task_dd.value == ("t2", 1)
    failures.value = True
    assert [t for _, t in task_dd.options] == [("t2", 1), ("t4", 1)]


def test_text_search_finds_attempts_by_what_their_transcript_says(runs):
    # "step0: failed with 1" is t2's stderr in run a1; case does not matter.
    found = widgets.matching_attempts(runs, "STEP0: FAILED").select("run_id", "task_id", "epoch")
    assert ("a1", "t2", 1) in found.rows()
    box = widgets.task_browser(runs, "a1", "t1", static=False)
    (_, task_dd), (_, _, search) = box.children[0].children, box.children[1].children
    search.value = "out t3"  # t3's stdout
    assert [t for _, t in task_dd.options] == [("t3", 1)]
    search.value = "no such text anywhere"
    assert task_dd.options == () and "No attempt matches" in box.children[-1].value


def test_the_comparer_shows_a_task_of_both_runs_side_by_side(runs):
    box = widgets.comparer(runs, "a1", "a2", static=False)
    task_dd, pair = box.children[2], box.children[3]
    # a1 failed t2 and t4, a2 passed all: those come first
    assert [t for _, t in task_dd.options][:2] == ["t2", "t4"]
    assert task_dd.options[0][0] == "t2 (fail→pass)"
    assert task_dd.options[-1][0].endswith("(same verdict)")
    assert "run a1" in pair.value and "run a2" in pair.value
    assert pair.value.index("run a1") < pair.value.index("run a2")
    assert "display: flex" in pair.value


def test_tables_offer_every_row_as_csv(runs):
    import base64

    page = widgets.show(runs.tasks.select("run_id", "task_id", "tags")).data
    data = page.split("base64,")[1].split('"')[0]
    csv = base64.b64decode(data).decode()
    assert csv.splitlines()[0] == "run_id,task_id,tags"
    assert len(csv.splitlines()) == runs.tasks.height + 1


def pooled_runs() -> Runs:
    """Model m in two runs (r1 with epochs 1 and 2, r2) and model n in one (n1).

    In every run: t1 (files) passes, t2 (files) fails, t3 (json) fails its second
    epoch or, in r2 and n1, passes.
    """
    outcome = {("r1", "t1", 1): True, ("r1", "t2", 1): False, ("r1", "t3", 1): True}
    outcome |= {("r1", "t1", 2): True, ("r1", "t2", 2): False, ("r1", "t3", 2): False}
    for run in ("r2", "n1"):
        outcome |= {(run, "t1", 1): True, (run, "t2", 1): False, (run, "t3", 1): True}
    parts = []
    for run, model in (("r1", "m"), ("r2", "m"), ("n1", "n")):
        records = [
            TaskRecord(
                task=Task(id=t, category="json" if t == "t3" else "files", prompt=f"do {t}"),
                epoch=e,
                trace=AgentTrace(tool_calls=[ToolCallResult(commands=f"echo {run} {t} {e}")]),
                score=TaskScore(task_id=t, results=[ScoreResult(check="exit_code:0", passed=ok)]),
            )
            for (r, t, e), ok in outcome.items()
            if r == run
        ]
        parts.append(run_of(records, run, model))
    return Runs.concat(parts)


def click(widget, value: dict, store: list) -> None:
    """What altair's JupyterChart JavaScript sends on a click: the selection's Vega signal
    value and its ``pick_store`` data, into the synced ``_vl_selections`` trait."""
    widget._vl_selections = {charts.PICK: {"value": value, "store": store}}


def heatmap_click(group: str, category: str) -> tuple[dict, list]:
    # The shapes vega-lite gives a point selection on two fields (tests/test_browser.py
    # reads them from a real click in Chromium).
    value = {
        "run_label": [group],
        "category": [category],
        "vlPoint": {"or": [{"run_label": group, "category": category}]},
    }
    fields = [{"field": "run_label", "type": "E"}, {"field": "category", "type": "E"}]
    return value, [{"unit": "view_1", "fields": fields, "values": [group, category]}]


def attempts_by_filter(runs: Runs, run_ids: list[str], category: str | None) -> list:
    """The (run, task, epoch, passed) of the attempts, from the frames: passed = every check."""
    checks = runs.checks.group_by("run_id", "task_id", "epoch").agg(pl.col("passed").all())
    rows = runs.tasks.filter(pl.col("run_id").is_in(run_ids))
    if category is not None:
        rows = rows.filter(pl.col("category") == category)
    joined = rows.join(checks, on=["run_id", "task_id", "epoch"])
    return sorted(
        (r, t, e, ok)
        for r, t, e, ok in joined.select("run_id", "task_id", "epoch", "passed_right").rows()
    )


def test_clicking_a_heatmap_cell_lists_the_tasks_behind_it_failures_first():
    runs = pooled_runs()
    box = widgets.drill_down(runs, "category_heatmap", static=False)
    chart, note, attempts, view = box.children
    assert isinstance(chart, alt.JupyterChart) and attempts.options == ()
    click(chart, *heatmap_click("m · 2 runs", "files"))
    listed = [(*value, label.endswith("(pass)")) for label, value in attempts.options]
    assert sorted(listed) == attempts_by_filter(runs, ["r1", "r2"], "files")
    assert len(listed) == 6  # t1 and t2 in r1 (two epochs) and in r2
    passed = [ok for *_, ok in listed]
    assert passed == sorted(passed)  # failures first
    assert "m · 2 runs · files</b>: 6 attempts, 3 failed" in note.value
    # the first failure is open; another opens on choice
    assert attempts.value == ("r1", "t2", 1) and "FAILED" in view.value
    assert "$ echo r1 t2 1" in view.value
    attempts.value = ("r2", "t1", 1)
    assert "PASSED" in view.value and "$ echo r2 t1 1" in view.value
    click(chart, *heatmap_click("n", "json"))
    assert [value for _, value in attempts.options] == [("n1", "t3", 1)]
    assert "$ echo n1 t3 1" in view.value


def test_clicking_a_rate_bar_lists_every_task_of_that_model_group():
    runs = pooled_runs()
    for name in ("rates_by_model", "natural_stop"):
        box = widgets.drill_down(runs, name, static=False)
        chart, _, attempts, view = box.children
        value = {"run_label": ["m · 2 runs"], "vlPoint": {"or": [{"run_label": "m · 2 runs"}]}}
        store = [
            {
                "unit": "view_1",
                "fields": [{"field": "run_label", "type": "E"}],
                "values": ["m · 2 runs"],
            }
        ]
        click(chart, value, store)
        listed = [(*value, label.endswith("(pass)")) for label, value in attempts.options]
        assert sorted(listed) == attempts_by_filter(runs, ["r1", "r2"], None), name
        assert [ok for *_, ok in listed][:3] == [False, False, False]
        click(chart, None, [])  # a double click clears the pick
        assert attempts.options == () and view.value == ""


def test_the_picker_draws_its_clickable_charts_as_a_drill_down():
    runs = pooled_runs()
    box = widgets.picker(runs, static=False)
    model_dd = box.children[0].children[1]
    _, chart_dd = box.children[1].children
    assert chart_dd.value == "category_heatmap"
    model_dd.value = "m"
    chart, _, attempts, _ = box.children[2].children[0].children
    click(chart, *heatmap_click("m · 2 runs", "json"))
    listed = [(*value, label.endswith("(pass)")) for label, value in attempts.options]
    assert sorted(listed) == attempts_by_filter(runs, ["r1", "r2"], "json")
    chart_dd.value = "trend"  # not clickable: an ordinary chart
    assert isinstance(box.children[2].children[0], ipywidgets.Output)
    with pytest.raises(ValueError, match="no drill-down for chart 'trend'"):
        widgets.drill_down(runs, "trend")


def many_attempts(n: int) -> Runs:
    """One run of ``n`` attempts (every third one failed), like a big run of the explorer."""
    return runs_of(("big", "m", [record(f"t{i:03}", [(i % 3 != 0, 1)]) for i in range(n)]))


def test_the_explorers_task_table_pages_through_the_attempts():
    big = many_attempts(60)
    page = widgets.picker(big, static=True).data
    assert page.count("<tr>") == 1 + widgets.PAGE_ROWS
    assert "attempts 1–25 of 60" in page and "download CSV (60 rows)" in page
    box = widgets.picker(big, static=False)
    table, (earlier, later) = box.children[3], box.children[4].children
    assert earlier.disabled and not later.disabled
    failures = big.tasks.filter(~pl.col("passed")).height  # failures come first
    assert table.value.count(">False<") == min(failures, widgets.PAGE_ROWS)
    later.click()
    assert "attempts 26–50 of 60" in table.value
    later.click()
    assert "attempts 51–60 of 60" in table.value and table.value.count("<tr>") == 1 + 10
    assert later.disabled
    earlier.click()
    assert "attempts 26–50 of 60" in table.value
