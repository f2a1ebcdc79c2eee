"""Run folders an older evalnb wrote load from their parquet, with today's figures.

Before ``attempt_key`` and ``cache_write_tokens`` existed, evalnb wrote complete run
folders whose parquet tables lack those columns (and others added since, such as
``invocations_recorded`` and the ``tool_invocations`` table), whose LLM-call table
names cache writes ``cache_creation_tokens``, and whose Anthropic ``input_tokens``
were the uncached part only. Such a folder is read from its parquet, lazily, without
a warning: ``attempt_key`` is derived, the token counts are brought to today's
meaning and any other column it lacks is a typed null ("not recorded"). It gives the
same summary, context growth and cost as the same run rebuilt from its events, as
the folder today's evalnb writes, and from a URL. Only a table lacking a key column
(``run_id``, ``model``, ``task_id``, ``epoch``) is rebuilt from the events instead.
"""

from __future__ import annotations

import json
import shutil
import warnings
from pathlib import Path

import fsspec
import polars as pl
import pytest
from polars.testing import assert_frame_equal

import evalnb as en
from evalnb.analysis.cost import run_costs, task_cost
from evalnb.analysis.runs import Runs
from evalnb.errors import InputError
from evalnb.formats.claude_code import read_claude_code
from evalnb.records import (
    AgentTrace,
    LLMCall,
    RunMeta,
    ScoreResult,
    Task,
    TaskRecord,
    TaskScore,
    ToolCallResult,
    cumulative_inputs,
)
from evalnb.store import RunStore
from evalnb.store.command_counts import COUNTS
from evalnb.store.tables import KEYS, SCHEMAS, TABLES, with_llm_call_figures

from .conftest import ROOT

CLAUDE_CODE_SESSION = ROOT.parent / "shared" / "fixtures" / "claude-code" / "fn-10-vep.48.jsonl"

ADDED_SINCE = {
    "tasks": [
        "outcome",
        "outcome_reason",
        "gates_passed",
        "gates_total",
        "judge_score",
        "judge_model",
        "composite_score",
        "interaction_score",
        *COUNTS,
    ],
    "tool_calls": ["invocations_recorded"],
}
"""Columns an older evalnb did not write and nothing stored gives: null on loading."""

SUMMED_SINCE = ["llm_call_count", "final_cumulative_input", "cache_read_tokens"]
SUMMED_SINCE += ["cache_write_tokens", "tool_calls_error"]
"""Task columns an older evalnb did not write, summed from the call rows on loading."""


def _attempt(
    task_id: str, epoch: int, prompt_tokens: list[int], unknown_input: int | None = None
) -> TaskRecord:
    """An Anthropic attempt: call 1 writes its prompt to the cache, later calls read it.
    Call ``unknown_input`` has no input count (its cache counts are known)."""
    calls = []
    inputs = [None if n == unknown_input else w for n, w in enumerate(prompt_tokens, start=1)]
    for n, (whole, cumulative) in enumerate(
        zip(prompt_tokens, cumulative_inputs(inputs), strict=True), start=1
    ):
        known = n != unknown_input
        read = prompt_tokens[n - 2] if n > 1 else 0
        calls.append(
            LLMCall(
                call_number=n,
                input_tokens=whole if known else None,
                output_tokens=40 + n,
                cache_read_tokens=read,
                cache_write_tokens=whole - read - 3,
                cumulative_input=cumulative,
                latency_ms=800.0 + n,
                tool_calls_made=1,
                stop_reason="tool_use",
            )
        )
    tools = [
        ToolCallResult(
            commands=f"grep -c x /data/{task_id}/{i}",
            stdout=f"{i} lines",
            exit_code=i % 2,
            call_index=i,
            call_number=i + 1,
        )
        for i in range(len(prompt_tokens))
    ]
    passed = epoch == 1
    trace = AgentTrace(
        tool_calls=tools,
        llm_calls=calls,
        turns=len(calls),
        natural_stop=True,
        total_input_tokens=sum(c.input_tokens or 0 for c in calls),
        total_output_tokens=sum(c.output_tokens or 0 for c in calls),
    )
    check = ScoreResult(check="stdout_contains", passed=passed, weight=1.0)
    score = TaskScore(task_id=task_id, score=float(passed), max_score=1.0, results=[check])
    return TaskRecord(
        task=Task(id=task_id, category="files", prompt="count the lines"),
        epoch=epoch,
        trace=trace,
        score=score,
    )


