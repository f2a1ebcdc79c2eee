"""Partial runs: found from a file's summary or a sibling run of the same day, marked in the
runs table (``status``, ``missing_tasks``) and never drawn unmarked in a trend; model families."""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import polars as pl
import pytest

from evalnb._analysis.categories import by_category
from evalnb._analysis.load import load
from evalnb._analysis.summary import summary
from evalnb._cli import main
from evalnb._present.report import PARTIAL_MARK, SIZE_MARK, comparison_markdown, terminal_report

FIXTURES = Path(__file__).parents[2] / "shared" / "fixtures" / "bashkit-eval"
HAIKU = FIXTURES / "eval-anthropic-claude-haiku-4-5-2026-02-07-052023.json"
OPUS = FIXTURES / "eval-anthropic-claude-opus-4-6-2026-02-07-052536.json"
pytestmark = pytest.mark.skipif(not FIXTURES.is_dir(), reason="shared fixtures absent")


def derived(
    source: Path,
    out: Path,
    *,
    keep: int | None = None,
    summary_counts_kept: bool = True,
    model: str | None = None,
    day: str | None = None,
) -> Path:
    """A copy of a real result file, as the harness would have written it on another run.

    ``keep`` drops all but the first tasks; with ``summary_counts_kept`` the summary
    counts only the tasks kept (the harness summarised what it had, so the file looks
    complete); otherwise the summary keeps the full count.
    """
    doc = json.loads(source.read_text())
    if keep is not None:
        doc["results"] = doc["results"][:keep]
        if summary_counts_kept:
            doc["summary"]["total_tasks"] = keep
    if model is not None:
        doc["model"] = model
    if day is not None:
        doc["timestamp"] = f"{day}T04:38:56Z"
    stamp = (day or doc["timestamp"][:10]) + "-043856"
    path = out / f"eval-{doc['provider']}-{doc['model']}-{stamp}.json"
    path.write_text(json.dumps(doc))
    return path


def test_the_real_fixture_runs_are_complete_and_nothing_is_marked():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        runs = load(FIXTURES / "*.json")
    assert runs.runs.get_column("status").to_list() == ["complete"] * 3
    assert runs.runs.get_column("missing_tasks").to_list() == [None] * 3


def test_a_file_whose_summary_counts_more_tasks_is_partial_with_the_missing_count(tmp_path):
    path = derived(OPUS, tmp_path, keep=20, summary_counts_kept=False)
    full = len(json.loads(OPUS.read_text())["results"])
    with pytest.warns(UserWarning, match="partial run: 20 tasks"):
        runs = load(path)
    assert runs.runs.select("status", "task_count", "missing_tasks").row(0) == (
        "partial",
        20,
        full - 20,
    )
    assert f"partial: {full - 20} missing ==" in terminal_report(runs).splitlines()[0]


def test_a_run_that_looks_complete_is_found_partial_by_a_sibling_of_the_same_day(tmp_path):
    # The harness dropped tasks and summarised only the rest: the file alone looks complete.
    short = derived(OPUS, tmp_path, keep=11)
    doc = json.loads(short.read_text())
    assert len(doc["results"]) == doc["summary"]["total_tasks"] == 11
    with pytest.warns(UserWarning, match="looks partial"):
        runs = load(short, HAIKU)
    full = {r["task"]["id"] for r in json.loads(HAIKU.read_text())["results"]}
    kept = {r["task"]["id"] for r in doc["results"]}
    row = runs.runs.filter(pl.col("run_id") == short.stem).row(0, named=True)
    assert (row["status"], row["task_count"], row["missing_tasks"]) == (
        "partial",
        11,
        len(full - kept),
    )
    assert runs.runs.filter(pl.col("run_id") == HAIKU.stem).get_column("status").item() == (
        "complete"
    )


@pytest.mark.parametrize("order", ["small first", "full first"])
@pytest.mark.parametrize("as_folders", [False, True], ids=["files", "imported folders"])
def test_a_short_run_of_the_same_day_as_a_run_that_began_the_night_before_is_partial(
    tmp_path, order, as_folders
):
    """The full run ended at 00:02:00 on 2026-02-17 after 4 minutes of tasks, so it began on
    the 16th; a 3-task run of the 17th is still its sibling, whatever the load order."""
    full = derived(HAIKU, tmp_path, model="claude-sonnet-4")
    doc = json.loads(full.read_text())
    doc["timestamp"] = "2026-02-17T00:02:00Z"
    full.write_text(json.dumps(doc))
    small = derived(HAIKU, tmp_path, keep=3, model="claude-sonnet-4", day="2026-02-17")
    inputs = [small, full] if order == "small first" else [full, small]
    if as_folders:
        out = tmp_path / "runs"
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            assert main(["import", "bashkit-eval", *map(str, inputs), "--out", str(out)]) == 0
        inputs = [out / p.stem for p in inputs]
    with pytest.warns(UserWarning, match="looks partial"):
        runs = load(*inputs)
    rows = dict(runs.runs.select("run_id", "missing_tasks").rows())
    assert rows == {small.stem: len(doc["results"]) - 3, full.stem: None}
    assert runs.runs.filter(pl.col("run_id") == full.stem).get_column("started_at").item() < (
        "2026-02-17"
    )


