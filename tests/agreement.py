"""Assert that evalnb's figures equal the reference's (``tests/reference``), figure by figure.

:func:`assert_agrees` checks the tables, ``summary``, ``by_category``,
``context_growth``, ``interaction`` (every command and a pattern; per attempt, run and
subcommand), ``friction``, ``compare`` for every pair of runs sharing a task, and
``compare_guidance``. Integers, strings, booleans and nulls must be equal; floats equal
to 1e-9 relative (sums and means may add in another order). A failure names the figure,
the key and both values.
"""

from __future__ import annotations

import math
import warnings
from itertools import combinations
from typing import Any

import polars as pl

import evalnb as en
from evalnb._analysis.runs import Runs
from tests.reference import attempt, pairs
from tests.reference import runs as reference
from tests.reference.folder import Run

CALL_FIGURES = (
    "input_tokens",
    "output_tokens",
    "cache_read_tokens",
    "cache_write_tokens",
    "cumulative_input",
    "latency_ms",
    "tool_calls_made",
)
"""The llm_calls figures compared (with ``stop_reason`` where a path keeps it)."""
TOOL_CALL_FIGURES = ("call_number", "commands", "stdout", "stderr", "exit_code", "timed_out")
"""The tool_calls figures compared."""
BASH_PATTERN = r"(?:cat|grep)\s+(\S+)"
"""A pattern for the bash tasks' commands (group 1: the first argument)."""


def same(got: Any, want: Any) -> bool:
    """Equal, floats to 1e-9 relative."""
    if isinstance(want, float) and isinstance(got, int | float) and not isinstance(got, bool):
        return math.isclose(got, want, rel_tol=1e-9, abs_tol=1e-12)
    return (type(got) is type(want) and got == want) or (got is None and want is None)


def check(what: str, key: Any, got: dict[str, Any], want: dict[str, Any]) -> None:
    """Every figure of ``want`` equals ``got``'s."""
    wrong = {f: (got.get(f, "<missing>"), w) for f, w in want.items() if not same(got.get(f), w)}
    assert not wrong, f"{what} {key}: evalnb, reference = {wrong}"


def check_keys(what: str, got: dict[Any, Any], want: dict[Any, Any]) -> None:
    assert set(got) == set(want), (
        f"{what}: rows {sorted(map(str, got))} != {sorted(map(str, want))}"
    )
    for key, figures in want.items():
        check(what, key, got[key], figures)


def rows_by(frame: pl.DataFrame, key: list[str]) -> dict[Any, dict[str, Any]]:
    out = {}
    for row in frame.iter_rows(named=True):
        k = tuple(row[c] for c in key)
        out[k[0] if len(k) == 1 else k] = row
    return out


