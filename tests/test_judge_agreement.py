"""Judge agreement: Krippendorff's alpha from the krippendorff package, checked against a
recount from its definition, over attempts re-scored by another judge; a person's labels."""

from __future__ import annotations

import json

import polars as pl
import pytest

from evalnb._analysis.judge_agreement import judge_agreement, judge_scores, read_labels
from evalnb._analysis.load import load
from evalnb._analysis.runs import Runs
from evalnb._cli import main
from evalnb._store import RunStore
from evalnb.errors import InputError
from evalnb.records import RunMeta
from tests.fault_server import FaultServer
from tests.test_judge_event_loop import AGENT, JUDGED


def alpha_by_definition(units: list[list[float | None]]) -> float:
    """Interval alpha, 1 - D_o / D_e, over the units with two or more values (plain Python)."""
    pairable = [[v for v in u if v is not None] for u in units]
    pairable = [u for u in pairable if len(u) >= 2]
    values = [v for u in pairable for v in u]
    n = len(values)
    observed = (
        sum(
            sum((a - b) ** 2 for i, a in enumerate(u) for j, b in enumerate(u) if i != j)
            / (len(u) - 1)
            for u in pairable
        )
        / n
    )
    expected = sum((a - b) ** 2 for a in values for b in values) / (n * (n - 1))
    return 1 - observed / expected


J1 = [0.9, 0.2, 0.6, 0.75, None, 0.1]
J2 = [0.8, 0.1, 0.7, 0.75, 0.5, 0.0]
J3 = [1.0, 0.3, None, 0.5, 0.4, None]


def rescored_runs() -> Runs:
    """Run ``a`` judged by j1, and its replays ``b`` (j2) and ``c`` (j3); one task per score."""
    rows = []
    for run_id, judge, scores in (("a", "j1", J1), ("b", "j2", J2), ("c", "j3", J3)):
        rows += [
            {"run_id": run_id, "model": "m", "task_id": f"t{i}", "epoch": 1,
             "judge_model": judge, "judge_score": s}
            for i, s in enumerate(scores)
        ]  # fmt: skip
    runs = Runs.empty()
    runs.set_table(
        "runs",
        pl.DataFrame(
            {"run_id": ["a", "b", "c"], "model": ["m"] * 3,
             "recorded_from": [None, "runs/a", "/x/runs/a/"]}
        ),
    )  # fmt: skip
    runs.set_table("tasks", pl.DataFrame(rows))
    return runs


def test_re_scored_attempts_are_the_same_attempts():
    scores = judge_scores(rescored_runs())
    assert set(scores.get_column("origin")) == {"a"}
    assert scores.height == sum(s is not None for s in J1 + J2 + J3)


def test_alpha_of_the_judges_equals_the_definition():
    row = judge_agreement(rescored_runs()).row(0, named=True)
    units = [list(u) for u in zip(J1, J2, J3, strict=True)]
    assert row["raters"] == "j1, j2, j3"
    assert row["attempts"] == 6
    assert row["alpha"] == pytest.approx(alpha_by_definition(units), abs=1e-12)
    assert row["alpha_lo"] < row["alpha"] < row["alpha_hi"] <= 1


def test_each_judge_against_a_persons_labels(tmp_path):
    labels = tmp_path / "labels.csv"
    human = ["pass", "fail", "true", "0.5", "1", "false"]
    rows = "".join(f"t{i},1,{label}\n" for i, label in enumerate(human))
    labels.write_text("task_id,epoch,label\n" + rows)
    frame = judge_agreement(rescored_runs(), labels)
    assert frame.get_column("raters").to_list() == [
        "j1, j2, j3",
        "human labels, j1",
        "human labels, j2",
        "human labels, j3",
    ]
    numbers = [1.0, 0.0, 1.0, 0.5, 1.0, 0.0]
    for judge, scores in (("j1", J1), ("j2", J2), ("j3", J3)):
        row = frame.filter(raters=f"human labels, {judge}").row(0, named=True)
        units = [[h, s] for h, s in zip(numbers, scores, strict=True)]
        assert row["alpha"] == pytest.approx(alpha_by_definition(units), abs=1e-12)
        assert row["attempts"] == sum(s is not None for s in scores)


def test_one_judge_and_no_labels_give_no_rows():
    assert judge_agreement(rescored_runs().filter(pl.col("run_id") == "a")).height == 0


@pytest.mark.parametrize(
    ("text", "where"),
    [
        ("task,epoch,label\nt1,1,pass\n", "labels.csv:1: task_id: missing column"),
        ("task_id,epoch,label\nt1,one,pass\n", "labels.csv:2: epoch: 'one' is not a whole"),
        ("task_id,epoch,label\nt1,1,pass\nt1,1,fail\n", "labels.csv:3: task_id: t1 epoch 1"),
        ("task_id,epoch,label\nt1,1,1.5\n", "labels.csv:2: label: '1.5' is not pass"),
    ],
)
def test_bad_labels_name_the_file_line_and_field(tmp_path, text, where):
    path = tmp_path / "labels.csv"
    path.write_text(text)
    with pytest.raises(InputError, match=where):
        read_labels(path)


def test_the_judges_command_exits_2_on_bad_labels(tmp_path, capsys):
    folder = RunStore.write_records(tmp_path, RunMeta(run_id="r", provider="p", model="m"), [])
    (tmp_path / "l.csv").write_text("task_id,epoch\n")
    assert main(["judges", str(folder), "--labels", str(tmp_path / "l.csv")]) == 2
    assert "l.csv:1: label: missing column" in capsys.readouterr().err
    assert main(["judges", str(folder), "--json"]) == 0
    assert [json.loads(x) for x in capsys.readouterr().out.splitlines()] == []


def test_a_run_re_scored_by_replay_with_another_judge_pairs_the_same_attempts(
    tmp_path, monkeypatch
):
    """End to end: a scenario run judged by one judge, its replay by another (both served
    by a real local OpenAI-compatible server), load both: each attempt rated twice."""
    server = FaultServer()
    try:
        monkeypatch.setenv("OPENAI_BASE_URL", server.url("judge"))
        monkeypatch.delenv("OPENAI_API_KEY", raising=False)
        run = ["run", str(JUDGED), "--quiet", "--judge"]
        agent = f"scripted:{AGENT}"
        assert main([*run, "openai/judge-a", "--model", agent, "--out", str(tmp_path / "a")]) == 0
        [first] = (tmp_path / "a").iterdir()
        replay = f"replay:{first}"
        assert main([*run, "openai/judge-b", "--model", replay, "--out", str(tmp_path / "b")]) == 0
    finally:
        server.stop()
    runs = load(tmp_path / "a", tmp_path / "b")
    scores = judge_scores(runs)
    assert scores.get_column("origin").to_list() == [first.name] * 2
    assert sorted(scores.get_column("judge_model")) == ["openai/judge-a", "openai/judge-b"]
    row = judge_agreement(runs).row(0, named=True)
    # one attempt rated twice: alpha needs two attempts, so it is left unknown, not made up
    assert (row["raters"], row["attempts"], row["alpha"]) == (
        "openai/judge-a, openai/judge-b",
        1,
        None,
    )