def test_a_sibling_from_another_day_says_nothing(tmp_path):
    short = derived(OPUS, tmp_path, keep=11, day="2026-02-27")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        runs = load(short, HAIKU)
    assert runs.runs.filter(pl.col("run_id") == short.stem).get_column("status").item() == (
        "complete"
    )


def trend_section(text: str) -> str:
    return text.split("### Trend", 1)[1]


def test_the_trend_table_shows_task_counts_and_marks_partial_runs(tmp_path):
    # 2026-02-27: a dated Haiku snapshot with every task, and an Opus run that dropped
    # most of them (it passes all it kept, so unmarked it would top the trend).
    later = tmp_path / "later"
    later.mkdir()
    haiku_27 = derived(HAIKU, later, model="claude-haiku-4-5-20251001", day="2026-02-27")
    opus_27 = derived(OPUS, later, keep=5, day="2026-02-27")
    with pytest.warns(UserWarning, match="looks partial"):
        runs = load(HAIKU, OPUS, haiku_27, opus_27)
    text = comparison_markdown(summary(runs), by_category(runs))
    trend = trend_section(text)
    full = runs.tasks.filter(pl.col("run_id") == HAIKU.stem).height
    lines = {line.split(" | ")[0].strip("| "): line for line in trend.splitlines() if "|" in line}

    # the dated snapshot joins its model's line (one family, two dates)
    assert "claude-haiku-4-5 tasks" in lines
    assert not any("20251001" in name for name in lines)
    assert lines["claude-haiku-4-5 tasks"] == f"| claude-haiku-4-5 tasks | {full} | {full} |"
    assert lines["claude-opus-4-6 tasks"] == (
        f"| claude-opus-4-6 tasks | {full} | 5 (partial: {full - 5} missing) |"
    )
    opus_rate = lines["claude-opus-4-6 pass rate"].split(" | ")[2]
    assert opus_rate.endswith(PARTIAL_MARK + " |")
    assert PARTIAL_MARK not in lines["claude-haiku-4-5 pass rate"]
    assert f"{PARTIAL_MARK} partial run" in trend
    # the baseline (latest run per family) says so too
    baseline = text.split("### Per-Category Rates")[0]
    assert f"5 tasks, partial: {full - 5} missing" in baseline
    assert f"| claude-opus-4-6 {PARTIAL_MARK} |" in baseline


def test_runs_of_different_sizes_in_one_line_are_marked(tmp_path):
    # Same family, later day, a smaller task set that is not a partial run of anything
    # loaded (nothing that day has more): the size marker says the sets differ.
    smaller = derived(HAIKU, tmp_path, keep=10, day="2026-02-27")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        runs = load(HAIKU, smaller)
    trend = trend_section(comparison_markdown(summary(runs), by_category(runs)))
    rate = next(line for line in trend.splitlines() if "pass rate" in line)
    assert rate.rstrip(" |").endswith(SIZE_MARK)
    assert f"{SIZE_MARK} a different number of tasks" in trend


def test_model_family_joins_dated_snapshots_and_provider_prefixes(tmp_path):
    dated = derived(HAIKU, tmp_path, model="claude-haiku-4-5-20251001", day="2026-02-27")
    runs = load(HAIKU, dated, OPUS)
    families = dict(runs.runs.select("model", "model_family").iter_rows())
    assert families == {
        "claude-haiku-4-5": "claude-haiku-4-5",
        "claude-haiku-4-5-20251001": "claude-haiku-4-5",
        "claude-opus-4-6": "claude-opus-4-6",
    }