def assert_agrees(runs: Runs, folders: list[Run], *, lost: tuple[str, ...] = ()) -> None:
    """evalnb's figures of ``runs`` equal the reference's of the same runs' folders;
    the ``lost`` llm_calls figures (a format without them) are null instead."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # no price for the played models
        assert_tables(runs, folders, lost)
        assert_run_figures(runs, folders)
        assert_interaction(runs, folders)
        assert_comparisons(runs, folders)


def assert_tables(runs: Runs, folders: list[Run], lost: tuple[str, ...] = ()) -> None:
    """The tasks, llm_calls, tool_calls and checks tables, row by row (``lost`` as for
    :func:`assert_agrees`)."""
    want_tasks = {(r["run_id"], r["task_id"], r["epoch"]): r for r in reference.tasks(folders)}
    got_tasks = rows_by(runs.tasks, ["run_id", "task_id", "epoch"])
    figures = {
        k: {f: v[f] for f in ["model", *attempt.TASK_FIGURES]} for k, v in want_tasks.items()
    }
    check_keys("tasks", got_tasks, figures)
    calls, tools, checks = {}, {}, {}
    for run in folders:
        for record in run.records:
            key = (run.run_id, record["task"]["id"], record["epoch"])
            for c in attempt.llm_calls(record):
                figures = (*CALL_FIGURES, "stop_reason")
                calls[(*key, c["call_number"])] = {f: None if f in lost else c[f] for f in figures}
            for c in attempt.tool_calls(record):
                tools[(*key, c["call_index"])] = {f: c[f] for f in TOOL_CALL_FIGURES}
            checks[key] = {
                "rows": [
                    (r["layer"], r["check"], r["kind"], r["passed"], r["weight"])
                    for r in attempt.checks(record)
                ]
            }
    check_keys(
        "llm_calls", rows_by(runs.llm_calls, ["run_id", "task_id", "epoch", "call_number"]), calls
    )
    check_keys(
        "tool_calls", rows_by(runs.tool_calls, ["run_id", "task_id", "epoch", "call_index"]), tools
    )
    got_checks: dict[Any, dict[str, Any]] = {k: {"rows": []} for k in checks}
    for r in runs.checks.iter_rows(named=True):
        got_checks[(r["run_id"], r["task_id"], r["epoch"])]["rows"].append(
            (r["layer"], r["check"], r["kind"], r["passed"], r["weight"])
        )
    check_keys("checks", got_checks, checks)


def assert_run_figures(runs: Runs, folders: list[Run]) -> None:
    """summary, by_category, context_growth (per task, run and model) and friction."""
    check_keys("summary", rows_by(en.summary(runs), ["run_id"]), reference.summary(folders))
    check_keys(
        "by_category",
        rows_by(en.by_category(runs), ["run_id", "category"]),
        reference.by_category(folders),
    )
    for by, key in (
        ("task", ["run_id", "task_id", "epoch"]),
        ("run", ["run_id"]),
        ("model", ["model"]),
    ):
        check_keys(
            f"context_growth by {by}",
            rows_by(en.context_growth(runs, by=by), key),  # type: ignore[arg-type]
            reference.context_growth(folders, by),
        )
    check_keys(
        "friction", rows_by(en.friction(runs), ["run_id", "signal"]), reference.friction(folders)
    )


def assert_interaction(runs: Runs, folders: list[Run]) -> None:
    """Spec 002 layer 1, with every command and with a pattern, per attempt, run and
    subcommand."""
    for pattern in (None, BASH_PATTERN):
        for by, key in (
            ("task", ["run_id", "task_id", "epoch"]),
            ("run", ["run_id"]),
            ("subcommand", ["run_id", "subcommand"]),
        ):
            check_keys(
                f"interaction by {by} with pattern {pattern}",
                rows_by(en.interaction(runs, pattern, by=by), key),  # type: ignore[arg-type]
                reference.interaction(folders, pattern, by),
            )


def assert_comparisons(runs: Runs, folders: list[Run]) -> None:
    """compare for every pair of runs sharing a task (both ways of counting errored
    attempts), and compare_guidance's point figures."""
    by_id = {r.run_id: r for r in folders}
    for a, b in combinations(sorted(by_id), 2):
        ids = [{row["task"]["id"] for row in by_id[r].records} for r in (a, b)]
        if not ids[0] & ids[1]:
            continue
        for include_errored in (False, True):
            want = pairs.compare(by_id[a], by_id[b], include_errored=include_errored)
            try:
                got = en.compare(runs, a, b, include_errored=include_errored)
            except ValueError as exc:  # every shared task errored on one side
                assert want["tasks"] == 0, f"compare {a} {b}: {exc}"
                continue
            check("compare", (a, b, include_errored), vars(got), want)
    guidance = en.compare_guidance(runs)
    want = pairs.compare_guidance(folders)
    check_keys(
        "compare_guidance summary",
        rows_by(guidance.summary, ["model", "guidance"]),
        want["summary"],
    )
    check_keys(
        "compare_guidance per_task",
        rows_by(guidance.per_task, ["model", "guidance", "task_id"]),
        want["per_task"],
    )
    got_pairs = rows_by(guidance.paired, ["model", "version_a", "version_b", "metric"])
    for key, row in got_pairs.items():
        check("compare_guidance paired", key, row, want["paired"][key])
    listed = {(m, frozenset((a, b))) for (m, a, b, _) in got_pairs}
    expected = {(m, frozenset((a, b))) for (m, a, b, _) in want["paired"]}
    assert listed == expected, f"compare_guidance pairs: {listed} != {expected}"


