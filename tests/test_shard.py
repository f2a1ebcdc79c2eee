"""Sharded runs (`evalnb run --shard i/N`) and `evalnb merge`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import evalnb as en
from evalnb._cli import main
from evalnb._runtime.shard import in_shard

TOTALS = ["total_tasks", "total_passed", "total_score", "total_max_score", "total_tool_calls"]


def run(tmp: Path, name: str, *extra: str) -> Path:
    code = main(
        [
            "run",
            "smoke",
            "--model",
            "reference",
            "--epochs",
            "2",
            "--out",
            str(tmp / name),
            "--quiet",
            *extra,
        ]
    )
    assert code == 0
    [folder] = (tmp / name).iterdir()
    return folder


def totals(path: Path) -> dict:
    return en.summary(en.load(path)).select(TOTALS).row(0, named=True)


def test_every_attempt_is_in_exactly_one_shard_and_shards_are_balanced():
    attempts = [(f"t{i}", e) for i in range(7) for e in (1, 2)]
    shards = [in_shard(attempts, (i, 3)) for i in (1, 2, 3)]
    assert sorted(a for s in shards for a in s) == sorted(attempts)
    assert sorted(len(s) for s in shards) == [4, 5, 5]


def test_the_split_does_not_depend_on_dataset_order():
    attempts = [(f"t{i}", 1) for i in range(6)]
    assert sorted(in_shard(attempts, (2, 3))) == sorted(in_shard(attempts[::-1], (2, 3)))


def test_merged_shards_have_the_totals_of_an_unsharded_run(tmp_path):
    whole = run(tmp_path, "whole")
    shards = [run(tmp_path, f"s{i}", "--shard", f"{i}/2") for i in (1, 2)]
    counts = [totals(s)["total_tasks"] for s in shards]
    assert sum(counts) == totals(whole)["total_tasks"] and min(counts) > 0
    out = tmp_path / "merged"
    assert main(["merge", *map(str, shards), "--out", str(out)]) == 0
    assert totals(out) == totals(whole)
    meta = json.loads((out / "run.json").read_text())
    assert meta["settings"]["shard"] is None and meta["run_id"] == "merged"


def test_merge_refuses_missing_overlapping_and_mismatched_shards(tmp_path, capsys):
    one = run(tmp_path, "a", "--shard", "1/3")
    two = run(tmp_path, "b", "--shard", "2/3")
    three = run(tmp_path, "c", "--shard", "3/3")
    other = run(tmp_path, "d", "--shard", "3/3", "--max-turns", "4")
    cases = {
        "missing: 3/3": [one, two],
        "given twice": [one, two, two],
        "max_turns": [one, two, other],
    }
    for message, dirs in cases.items():
        out = tmp_path / "out"
        assert main(["merge", *map(str, dirs), "--out", str(out)]) == 2
        assert message in capsys.readouterr().err
        assert not out.exists()
    whole = run(tmp_path, "e")
    assert main(["merge", str(whole), "--out", str(tmp_path / "x")]) == 2
    assert "not a shard" in capsys.readouterr().err
    assert main(["merge", str(one), str(two), str(three), "--out", str(tmp_path / "ok")]) == 0


def test_a_bad_shard_argument_is_an_input_error(tmp_path, capsys):
    code = main(["run", "smoke", "--model", "reference", "--shard", "3/2", "--out", str(tmp_path)])
    assert code == 2
    assert "--shard" in capsys.readouterr().err
    assert not any(tmp_path.iterdir())


@pytest.mark.parametrize("spec", ["0/2", "x/2", "1"])
def test_shard_must_be_i_of_n(spec):
    from evalnb._runtime.shard import parse_shard
    from evalnb.errors import InputError

    with pytest.raises(InputError):
        parse_shard(spec)
