"""bashkit mira run folders: one evalnb run per (eval, target), skipped and na cases."""

from __future__ import annotations

import json
import warnings
from collections import defaultdict
from pathlib import Path

import pytest
import yaml

from evalnb._analysis.cost import task_cost
from evalnb._analysis.load import load
from evalnb._analysis.summary import summary
from evalnb._formats.mira import read_mira
from evalnb._present.report import terminal_report
from evalnb._resources import data_path
from evalnb._store.tables import KEYS
from evalnb.errors import InputError

MIRA = Path(__file__).parents[2] / "shared" / "fixtures" / "mira" / "20260626T043009Z-34f5"


@pytest.fixture
def mira() -> Path:
    if not MIRA.is_dir():
        pytest.skip("../shared/fixtures/mira is absent")
    return MIRA


def _recount(folder: Path) -> dict[str, dict[str, int]]:
    """Figures per target counted straight from report.json, without evalnb."""
    cases = json.loads((folder / "report.json").read_text())["cases"]
    out: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    for case in cases:
        fig = out[case["target"]]
        if case["skipped"]:
            fig["skipped"] += 1
            continue
        tr = case["transcript"]
        outputs = tr["metadata"]["bashkit"]["tool_outputs"]
        fig["tasks"] += 1
        fig["passed"] += case["passed"]
        fig["tool_ok"] += sum(o["exit_code"] == 0 for o in outputs)
        fig["tool_err"] += sum(o["exit_code"] != 0 for o in outputs)
        fig["input"] += tr["usage"]["input_tokens"]
        fig["output"] += tr["usage"]["output_tokens"]
    return out


def _load(folder: Path):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return load(folder)


def test_every_figure_of_a_real_mira_run_matches_a_recount(mira):
    runs = _load(mira)
    expected = _recount(mira)
    assert runs.runs.height == len(expected)  # one run per (eval, target); one eval here
    for target, fig in expected.items():
        provider, model = target.split("/")
        run = runs.runs.filter(model=model, provider=provider)
        assert run.select("task_count", "skipped").row(0) == (fig["tasks"], fig["skipped"])
        run_id = run.get_column("run_id").item()
        tasks = runs.tasks.filter(run_id=run_id)
        calls = runs.tool_calls.filter(run_id=run_id)
        assert tasks.height == fig["tasks"]
        assert tasks.get_column("passed").sum() == fig["passed"]
        assert (calls.get_column("exit_code") == 0).sum() == fig["tool_ok"]
        assert (calls.get_column("exit_code") != 0).sum() == fig["tool_err"]
        assert tasks.get_column("total_input_tokens").sum() == fig["input"]
        assert tasks.get_column("total_output_tokens").sum() == fig["output"]


def test_the_bashkit_reason_gives_the_expectation_counts(mira):
    runs = _load(mira)
    cases = json.loads((mira / "report.json").read_text())["cases"]
    reasons = {
        (c["sample"], c["target"].split("/")[1]): c["scores"][0]["reason"]
        for c in cases
        if not c["skipped"]
    }
    for row in runs.tasks.iter_rows(named=True):
        reason = reasons[(row["task_id"], row["model"])]
        assert reason.startswith(f"{row['expectations_passed']}/{row['expectations_total']} ")


def test_the_summary_of_meta_json_agrees_with_the_runs(mira):
    runs = _load(mira)
    summary = json.loads((mira / "meta.json").read_text())["summary"]
    assert runs.tasks.height == summary["scored"] + summary["na"]
    assert runs.tasks.get_column("passed").sum() == summary["passed"]
    assert runs.runs.get_column("skipped").sum() == summary["skipped"]
    assert runs.tool_calls.height == summary["total_tool_calls"]


# --- hand-made edge cases -------------------------------------------------------------


def _case(sample: str, target: str = "anthropic/m", **kw) -> dict:
    case = {
        "eval": "ev",
        "sample": sample,
        "target": target,
        "passed": True,
        "aggregate": 1.0,
        "skipped": False,
        "scores": [
            {
                "scorer": "bashkit_expectations",
                "value": 1.0,
                "pass": True,
                "reason": "3/3 checks passed",
            }
        ],
        "transcript": {
            "iterations": 2,
            "tool_calls_count": 1,
            "usage": {"input_tokens": 10, "output_tokens": 2, "cost_usd": 0.0},
            "timing": {"duration_ms": 5},
            "metadata": {
                "bashkit": {
                    "tool_outputs": [{"commands": "ls", "exit_code": 0, "stdout": "", "stderr": ""}]
                }
            },
        },
    }
    case.update(kw)
    return case