def assert_inspect_keeps(runs: Runs, source: Run) -> None:
    """An Inspect log read from Inspect's own fields alone keeps exactly this of the run
    it was written from, and has nothing (null) where it cannot say:

    - per LLM call: the token counts of a call whose input and output counts are both
      known (Inspect's usage cannot hold a null), spec 003's figures from them;
    - per attempt: its calls, turns, ending and error, and the token totals those calls
      give; its tool calls' commands, and their exit codes where not 0 (a result says
      ``Exit code: N`` only then: a 0 is unknown);
    - one check per check, passed when it passed (``I`` failed and ``N`` not run both
      read as not passed: Inspect's values say no more).
    """
    got_calls = rows_by(runs.llm_calls, ["task_id", "epoch", "call_number"])
    got_tasks = rows_by(runs.tasks, ["task_id", "epoch"])
    got_tools = rows_by(runs.tool_calls, ["task_id", "epoch", "call_index"])
    for record in source.records:
        key = (record["task"]["id"], record["epoch"])
        kept = []
        for call in attempt.llm_calls(record):
            both = call["input_tokens"] is not None and call["output_tokens"] is not None
            fields = ("input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens")
            kept.append({f: call[f] if both else None for f in fields})
        native = {**record, "trace": {**record["trace"], "llm_calls": []}}
        native["trace"]["llm_calls"] = [
            {**c, **k} for c, k in zip(attempt.llm_calls(record), kept, strict=True)
        ]
        row = attempt.task_row(source.info, native)
        counted = any(k["input_tokens"] is not None for k in kept)
        want = {
            f: row[f]
            for f in (
                "llm_call_count",
                "base_context",
                "context_growth_avg",
                "final_cumulative_input",
                "natural_stop",
                "error",
                "tool_call_count",
            )
        }
        want["turns"] = len(kept)
        for total, part in (
            ("total_input_tokens", "input_tokens"),
            ("total_output_tokens", "output_tokens"),
        ):
            want[total] = (
                sum(k[part] for k in kept if k[part] is not None)
                if counted
                else record["trace"][total]
            )
        check("Inspect fields: tasks", key, got_tasks[key], want)
        for call in attempt.llm_calls(native):
            figures = {f: call[f] for f in (*kept[0], "cumulative_input")} if kept else {}
            check(
                "Inspect fields: llm_calls",
                (*key, call["call_number"]),
                got_calls[(*key, call["call_number"])],
                figures,
            )
        for call in attempt.tool_calls(record):
            code = call["exit_code"] if call["exit_code"] != 0 else None
            got = got_tools[(*key, call["call_index"])]
            check(
                "Inspect fields: tool_calls",
                (*key, call["call_index"]),
                got,
                {"commands": call["commands"], "exit_code": code},
            )
        verdicts = [r["passed"] is True for r in attempt.checks(record)]
        mine = runs.checks.filter(task_id=key[0], epoch=key[1]).get_column("passed").to_list()
        assert sorted(mine) == sorted(verdicts), (
            f"Inspect fields: checks {key}: {mine} != {verdicts}"
        )


def renamed(run: Run, runs: Runs) -> Run:
    """``run`` under the run id the one run of ``runs`` has (a format that names runs its
    own way, as a Harbor job does)."""
    [run_id] = runs.runs.get_column("run_id").to_list()
    return Run({**run.info, "run_id": run_id}, run.records)