def test_the_trend_chart_joins_a_family_and_draws_partial_runs_apart(tmp_path):
    from evalnb._present import charts

    haiku_27 = derived(HAIKU, tmp_path, model="claude-haiku-4-5-20251001", day="2026-02-27")
    opus_27 = derived(OPUS, tmp_path, keep=5, day="2026-02-27")
    with pytest.warns(UserWarning, match="looks partial"):
        runs = load(HAIKU, OPUS, haiku_27, opus_27)
    spec = charts.trend(runs).to_dict()
    data = [row for values in spec["datasets"].values() for row in values]
    kinds = {(r["point"], r["model_label"], r["completeness"]) for r in data}
    # one point per model family and day (the dated snapshot joins its family)
    assert kinds == {
        ("claude-haiku-4-5 · 2026-02-07", "claude-haiku-4-5", "complete run"),
        ("claude-haiku-4-5 · 2026-02-27", "claude-haiku-4-5", "complete run"),
        ("claude-opus-4-6 · 2026-02-07", "claude-opus-4-6", "complete run"),
        ("claude-opus-4-6 · 2026-02-27", "claude-opus-4-6", "partial run"),
    }
    assert any("partial" in line for line in spec["title"]["subtitle"])


def _dataset_of(result: Path, out: Path, extra_ids: list[str]) -> Path:
    """A tasks JSONL holding the result file's own tasks plus ``extra_ids`` (bashkit's format)."""
    tasks = [r["task"] for r in json.loads(result.read_text())["results"]]
    template = tasks[0]
    tasks += [{**template, "id": task_id} for task_id in extra_ids]
    path = out / "eval-tasks.jsonl"
    path.write_text("".join(json.dumps(t) + "\n" for t in tasks))
    return path


def test_a_given_dataset_counts_the_tasks_a_result_file_lacks(tmp_path):
    # the harness dropped tasks and summarised only those left: the file alone looks complete
    kept = derived(OPUS, tmp_path, keep=20)
    dataset = _dataset_of(OPUS, tmp_path, ["added_later_a", "added_later_b"])
    dataset_ids = {json.loads(line)["id"] for line in dataset.read_text().splitlines()}
    own_ids = {r["task"]["id"] for r in json.loads(kept.read_text())["results"]}
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert load(kept).runs.get_column("status").to_list() == ["complete"]
    with pytest.warns(UserWarning, match=f"holds 20 of the {len(dataset_ids)} tasks of dataset"):
        runs = load(kept, dataset=dataset)
    assert runs.runs.select("status", "missing_tasks").row(0) == (
        "partial",
        len(dataset_ids - own_ids),
    )


def test_a_run_with_a_task_outside_the_dataset_is_not_a_run_of_it(tmp_path):
    doc = json.loads(OPUS.read_text())
    dataset = tmp_path / "other.jsonl"
    dataset.write_text(json.dumps({**doc["results"][0]["task"], "id": "unrelated"}) + "\n")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        runs = load(OPUS, dataset=dataset)
    assert runs.runs.select("status", "missing_tasks").row(0) == ("complete", None)


def test_a_result_file_of_the_packaged_bash_suite_is_checked_against_it(tmp_path):
    from evalnb._resources import dataset_path

    suite = [json.loads(line) for line in dataset_path("bash").read_text().splitlines() if line]
    smoke = {json.loads(line)["id"] for line in dataset_path("smoke").read_text().splitlines()}
    doc = json.loads(HAIKU.read_text())
    template = doc["results"][0]
    kept = [t for t in suite if t["id"] not in smoke][:10]  # not a smoke-only file
    doc["results"] = [
        {
            **template,
            "task": {**template["task"], "id": t["id"]},
            "score": {**template["score"], "task_id": t["id"]},
        }
        for t in kept
    ]
    doc["summary"]["total_tasks"] = len(kept)
    path = tmp_path / "eval-anthropic-claude-haiku-4-5-2026-03-01-000000.json"
    path.write_text(json.dumps(doc))
    with pytest.warns(UserWarning, match=r"dataset 'bash'"):
        runs = load(path)
    assert runs.runs.select("status", "missing_tasks").row(0) == (
        "partial",
        len(suite) - len(kept),
    )


def test_summary_dataset_option_marks_the_run_partial(tmp_path, capsys):
    from evalnb._cli import main

    kept = derived(OPUS, tmp_path, keep=20)
    dataset = _dataset_of(OPUS, tmp_path, ["added_later"])
    size = len(dataset.read_text().splitlines())
    with pytest.warns(UserWarning, match=f"holds 20 of the {size} tasks"):
        assert main(["summary", str(kept), "--dataset", str(dataset), "--json"]) == 0
    row = json.loads(capsys.readouterr().out.splitlines()[0])
    assert (row["status"], row["missing_tasks"]) == ("partial", size - 20)