def _hand_built_run(root: Path, unknown_input: int | None = None) -> Path:
    """A complete Anthropic run of three tasks, two epochs each, that cached its prompts
    (task t1's call ``unknown_input`` without an input count)."""
    meta = RunMeta(run_id="r-cached", provider="anthropic", model="claude-haiku-4-5")
    meta.status = "complete"
    records = [
        _attempt(
            f"t{i}",
            epoch,
            [12_000 + 100 * i, 12_900 + 100 * i, 14_100 + 50 * epoch],
            unknown_input if i == 1 else None,
        )
        for i in range(3)
        for epoch in (1, 2)
    ]
    return RunStore.write_records(root, meta, records)


def _claude_code_run(root: Path) -> Path:
    """A real Claude Code session (1.09M cache-read tokens) imported as a run folder."""
    if not CLAUDE_CODE_SESSION.is_file():
        pytest.skip("../shared/fixtures/claude-code is absent")
    [(meta, records)] = read_claude_code([CLAUDE_CODE_SESSION])
    return RunStore.write_records(root, meta, records)


@pytest.fixture(params=["hand-built", "claude-code"])
def today(request, tmp_path: Path) -> Path:
    """A complete run folder as today's evalnb writes it."""
    build = _hand_built_run if request.param == "hand-built" else _claude_code_run
    return build(tmp_path / "today")


def _as_an_older_evalnb_wrote(folder: Path, to: Path) -> Path:
    """A copy of ``folder`` as evalnb wrote it before ``attempt_key`` and
    ``cache_write_tokens``: legacy cache column name, Anthropic ``input_tokens`` the
    uncached part (and the totals and growth figures derived from it), fewer columns."""
    old = shutil.copytree(folder, to / folder.name)
    lines = []
    for line in (old / "events.jsonl").read_text().splitlines():
        event = json.loads(line)
        if event["event"] == "task_finished":
            trace = event["record"]["trace"]
            cumulative = cached_total = 0
            for call in trace["llm_calls"]:
                call["cache_creation_tokens"] = call.pop("cache_write_tokens")
                if call["input_tokens"] is None:  # unknown: an older evalnb kept the sum
                    call["cumulative_input"] = cumulative
                    continue
                cached = (call["cache_read_tokens"] or 0) + (call["cache_creation_tokens"] or 0)
                cached_total += cached
                call["input_tokens"] -= cached
                cumulative += call["input_tokens"]
                call["cumulative_input"] = cumulative
            trace["total_input_tokens"] -= cached_total
        lines.append(json.dumps(event))
    (old / "events.jsonl").write_text("\n".join(lines) + "\n")

    cached = pl.col("cache_read_tokens").fill_null(0) + pl.col("cache_write_tokens").fill_null(0)
    cached = pl.when(pl.col("input_tokens").is_not_null()).then(cached).otherwise(0)
    calls = (
        pl.read_parquet(old / "llm_calls.parquet")
        .sort([*KEYS, "call_number"])
        .with_columns(pl.col("input_tokens") - cached, cached.alias("_cached"))
        .with_columns(pl.col("input_tokens").cum_sum().over(KEYS).alias("cumulative_input"))
    )
    tasks = (
        pl.read_parquet(old / "tasks.parquet")
        .join(calls.group_by(KEYS).agg(pl.col("_cached").sum()), on=KEYS, maintain_order="left")
        .with_columns(pl.col("total_input_tokens") - pl.col("_cached"))
        .drop("_cached")
    )
    calls = calls.drop("_cached")
    tasks = with_llm_call_figures(tasks, calls).drop(SUMMED_SINCE)  # base_context, growth kept
    calls = calls.rename({"cache_write_tokens": "cache_creation_tokens"})
    tables = {"tasks": tasks, "llm_calls": calls}
    for name in TABLES[1:]:
        if name == "tool_invocations":
            (old / f"{name}.parquet").unlink()
            continue
        frame = tables.get(name, pl.read_parquet(old / f"{name}.parquet"))
        frame.drop("attempt_key", *ADDED_SINCE.get(name, [])).write_parquet(old / f"{name}.parquet")
    return old