def assert_otel_keeps(runs: Runs, source: Run) -> None:
    """OTel spans read back keep exactly this of the run they were written from, and have
    nothing (null) where spans cannot say:

    - per LLM call (a ``chat`` span): its token counts, cache parts, running total and
      the tool calls it asked for; spec 003's figures from them;
    - per attempt: its calls, turns and ending, whether it errored, and its tool calls'
      commands and exit codes; token totals and cache parts summed over the calls that
      report them (null when none does: a log's unrecorded count is null);
    - no verdict: ``passed``, checks, outcome and the scenario layers are null.
    """
    got_tasks = rows_by(runs.tasks, ["task_id", "epoch"])
    got_calls = rows_by(runs.llm_calls, ["task_id", "epoch", "call_number"])
    got_tools = rows_by(runs.tool_calls, ["task_id", "epoch", "call_index"])
    assert runs.checks.height == 0, "OTel spans carry no check"
    for record in source.records:
        key = (record["task"]["id"], record["epoch"])
        row = attempt.task_row(source.info, record)
        calls = attempt.llm_calls(record)
        want = {f: row[f] for f in SPAN_FIGURES}
        for name in ("input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens"):
            known = [c[name] for c in calls if c[name] is not None]
            total = name if name.startswith("cache") else f"total_{name}"
            want[total] = sum(known) if known else None
        want |= dict.fromkeys(["passed", "outcome", "gates_passed", "gates_total"])
        check("OTel: tasks", key, got_tasks[key], want)
        assert (got_tasks[key]["error"] is None) == (record["error"] is None), key
        for c in calls:
            figures = {f: c[f] for f in CALL_FIGURES if f != "latency_ms"}
            check(
                "OTel: llm_calls",
                (*key, c["call_number"]),
                got_calls[(*key, c["call_number"])],
                figures,
            )
        for c in attempt.tool_calls(record):
            figures = {"commands": c["commands"], "exit_code": c["exit_code"]}
            check(
                "OTel: tool_calls",
                (*key, c["call_index"]),
                got_tools[(*key, c["call_index"])],
                figures,
            )


SPAN_FIGURES = [
    "llm_call_count",
    "turns",
    "base_context",
    "context_growth_avg",
    "final_cumulative_input",
    "natural_stop",
    "tool_call_count",
    "tool_calls_ok",
    "tool_calls_error",
]
"""The tasks figures OTel spans keep exactly (see :func:`assert_otel_keeps`)."""


ONETOOL_TASK_FIGURES = (
    "category",
    "turns",
    "llm_call_count",
    "tool_call_count",
    "total_input_tokens",
    "total_output_tokens",
    "duration_ms",
    "base_context",
    "context_growth_avg",
    "passed",
)
"""The tasks figures an onetool-mcp bench row holds (see :func:`assert_onetool_keeps`)."""
ONETOOL_SUMMARY = (
    "total_tasks",
    "distinct_tasks",
    "total_passed",
    "errored_tasks",
    "total_tool_calls",
    "total_turns",
    "total_input_tokens",
    "total_output_tokens",
    "total_duration_ms",
    "pass_rate",
    "avg_turns_per_task",
    "avg_tool_calls_per_task",
    "avg_duration_ms",
)
"""The summary figures those give (the others need tool-call exit codes or checks)."""


def assert_onetool_keeps(runs: Runs, views: list[Run], stem: str) -> None:
    """An onetool-mcp bench CSV (file name ``stem``) written from ``views``' attempts
    (one run each, distinct models) keeps exactly this of them, and has nothing (null)
    where a row cannot say:

    - per attempt, under ``<category>/<task id>`` and the n-th repeat of it in the run as
      its epoch: :data:`ONETOOL_TASK_FIGURES`, whether it errored, one ``result`` check
      with its verdict (none when it errored); no tool-call exit code, cache part, running
      total or ending (``tool_calls_ok``, ``tool_calls_error``, ``cache_read_tokens``,
      ``cache_write_tokens``, ``final_cumulative_input``, ``natural_stop`` null), no call;
    - per run (``<stem>-<model>``): :data:`ONETOOL_SUMMARY` and spec 003's context growth
      but the running total.
    """
    assert runs.llm_calls.height == runs.tool_calls.height == 0, "a bench row holds no call"
    renamed_views = []
    tasks: dict[Any, dict[str, Any]] = {}
    checks: dict[Any, list[tuple[str, bool | None]]] = {}
    for view in views:
        run_id = f"{stem}-{view.model}"
        records = []
        for record in view.records:
            row = attempt.task_row(view.info, record)
            task_id = f"{row['category']}/{row['task_id']}"
            epoch = 1 + sum(r["task"]["id"] == record["task"]["id"] for r in records)
            records.append({**record, "epoch": epoch})
            key = (run_id, task_id, epoch)
            tasks[key] = {f: row[f] for f in ONETOOL_TASK_FIGURES}
            tasks[key] |= dict.fromkeys(
                ["tool_calls_ok", "tool_calls_error", "cache_read_tokens", "cache_write_tokens"]
            )
            tasks[key] |= {"final_cumulative_input": None, "natural_stop": None}
            tasks[key]["errored"] = row["error"] is not None
            checks[key] = [] if row["error"] is not None else [("result", row["passed"])]
        renamed_views.append(Run({**view.info, "run_id": run_id}, records))
    assert_attempts_keep("onetool", runs, tasks, checks)
    assert_summary_keeps("onetool", runs, renamed_views, ONETOOL_SUMMARY)
    unknown = dict.fromkeys(["final_cumulative_input_mean", "final_cumulative_input_median"])
    check_keys(
        "onetool: context_growth by run",
        rows_by(en.context_growth(runs, by="run"), ["run_id"]),
        {k: v | unknown for k, v in reference.context_growth(renamed_views, "run").items()},
    )