def _folder(root: Path, cases: list[dict], report: bool = True) -> Path:
    folder = root / "run-1"
    folder.mkdir()
    (folder / "meta.json").write_text(
        json.dumps({"run_id": "run-1", "started_unix": 1, "finished_unix": 9})
    )
    if report:
        (folder / "report.json").write_text(json.dumps({"cases": cases, "summary": {}}))
    else:
        for i, case in enumerate(cases):
            (folder / "cases" / str(i)).mkdir(parents=True)
            (folder / "cases" / str(i) / "result.json").write_text(json.dumps(case))
    return folder


def test_na_cases_are_errored_tasks_and_skipped_cases_are_counted(tmp_path):
    na_scores = [
        {
            "scorer": "bashkit_expectations",
            "value": 0.0,
            "pass": False,
            "reason": "judge down",
            "na": True,
        }
    ]
    folder = _folder(
        tmp_path,
        [
            _case("ok"),
            _case("infra", passed=False, scores=na_scores),
            _case("later", skipped=True, scores=[]),
        ],
    )
    with pytest.warns(UserWarning, match="1 skipped case"):
        runs = load(folder)
    assert runs.runs.select("task_count", "skipped").row(0) == (2, 1)
    tasks = runs.tasks.sort("task_id").select("task_id", "passed", "error").rows()
    assert tasks == [("infra", False, "judge down"), ("ok", True, None)]
    assert runs.checks.filter(task_id="infra").height == 0  # an N/A score is no verdict


def test_a_target_whose_cases_were_all_skipped_is_a_run_without_tasks(tmp_path):
    folder = _folder(tmp_path, [_case("a"), _case("a", target="openai/x", skipped=True, scores=[])])
    with pytest.warns(UserWarning, match="openai/x: 1 skipped"):
        runs = load(folder)
    skipped = runs.runs.filter(model="x")
    assert skipped.select("task_count", "skipped").row(0) == (0, 1)


def test_repeated_trials_are_epochs_and_params_name_the_task(tmp_path):
    cases = [_case("s", trial=t, trials=2, params={"effort": "high"}) for t in (0, 1)]
    runs = load(_folder(tmp_path, cases))
    assert runs.tasks.select("task_id", "epoch").rows() == [
        ("s[effort=high]", 1),
        ("s[effort=high]", 2),
    ]


def test_a_case_whose_passed_disagrees_with_its_scores_warns(tmp_path):
    folder = _folder(tmp_path, [_case("s", passed=False)])
    with pytest.warns(UserWarning, match="mira says passed=False but its scores say True"):
        load(folder)


def test_a_cases_iterations_are_its_llm_calls(tmp_path):
    """Found by the differential tests (issue 25, "each import"): a case of 2 iterations
    (2 LLM calls) had ``llm_call_count`` 0, the count of its absent call rows."""
    runs = load(_folder(tmp_path, [_case("a")]))
    assert runs.tasks.select("turns", "llm_call_count").row(0) == (2, 2)


def test_a_folder_without_report_json_is_read_from_its_case_files(tmp_path):
    runs = load(_folder(tmp_path, [_case("a"), _case("b")], report=False))
    assert sorted(runs.tasks.get_column("task_id")) == ["a", "b"]


def test_without_tool_outputs_only_the_count_is_kept(tmp_path):
    case = _case("a")
    del case["transcript"]["metadata"]
    runs = load(_folder(tmp_path, [case]))
    assert runs.tool_calls.height == 0
    assert runs.tasks.get_column("tool_calls_recorded").to_list() == [1]


def test_bad_mira_files_name_file_line_and_field(tmp_path):
    case = _case("a")
    case["transcript"]["usage"]["input_tokens"] = "many"
    folder = _folder(tmp_path, [case])
    with pytest.raises(
        InputError, match=r"report\.json:\d+: cases\.0\.transcript\.usage\.input_tokens"
    ):
        read_mira(folder)
    (folder / "meta.json").write_text("{}")
    with pytest.raises(InputError, match=r"meta\.json:1: run_id: Field required"):
        read_mira(folder)