def _figures(runs: Runs) -> dict[str, pl.DataFrame]:
    """Summary, per-task context growth, cost and the interaction counts (which an older
    folder did not store: they are counted from its tool calls)."""
    return {
        "summary": en.summary(runs),
        "interaction": en.interaction(runs).sort("task_id", "epoch"),
        "context_growth": en.context_growth(runs).sort("task_id", "epoch"),
        "task_cost": task_cost(runs).sort("task_id", "epoch"),
        "run_costs": run_costs(runs).collect(),
    }


def _same_figures(a: Runs, b: Runs) -> None:
    fa, fb = _figures(a), _figures(b)
    for name in fa:
        assert_frame_equal(fa[name], fb[name], check_column_order=False), name


def _quietly(load):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        return load()


def test_an_older_folder_really_lacks_todays_columns(today: Path, tmp_path: Path):
    old = _as_an_older_evalnb_wrote(today, tmp_path)
    calls = pl.read_parquet_schema(old / "llm_calls.parquet")
    assert "cache_creation_tokens" in calls
    assert not {"cache_write_tokens", "attempt_key"} & set(calls)
    stored_tasks = set(pl.read_parquet_schema(old / "tasks.parquet"))
    assert not {*ADDED_SINCE["tasks"], *SUMMED_SINCE, "attempt_key"} & stored_tasks
    assert {"base_context", "context_growth_avg"} <= stored_tasks
    assert not (old / "tool_invocations.parquet").exists()
    old_input = pl.read_parquet(old / "llm_calls.parquet").get_column("input_tokens").sum()
    new_input = pl.read_parquet(today / "llm_calls.parquet").get_column("input_tokens").sum()
    assert old_input < new_input  # Anthropic's old input_tokens left the cache out


def test_an_older_folder_loads_from_its_parquet_with_todays_figures_and_no_warning(
    today: Path, tmp_path: Path
):
    old = _as_an_older_evalnb_wrote(today, tmp_path)
    events_only = shutil.copytree(old, tmp_path / "events-only" / old.name)
    for name in TABLES[1:]:
        (events_only / f"{name}.parquet").unlink(missing_ok=True)

    loaded = _quietly(lambda: en.load(old))
    with pytest.warns(UserWarning, match=r"tasks\.parquet: missing; tables rebuilt"):
        rebuilt = en.load(events_only)

    _same_figures(loaded, rebuilt)
    _same_figures(loaded, _quietly(lambda: en.load(today)))
    assert loaded.llm_calls.get_column("cache_write_tokens").null_count() == 0


def test_an_older_folder_gets_todays_tokens_per_call_and_task(today: Path, tmp_path: Path):
    runs = _quietly(lambda: en.load(_as_an_older_evalnb_wrote(today, tmp_path)))
    intact = en.load(today)
    call_columns = [*KEYS, "call_number", "input_tokens", "cache_read_tokens"]
    call_columns += ["cache_write_tokens", "cumulative_input"]
    order = ["task_id", "epoch", "call_number"]
    assert_frame_equal(
        runs.llm_calls.select(call_columns).sort(order),
        intact.llm_calls.select(call_columns).sort(order),
    )
    task_columns = [*KEYS, "total_input_tokens", "base_context", "context_growth_avg"]
    task_columns += SUMMED_SINCE
    assert_frame_equal(
        runs.tasks.select(task_columns).sort("task_id", "epoch"),
        intact.tasks.select(task_columns).sort("task_id", "epoch"),
    )