MIRA_TASK_FIGURES = (
    "turns",
    "tool_call_count",
    "tool_calls_ok",
    "tool_calls_error",
    "natural_stop",
    "total_input_tokens",
    "total_output_tokens",
    "duration_ms",
    "passed",
)
"""The tasks figures a mira case holds as they are (see :func:`assert_mira_keeps`)."""
MIRA_SUMMARY = (
    *(f for f in ONETOOL_SUMMARY if f != "distinct_tasks"),
    "distinct_tasks",
    "tool_calls_ok",
    "tool_calls_error",
    "tool_call_success_rate",
    "natural_stop_rate",
)
"""The summary figures those give (the scores are mira's one per case)."""


def assert_mira_keeps(runs: Runs, views: list[Run], run_id: str, eval_name: str) -> None:
    """A mira run folder (meta run id ``run_id``) written from ``views`` (bash runs of
    distinct models, every attempt one case of eval ``eval_name``) keeps exactly this
    of them, and has nothing (null) where a case cannot say:

    - per attempt, as run ``<run_id>-<eval>-<provider>_<model>``, the task id and the
      epoch: :data:`MIRA_TASK_FIGURES`, whether it errored, the cache reads (a 0 is not
      written: null), its tool calls (commands, stdout, stderr, exit code); its category
      is the eval; one check, bashkit's, passed when every check passed, scored the
      weighted rate of 1 (none when the work never ran); its LLM calls' count (mira's
      iterations) but no call, so no spec 003 figure or cache write;
    - per run: :data:`MIRA_SUMMARY` and the interaction metrics (every command and a
      pattern, per attempt and run).
    """
    assert runs.llm_calls.height == 0, "a mira case holds no LLM call"
    renamed_views, tasks, tools, checks = [], {}, {}, {}
    for view in views:
        name = f"{run_id}-{eval_name}-{view.info['provider']}_{view.model}"
        renamed_views.append(Run({**view.info, "run_id": name}, view.records))
        for record in view.records:
            row = attempt.task_row(view.info, record)
            key = (name, row["task_id"], row["epoch"])
            never = attempt.work_never_ran(record)
            tasks[key] = {f: row[f] for f in MIRA_TASK_FIGURES} | {
                "category": eval_name,
                "errored": row["error"] is not None,
                "cache_read_tokens": row["cache_read_tokens"] or None,
                "score": 0.0 if never else row["rate"] or 0.0,
                "max_score": 0.0 if never else 1.0,
            }
            tasks[key] |= dict.fromkeys(LLM_FIGURES) | {"llm_call_count": row["llm_call_count"]}
            all_passed = all(r["passed"] is True for r in attempt.checks(record))
            checks[key] = [] if never else [("bashkit_expectations", all_passed)]
            for c in attempt.tool_calls(record):
                figures = ("commands", "stdout", "stderr", "exit_code")
                tools[(*key, c["call_index"])] = {f: c[f] for f in figures}
    assert_attempts_keep("mira", runs, tasks, checks)
    got_tools = rows_by(runs.tool_calls, ["run_id", "task_id", "epoch", "call_index"])
    check_keys("mira: tool_calls", got_tools, tools)
    assert_summary_keeps("mira", runs, renamed_views, MIRA_SUMMARY)
    for pattern in (None, BASH_PATTERN):
        for by, key in (("task", ["run_id", "task_id", "epoch"]), ("run", ["run_id"])):
            check_keys(
                f"mira: interaction by {by} with pattern {pattern}",
                rows_by(en.interaction(runs, pattern, by=by), key),  # type: ignore[arg-type]
                reference.interaction(renamed_views, pattern, by),
            )


