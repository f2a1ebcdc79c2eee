"""A fault evalnb knows is an InputError naming where the bad value came from; a fault it
does not know surfaces as what it is. evalnb's warnings are one family
(``en.EvalnbWarning``), each kind its own class, and each points at the line of the
caller's code that called evalnb, not inside evalnb."""

from __future__ import annotations

from pathlib import Path

import pytest

import evalnb as en
from evalnb._cli import main
from evalnb._store import RunStore
from evalnb.records import LLMCall, RunMeta

from .test_remote import _record


def _run(root: Path, model: str) -> Path:
    """A complete run of three tasks with LLM calls, by ``model``."""
    records = []
    for i in range(3):
        record = _record(f"t{i}", 1, [0, 1])
        record.trace.llm_calls = [LLMCall(call_number=1, input_tokens=900, output_tokens=50)]
        records.append(record)
    meta = RunMeta(run_id=f"run-{model}", provider="anthropic", model=model, status="complete")
    return RunStore.write_records(root, meta, records)


@pytest.mark.parametrize(
    ("options", "named"),
    [
        (["smoke", "--model", "gpt-5"], "evalnb run: --model: unknown model 'gpt-5'"),
        (["smoke", "--model", "sim/nobody"], "evalnb run: --model: unknown persona 'nobody'"),
        (["notes", "--model", "reference", "--judge", "sim/nobody"], ": --judge: unknown persona"),
    ],
)
def test_a_bad_model_or_judge_is_named_by_its_option(tmp_path, capsys, options, named):
    assert main(["run", *options, "--out", str(tmp_path), "--quiet"]) == 2
    assert named in capsys.readouterr().err


def test_a_fault_evalnb_does_not_know_is_not_blamed_on_the_options(tmp_path, monkeypatch):
    def broken(*args, **kwargs):
        raise ValueError("a bug")

    monkeypatch.setattr("evalnb._runtime.runner.run_cases", broken)
    with pytest.raises(ValueError, match="a bug"):
        main(["run", "smoke", "--model", "reference", "--out", str(tmp_path), "--quiet"])


def test_every_warning_evalnb_issues_is_an_evalnb_warning():
    kinds = [
        en.MissingPriceWarning,
        en.PartialRunWarning,
        en.DamagedInputWarning,
        en.DataQualityWarning,
        en.FallbackWarning,
    ]
    assert all(issubclass(kind, en.EvalnbWarning) for kind in kinds)
    assert issubclass(en.EvalnbWarning, UserWarning)


def test_a_model_without_a_price_warns_at_the_callers_line(tmp_path):
    runs = en.load(_run(tmp_path, "model-without-a-price"))
    with pytest.warns(en.MissingPriceWarning, match="model-without-a-price") as caught:
        en.summary(runs)
    assert [Path(w.filename) for w in caught] == [Path(__file__)]


def test_a_damaged_folder_rebuilt_from_its_events_warns_at_the_callers_line(tmp_path):
    run = _run(tmp_path, "claude-haiku-4-5")
    (run / "checks.parquet").unlink()
    with pytest.warns(en.DamagedInputWarning, match="tables rebuilt from events.jsonl") as caught:
        en.load(run)
    assert [Path(w.filename) for w in caught] == [Path(__file__)]


def test_a_torn_last_event_warns_at_the_callers_line(tmp_path):
    run = _run(tmp_path, "claude-haiku-4-5")
    store = RunStore.open(run)
    store.meta.status = "partial"
    store.write_meta()
    with (run / "events.jsonl").open("a") as fh:
        fh.write('{"type": "task_finished", "rec')
    with pytest.warns(en.DamagedInputWarning, match="torn last line discarded") as caught:
        en.load(run)
    assert {Path(w.filename) for w in caught} == {Path(__file__)}
