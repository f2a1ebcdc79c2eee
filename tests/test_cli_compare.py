"""``evalnb compare RUN_A RUN_B`` and ``evalnb summary`` on awkward scores."""

from __future__ import annotations

import json

from evalnb._analysis.stats import mcnemar_exact
from evalnb._cli import main


def test_compare_prints_the_paired_comparison_of_two_result_files(bashkit_eval_files, capsys):
    haiku, opus = bashkit_eval_files[0], bashkit_eval_files[1]
    assert main(["compare", str(haiku), str(opus)]) == 0
    out = capsys.readouterr().out
    assert out.startswith("A = claude-haiku-4-5 (")
    assert "25 shared tasks (25 vs 25 attempts)" in out
    assert "exact McNemar p = " in out and "sign-flip p = " in out


def test_compare_json_has_every_figure(bashkit_eval_files, capsys):
    assert main(["compare", "--json", *map(str, bashkit_eval_files[:2])]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["tasks"] == 25 and doc["test"] == "exact McNemar"
    assert doc["p"] == mcnemar_exact(doc["a_higher"], doc["b_higher"])
    assert doc["pass_rate_a"] - doc["pass_rate_b"] == doc["diff"]
    # Two metrics are two comparisons: Holm's adjustment beside each raw p-value.
    low, high = sorted([doc["p"], doc["rate_p"]])
    holm = {doc["p"]: doc["p_holm"], doc["rate_p"]: doc["rate_p_holm"]}
    assert holm[low] == min(1.0, 2 * low) and holm[high] == max(holm[low], high)


def test_compare_prints_holm_beside_each_p_value(bashkit_eval_files, capsys):
    assert main(["compare", *map(str, bashkit_eval_files[:2])]) == 0
    out = capsys.readouterr().out
    assert out.count("Holm p = ") == 2


def test_compare_refuses_a_run_compared_with_itself(bashkit_eval_files, capsys):
    path = str(bashkit_eval_files[0])
    assert main(["compare", path, path]) == 2
    assert "nothing to compare" in capsys.readouterr().err


def test_compare_of_a_missing_file_is_bad_input(tmp_path, capsys):
    assert main(["compare", str(tmp_path / "a.json"), str(tmp_path / "b.json")]) == 2
    assert capsys.readouterr().err.startswith("error: ")


def test_summary_survives_a_nan_max_score(bashkit_eval_files, tmp_path, capsys):
    doc = json.loads(bashkit_eval_files[0].read_text())
    doc["results"][0]["score"]["max_score"] = float("nan")
    path = tmp_path / "odd-scores.json"
    path.write_text(json.dumps(doc))
    assert main(["summary", str(path)]) == 0
    out = capsys.readouterr().out
    assert "nan" not in out.lower()
    assert main(["summary", "--json", str(path)]) == 0
    record = json.loads(capsys.readouterr().out)
    assert record["overall_rate_lo"] < record["overall_rate"] < record["overall_rate_hi"]