LLM_FIGURES = (
    "llm_call_count",
    "base_context",
    "context_growth_avg",
    "final_cumulative_input",
    "cache_write_tokens",
)
"""The tasks figures counted from LLM calls that a format without calls has not."""


def assert_attempts_keep(
    what: str,
    runs: Runs,
    tasks: dict[Any, dict[str, Any]],
    checks: dict[Any, list[tuple[str, bool | None]]],
) -> None:
    """The tasks rows have the figures ``tasks`` gives per (run_id, task_id, epoch)
    (``errored``: whether ``error`` is set), and their checks the (check, passed) pairs
    of ``checks``, in order."""
    got = rows_by(
        runs.tasks.with_columns(errored=pl.col("error").is_not_null()),
        ["run_id", "task_id", "epoch"],
    )
    check_keys(f"{what}: tasks", got, tasks)
    got_checks: dict[Any, list[tuple[str, bool | None]]] = {k: [] for k in tasks}
    for r in runs.checks.iter_rows(named=True):
        got_checks[(r["run_id"], r["task_id"], r["epoch"])].append((r["check"], r["passed"]))
    assert got_checks == checks, f"{what}: checks {got_checks} != {checks}"


def assert_summary_keeps(
    what: str, runs: Runs, folders: list[Run], figures: tuple[str, ...]
) -> None:
    """``summary``'s ``figures`` equal the reference's of ``folders``."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # no price for the played models
        got = en.summary(runs)
    want = reference.summary(folders)
    check_keys(
        f"{what}: summary",
        rows_by(got, ["run_id"]),
        {k: {f: v[f] for f in figures} for k, v in want.items()},
    )


LLM_TOOL_TEST_TASK_FIGURES = (
    "duration_ms",
    "passed",
    "outcome",
    "gates_passed",
    "gates_total",
    "judge_score",
    "composite_score",
)
"""The tasks figures an llm-tool-test result record holds (see
:func:`assert_llm_tool_test_keeps`)."""
LLM_TOOL_TEST_SUMMARY = (
    "total_tasks",
    "distinct_tasks",
    "total_passed",
    "errored_tasks",
    "pass_rate",
    "total_duration_ms",
    "avg_duration_ms",
    "outcome_pass_rate",
    "gate_pass_rate",
    "gates_passed",
    "gates_total",
    "judge_scored",
    "judge_score_mean",
    "composite_score_mean",
)
"""The summary figures those give: spec 002's layers, and no tool call, token or turn."""