def test_a_call_without_an_input_count_reads_the_same_from_parquet_and_events(tmp_path: Path):
    # its cache counts are known, but with no prompt count nothing is added for it
    today = _hand_built_run(tmp_path / "today", unknown_input=2)
    old = _as_an_older_evalnb_wrote(today, tmp_path)
    events_only = shutil.copytree(old, tmp_path / "events-only" / old.name)
    for name in TABLES[1:]:
        (events_only / f"{name}.parquet").unlink(missing_ok=True)
    with pytest.warns(UserWarning, match="rebuilt"):
        rebuilt = en.load(events_only)
    columns = {
        "llm_calls": [*KEYS, "call_number", "input_tokens", "cumulative_input"],
        "tasks": [*KEYS, "total_input_tokens", "final_cumulative_input"],
    }
    order = ["task_id", "epoch", "call_number"]
    for runs in (en.load(old), rebuilt):
        for name, wanted in columns.items():
            by = [c for c in order if c in wanted]
            assert_frame_equal(
                runs.frame(name).select(wanted).sort(by),
                en.load(today).frame(name).select(wanted).sort(by),
            )
    assert rebuilt.llm_calls.get_column("input_tokens").null_count() == 2


def test_attempt_keys_of_an_older_folder_number_its_attempts_as_today(today: Path, tmp_path: Path):
    runs = en.load(_as_an_older_evalnb_wrote(today, tmp_path))
    intact = en.load(today)
    for name in ("tasks", "llm_calls", "tool_calls", "checks", "messages"):
        keyed = [*KEYS, "attempt_key"]
        got = runs.frame(name).select(keyed).unique().sort(keyed)
        assert got.get_column("attempt_key").null_count() == 0, name
        assert_frame_equal(got, intact.frame(name).select(keyed).unique().sort(keyed))
    assert runs.tasks.get_column("attempt_key").n_unique() == runs.tasks.height


def test_columns_an_older_folder_lacks_are_typed_nulls(today: Path, tmp_path: Path):
    runs = en.load(_as_an_older_evalnb_wrote(today, tmp_path))
    for name, columns in ADDED_SINCE.items():
        frame = runs.frame(name)
        for column in columns:
            assert frame.schema[column] == SCHEMAS[name][column], (name, column)
            assert frame.get_column(column).null_count() == frame.height, (name, column)
    assert runs.tool_invocations.height == 0


def test_an_older_folder_stays_lazy(today: Path, tmp_path: Path):
    runs = en.load(_as_an_older_evalnb_wrote(today, tmp_path))
    en.summary(runs)
    en.context_growth(runs)
    loaded = repr(runs).split("tables loaded:")[1]
    assert "messages" not in loaded and "tool_calls" not in loaded
    assert isinstance(runs.scan("llm_calls"), pl.LazyFrame)


def test_an_older_folder_reads_the_same_from_a_url(today: Path, tmp_path: Path):
    old = _as_an_older_evalnb_wrote(today, tmp_path)
    fs = fsspec.filesystem("memory")
    prefix = f"older-{today.name}"
    for file in old.iterdir():
        fs.pipe(f"/{prefix}/{file.name}", file.read_bytes())
    from_url = _quietly(lambda: en.load(f"memory://{prefix}"))
    _same_figures(from_url, en.load(old))


def test_a_table_lacking_a_key_column_is_rebuilt_from_events_or_refused_at_a_url(
    tmp_path: Path,
):
    old = _as_an_older_evalnb_wrote(_hand_built_run(tmp_path / "today"), tmp_path)
    calls = pl.read_parquet(old / "llm_calls.parquet")
    calls.drop("task_id").write_parquet(old / "llm_calls.parquet")
    with pytest.warns(UserWarning, match=r"lacks key columns \['task_id'\]; tables rebuilt"):
        rebuilt = en.load(old)
    assert rebuilt.llm_calls.get_column("task_id").null_count() == 0
    assert rebuilt.llm_calls.height == calls.height

    fs = fsspec.filesystem("memory")
    for file in old.iterdir():
        fs.pipe(f"/keyless/{file.name}", file.read_bytes())
    with pytest.raises(InputError, match=r"llm_calls\.parquet: lacks key columns \['task_id'\]"):
        en.load("memory://keyless")
