"""Context peaks, drops and tokens re-read per attempt, recounted from the per-call tokens;
the compaction marker read from Claude Code's compact_boundary lines."""

from __future__ import annotations

import json
import random

from evalnb._analysis.context import context_peaks
from evalnb._analysis.load import load
from evalnb._analysis.runs import Runs
from evalnb._cli import main
from evalnb._formats.claude_code import read_claude_code
from evalnb._store import RunStore
from evalnb._store.tables import tables_from_records
from evalnb.records import AgentTrace, LLMCall, RunMeta, Task, TaskRecord, TaskScore
from tests.factories import run_of
from tests.test_claude_code_import import session_lines, write


def attempt(
    task_id: str, inputs: list[int | None], compacted: set[int] = frozenset()
) -> TaskRecord:
    calls = [
        LLMCall(call_number=i, input_tokens=n, compacted=True if i in compacted else None)
        for i, n in enumerate(inputs, start=1)
    ]
    return TaskRecord(
        task=Task(id=task_id, category="c", prompt="p"),
        trace=AgentTrace(llm_calls=calls),
        score=TaskScore(task_id=task_id),
    )


def recount(inputs: list[int | None], compacted: set[int]) -> dict:
    """Plain Python, from the module docstring's definitions."""
    known = [n for n in inputs if n is not None]
    drops = [
        i
        for i in range(1, len(inputs) + 1)
        if i in compacted
        or (i > 1 and None not in (inputs[i - 1], inputs[i - 2]) and inputs[i - 1] < inputs[i - 2])
    ]
    peak = max(known) if known else None
    return {
        "llm_call_count": len(inputs),
        "peak_context": peak,
        "peak_call": inputs.index(peak) + 1 if known else None,
        "drops": len(drops),
        "drop_calls": drops,
        "compactions": len(compacted),
        "tokens_reread": sum(known) if None not in inputs else None,
    }


def test_every_figure_equals_a_recount_from_the_calls():
    rng = random.Random(29)
    cases = {}
    for i in range(30):
        inputs = [
            None if rng.random() < 0.1 else rng.randrange(1000, 200_000)
            for _ in range(rng.randint(1, 9))
        ]
        compacted = {c for c in range(2, len(inputs) + 1) if rng.random() < 0.15}
        cases[f"t{i}"] = (inputs, compacted)
    records = [attempt(t, inputs, compacted) for t, (inputs, compacted) in cases.items()]
    runs = run_of(records)
    for row in context_peaks(runs).iter_rows(named=True):
        inputs, compacted = cases[row["task_id"]]
        got = {k: row[k] for k in recount(inputs, compacted)}
        assert got == recount(inputs, compacted), row["task_id"]


def test_a_compaction_shows_as_a_drop_and_spec_003s_fields_stay_as_they_are():
    inputs = [40_000, 90_000, 150_000, 30_000, 60_000]
    runs = Runs(
        **tables_from_records(
            RunMeta(run_id="r", provider="p", model="m"), [attempt("t", inputs, {4})]
        )
    )
    row = context_peaks(runs).row(0, named=True)
    assert (row["peak_context"], row["peak_call"], row["drop_calls"]) == (150_000, 3, [4])
    assert row["tokens_reread"] == sum(inputs)
    task = runs.tasks.row(0, named=True)
    assert task["base_context"] == 40_000
    assert task["context_growth_avg"] == (60_000 - 40_000) / 4  # the straight slope, unchanged


def test_claude_code_compact_boundary_marks_the_next_call(tmp_path):
    lines = session_lines()
    boundary = {
        "type": "system",
        "subtype": "compact_boundary",
        "content": "Conversation compacted",
        "compactMetadata": {"trigger": "auto", "preTokens": 16300},
        "session_id": lines[0]["session_id"],
    }
    at = next(i for i, x in enumerate(lines) if x.get("message", {}).get("id") == "msg_01D")
    path = write(tmp_path / "s.jsonl", [*lines[:at], boundary, *lines[at:]])
    [(_, [record])] = read_claude_code([path])
    assert [c.compacted for c in record.trace.llm_calls] == [False, False, False, True, False]


def test_the_context_command_prints_one_row_per_attempt(tmp_path, capsys):
    meta = RunMeta(run_id="r", provider="reference", model="reference")
    folder = RunStore.write_records(tmp_path, meta, [attempt("t", [10, 30, 20], {3})])
    assert load(folder).llm_calls.get_column("compacted").to_list() == [None, None, True]
    assert main(["context", str(folder), "--json"]) == 0
    row = json.loads(capsys.readouterr().out)
    assert (row["peak_context"], row["drop_calls"], row["tokens_reread"]) == (30, [3], 60)