def assert_llm_tool_test_keeps(runs: Runs, views: list[Run], names: list[str]) -> None:
    """llm-tool-test ``results.jsonl`` files, one per run of ``views``
    (:func:`~tests.foreign_writers.llm_tool_test_view`) named ``names`` (the files'
    stems), keep exactly this of them, and have nothing (null) where a record cannot say:

    - per attempt, as run ``<name>-<provider>-<model>``, the scenario id and its n-th
      record as epoch: :data:`LLM_TOOL_TEST_TASK_FIGURES`, whether it errored (no
      scenario result then), its category ``llm-tool-test``; one check per gate, named by
      its kind (a gate's own text is not written), passed as it passed (a gate that never
      ran as not passed: a record's verdict is a boolean), the score its passed gates (a
      gate weighs 1; the judge is a score, not a check); no LLM or tool call (empty
      tables), token count or ending (``natural_stop`` null: no field says how the agent
      ended);
    - per run: :data:`LLM_TOOL_TEST_SUMMARY`.
    """
    assert runs.llm_calls.height == runs.tool_calls.height == 0, "a record holds no call"
    renamed_views, tasks, checks = [], {}, {}
    for view, stem in zip(views, names, strict=True):
        name = f"{stem}-{view.info['provider']}-{view.model}"
        renamed_views.append(Run({**view.info, "run_id": name}, view.records))
        for record in view.records:
            row = attempt.task_row(view.info, record)
            key = (name, row["task_id"], row["epoch"])
            gates = [r for r in attempt.checks(record) if r["layer"] == "gate"]
            checks[key] = [(g["kind"], g["passed"] is True) for g in gates]
            tasks[key] = {f: row[f] for f in LLM_TOOL_TEST_TASK_FIGURES} | {
                "category": "llm-tool-test",
                "errored": row["error"] is not None,
                "natural_stop": None,
                "total_input_tokens": None,
                "total_output_tokens": None,
                "score": float(sum(passed for _, passed in checks[key])),
                "max_score": float(len(gates)),
            }
    assert_attempts_keep("llm-tool-test", runs, tasks, checks)
    assert_summary_keeps("llm-tool-test", runs, renamed_views, LLM_TOOL_TEST_SUMMARY)


CLAUDE_CODE_TASK_FIGURES = (
    "turns",
    "llm_call_count",
    "tool_call_count",
    "tool_calls_ok",
    "tool_calls_error",
    "natural_stop",
    "total_input_tokens",
    "total_output_tokens",
    "duration_ms",
    "base_context",
    "context_growth_avg",
    "final_cumulative_input",
    "cache_read_tokens",
    "cache_write_tokens",
)
"""The tasks figures a Claude Code stream-json file holds (see
:func:`assert_claude_code_keeps`)."""


def assert_claude_code_keeps(runs: Runs, source: Run, epoch: int) -> None:
    """Claude Code stream-json files written from ``source``'s attempts of ``epoch`` (one
    file per task, read together as one run) keep exactly this of them:

    - per attempt: :data:`CLAUDE_CODE_TASK_FIGURES` and whether it errored; no check
      (no ``--target``), so no verdict (``passed`` null; false when errored: an errored
      attempt counts as failed);
    - per LLM call: its token counts, cache parts, running total, stop reason and the tool
      calls it asked for (no latency);
    - per tool call: its commands, stdout, stderr and exit code, a negative one read as 1
      (``Exit code N`` states only digits: an error without one is exit 1); no time-out.
    """
    [run_id] = runs.runs.get_column("run_id").to_list()
    assert runs.checks.height == 0, "claude -p without --target has no check"
    tasks, calls, tools = {}, {}, {}
    for record in source.records:
        if record["epoch"] != epoch:
            continue
        row = attempt.task_row(source.info, record)
        task = row["task_id"]
        tasks[task] = {f: row[f] for f in CLAUDE_CODE_TASK_FIGURES}
        errored = row["error"] is not None
        tasks[task] |= {"errored": errored, "passed": False if errored else None}
        for c in attempt.llm_calls(record):
            figures = (*CALL_FIGURES, "stop_reason")
            calls[(task, c["call_number"])] = {f: c[f] for f in figures if f != "latency_ms"}
        for c in attempt.tool_calls(record):
            figures = {f: c[f] for f in ("commands", "stdout", "stderr")}
            code = c["exit_code"]
            tools[(task, c["call_index"])] = figures | {"exit_code": 1 if code < 0 else code}
    got = runs.tasks.with_columns(errored=pl.col("error").is_not_null())
    check_keys(f"claude-code {run_id}: tasks", rows_by(got, ["task_id"]), tasks)
    got_calls = rows_by(runs.llm_calls, ["task_id", "call_number"])
    check_keys(f"claude-code {run_id}: llm_calls", got_calls, calls)
    got_tools = rows_by(runs.tool_calls, ["task_id", "call_index"])
    check_keys(f"claude-code {run_id}: tool_calls", got_tools, tools)