def test_cache_reads_are_part_of_the_prompt_and_priced_at_the_cached_rate(tmp_path):
    # mira's usage.cache_read_tokens is a subset of input_tokens, summed over the case
    usages = [
        {"input_tokens": 12_000, "output_tokens": 300, "cache_read_tokens": 9_000},
        {"input_tokens": 4_000, "output_tokens": 100},  # mira omits a zero cache count
    ]
    cases = [_case(f"s{i}", target="anthropic/claude-haiku-4-5") for i in range(2)]
    for case, usage in zip(cases, usages, strict=True):
        case["transcript"]["usage"] = {**usage, "cost_usd": 0.0}
    folder = _folder(tmp_path, cases)
    runs = load(folder)
    tasks = runs.tasks.sort("task_id")
    assert tasks.get_column("total_input_tokens").to_list() == [12_000, 4_000]
    assert tasks.get_column("cache_read_tokens").to_list() == [9_000, None]
    assert tasks.get_column("cache_write_tokens").to_list() == [None, None]  # not in mira
    assert "cache_write_tokens" in read_mira(folder)[0][0].settings.unavailable
    prices = yaml.safe_load(data_path("prices.yaml").read_text())["models"]["claude-haiku-4-5"]
    expected = [
        (
            (u["input_tokens"] - u.get("cache_read_tokens", 0)) * prices["input"]
            + u.get("cache_read_tokens", 0) * prices["cached_input"]
            + u["output_tokens"] * prices["output"]
        )
        / 1e6
        for u in usages
    ]
    costs = task_cost(runs).sort("task_id")
    assert costs.get_column("priced_cost_usd").to_list() == pytest.approx(expected)
    assert costs.get_column("cache_read_tokens").to_list() == [9_000, 0]
    # the cost is mira's own, 0.0 as recorded; the priced figure stands beside it
    assert costs.select("cost_usd", "cost_source").unique().rows() == [(0.0, "recorded")]


def test_the_real_run_s_recorded_cost_is_its_cost_and_the_prices_are_shown_beside(mira):
    runs = _load(mira)
    cases = json.loads((mira / "report.json").read_text())["cases"]
    recorded = {c["target"].split("/")[1]: 0.0 for c in cases if not c["skipped"]}
    for c in cases:
        if not c["skipped"]:
            recorded[c["target"].split("/")[1]] += c["transcript"]["usage"]["cost_usd"]
    rows = summary(runs).filter(total_tasks=3).select("model", "cost_usd", "recorded_cost_usd")
    assert {m: (c, r) for m, c, r in rows.rows()} == {m: (v, v) for m, v in recorded.items()}
    costs = task_cost(runs)
    assert set(costs.get_column("cost_source")) == {"recorded"}
    haiku = costs.join(runs.tasks.select(*KEYS), on=KEYS).filter(model="claude-haiku-4-5")
    assert haiku.get_column("priced_cost_usd").min() > 0  # what the price table says


def test_beside_a_recorded_cost_the_summary_and_report_show_the_priced_total(mira):
    """Found by an audit: the summary showed mira's recorded $0.00 and nothing else."""
    runs = _load(mira)
    prices = yaml.safe_load(data_path("prices.yaml").read_text())["models"]
    cases = json.loads((mira / "report.json").read_text())["cases"]
    priced: dict[str, float] = defaultdict(float)
    for case in cases:
        if not case["skipped"]:
            model, usage = case["target"].split("/")[1], case["transcript"]["usage"]
            price = prices[model]  # no cache counts in this run: every input token uncached
            priced[model] += (
                usage["input_tokens"] * price["input"] + usage["output_tokens"] * price["output"]
            ) / 1e6
    rows = summary(runs).filter(total_tasks=3)
    got = rows.select("model", "cost_usd", "recorded_cost_usd", "priced_cost_usd").rows()
    assert {m: (c, r) for m, c, r, _ in got} == {m: (0.0, 0.0) for m in priced}  # recorded
    assert {m: p for m, _, _, p in got} == pytest.approx(dict(priced))
    report = terminal_report(runs)
    for model, total in priced.items():  # cents, or 4 decimals below a cent
        usd = f"${total:.2f}" if total >= 0.01 else f"${total:.4f}"
        assert f"Cost: $0.00 recorded (prices: {usd})" in report, model


def test_the_real_run_carries_no_cache_counts_and_says_so(mira):
    runs = _load(mira)
    cases = json.loads((mira / "report.json").read_text())["cases"]
    recorded = [
        c["transcript"]["usage"].get("cache_read_tokens") for c in cases if not c["skipped"]
    ]
    assert sorted(runs.tasks.get_column("cache_read_tokens").to_list(), key=str) == sorted(
        recorded, key=str
    )
