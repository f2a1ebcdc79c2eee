"""Differential tests: every figure evalnb computes equals an independent recount.

The reference (``tests/reference``) recounts every figure from the raw ``events.jsonl``
of each run folder, in plain Python from the specs' text. Hypothesis draws random
worlds (``tests/generated_runs.py``): bash tasks and scenarios with gates, a judge and
guidance versions; several models playing repeated, failing and help-seeking commands
over epochs; provider errors, a hang cut by the time limit, a scenario whose setup
fails; null, cached and huge token counts. Each world runs through the real runner, and
its runs take every path a user's can; on each, evalnb's figures must equal the
reference's (``tests/agreement.py``). The runs are also written in the formats evalnb
imports but does not write (``tests/foreign_writers.py``: the scenario runs as
llm-tool-test ``results.jsonl`` files, the bash runs as bashkit-eval result files, Claude
Code stream-json files, an onetool-mcp bench CSV and a mira run folder) and read back,
where every figure the format holds must equal the reference's recount of what it holds.

The test command runs the fast profile (a few fixed examples); the thorough profile is
``HYPOTHESIS_PROFILE=thorough .venv/bin/python -m pytest -p no:cacheprovider
tests/test_differential.py``. Each defect of issue 25 is a named regression case below.
"""

from __future__ import annotations

import tempfile
import warnings
from pathlib import Path

import polars as pl
import pytest
from hypothesis import example, given
from hypothesis import strategies as st

import evalnb as en
from evalnb._cli import main
from evalnb._present.report import write_report
from evalnb._resources import data_path
from evalnb.errors import InputError
from evalnb.records import Task
from tests.agreement import (
    assert_agrees,
    assert_claude_code_keeps,
    assert_inspect_keeps,
    assert_llm_tool_test_keeps,
    assert_mira_keeps,
    assert_onetool_keeps,
    assert_otel_keeps,
    renamed,
)
from tests.foreign_writers import (
    MIRA_EVAL,
    MIRA_RUN,
    bashkit_eval_view,
    llm_tool_test_view,
    onetool_view,
    write_bashkit_eval,
    write_claude_code,
    write_llm_tool_test,
    write_mira,
    write_onetool_bench,
)
from tests.generated_runs import (
    FILES,
    GATES,
    World,
    exported,
    imported,
    inspect_fields_only,
    inspect_round_trip,
    replay,
    run_live,
    scenario,
    shard_and_merge,
    without_parquet,
    worlds,
)
from tests.played import PlayedAgent, Turn
from tests.reference import runs as reference
from tests.reference.folder import Run, read_run


def load(*folders):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # "rebuilt from events" and the like
        return en.load(*folders)


def same_attempts(got: Run, want: Run, ignore: tuple[str, ...] = ()) -> bool:
    """The two runs' attempts have the same figures (but ``ignore``), attempt by attempt."""

    def rows(run: Run) -> dict:
        return {
            (r["task_id"], r["epoch"]): {k: v for k, v in r.items() if k not in ignore}
            for r in reference.tasks([run])
        }

    mine, theirs = rows(got), rows(want)
    assert mine.keys() == theirs.keys()
    for key, row in theirs.items():
        differ = {k: (mine[key][k], v) for k, v in row.items() if mine[key][k] != v}
        assert not differ, f"attempt {key}: got, want = {differ}"
    return True


def check_run_folders(world: World, live: list[Path], root: Path, chosen: int) -> None:
    """The runner's own folders, loaded together, with their parquet tables rebuilt, through
    ``evalnb report``'s report.json, and one of them replayed."""
    recounted = [read_run(f) for f in live]
    assert_agrees(load(*live), recounted)  # the runner's own folders, loaded together
    assert_agrees(load(*without_parquet(live, root)), recounted)  # parquet rebuilt
    report = write_report(load(*live), root / "report")["report.json"]
    assert_agrees(load(report), recounted)  # evalnb report's report.json, read back
    replayed = replay(world, live[chosen % len(live)], root)
    assert_agrees(load(replayed), [read_run(replayed)])


def check_exports(world: World, live: list[Path], root: Path, chosen: int) -> None:
    """One of the runs exported (Inspect log, ATIF job, OTel spans) and read back."""
    source = live[chosen % len(live)]
    log, imported = inspect_round_trip(source, root)
    assert_agrees(load(log), [read_run(source)])  # the Inspect export, read back
    assert_agrees(load(imported), [read_run(imported)])  # ... and imported as a run folder
    assert same_attempts(read_run(imported), read_run(source))
    assert_inspect_keeps(load(inspect_fields_only(log, root)), read_run(source))  # lossy
    job, spans = exported(source, root)
    runs = load(job)  # evalnb export atif: a Harbor job of ATIF trajectories, read back
    assert_agrees(runs, [renamed(read_run(source), runs)], lost=("latency_ms",))
    assert_otel_keeps(load(spans), read_run(source))  # evalnb export otel, read back: lossy


def check_shards(world: World, live: list[Path], root: Path, chosen: int) -> None:
    """The first run made again in shards and merged by ``evalnb merge``."""
    merged = shard_and_merge(world, root)
    assert_agrees(load(merged), [read_run(merged)])
    # the shards ran the same attempts as the whole run did: the same figures but time
    assert same_attempts(read_run(merged), read_run(live[0]), ignore=("duration_ms",))


def check_each_import(world: World, live: list[Path], root: Path, chosen: int) -> None:
    """One of the world's runs written in each format evalnb imports but does not write
    (``tests/foreign_writers.py``), read by ``evalnb.load`` and by ``evalnb import``: every
    figure the format holds equals the reference's recount of what it holds."""
    scenario_runs = [read_run(f) for f in live if not f.name.endswith("-bash")]
    if scenario_runs:  # llm-tool-test evaluates scenarios: each run its results.jsonl
        files = [write_llm_tool_test(run, root / "llm-tool-test") for run in scenario_runs]
        views = [llm_tool_test_view(run) for run in scenario_runs]
        stems = [f.stem for f in files]
        for runs in (load(*files), load(*imported("llm-tool-test-db", files, root / "in"))):
            assert_llm_tool_test_keeps(runs, views, stems)
    bash = [read_run(f) for f in live if f.name.endswith("-bash")]
    if not bash:  # the other formats hold bash tasks
        return
    source = bash[chosen % len(bash)]
    files = write_bashkit_eval(source, root / "bashkit-eval")  # one file per epoch
    views = [bashkit_eval_view(source, e) for e in sorted({r["epoch"] for r in source.records})]
    for runs in (load(*files), load(*imported("bashkit-eval", files, root / "in"))):
        assert_agrees(runs, views, lost=("stop_reason",))
    for epoch, files in enumerate(write_claude_code(source, root / "claude-code"), start=1):
        for runs in (load(*files), load(*imported("claude-code", files, root / "in"))):
            assert_claude_code_keeps(runs, source, epoch)  # one stream-json file per task
    kept = [view for view in map(onetool_view, bash) if view.records]
    if kept:  # every bash run of the world in one CSV
        csv = write_onetool_bench(kept, root / "bench.csv")
        for runs in (load(csv), load(*imported("onetool-bench", [csv], root / "in"))):
            assert_onetool_keeps(runs, kept, "bench")
    mira = write_mira(bash, root / "mira")  # every bash run of the world in one folder
    for runs in (load(mira), load(*imported("mira", [mira], root / "in"))):
        assert_mira_keeps(runs, bash, MIRA_RUN, MIRA_EVAL)


def world(tasks=(), scenarios=(), plays=(), **settings) -> World:
    """A hand-made world: ``tasks`` are (id, checks), ``scenarios`` YAML texts named s0,
    s1, ..., ``plays`` one dict of plays per agent (m0, m1, ...)."""
    options = {"judged": False, "versions": (), "epochs": 1, "max_turns": 4}
    options |= {"concurrency": 2, "hang": False, **settings}
    return World(
        tasks=[
            Task(
                id=i,
                category="c",
                prompt="p",
                files=FILES,
                expectations=[{"check": c} for c in checks],
            )
            for i, checks in tasks
        ],
        scenarios={f"s{n}": text for n, text in enumerate(scenarios)},
        agents=[PlayedAgent(f"m{n}", dict(p)) for n, p in enumerate(plays)],
        **options,
    )


ISSUE_CHECKS = ["exit_code:-1", "stderr_empty", "tool_calls_max:0", "stdout_contains:alpha"]
"""Issue 25 item 4's example: the first three pass when nothing runs."""
ITEM_4 = world(
    tasks=[("t0", ISSUE_CHECKS)],
    scenarios=[scenario("s0", GATES[:2], short_help=False, broken=True, judged=True)],
    plays=[
        {  # the provider fails at once; the time limit comes before any command
            ("t0", 1): (Turn(error="HTTP 500"),),
            ("t0", 2): (Turn(hang=True),),
            ("s0", 1, "none"): (Turn(commands=("notes list",)),),
        },
        {  # a command ran, then the provider failed: scored on what it left
            ("t0", 1): (Turn(commands=("echo alpha",)), Turn(error="HTTP 500")),
            ("t0", 2): (Turn(commands=("cat /data/a.txt",)),),
        },
    ],
    judged=True,
    epochs=2,
    hang=True,
    concurrency=1,
)
ITEM_5 = world(
    tasks=[("t0", ["exit_code:0"])],
    plays=[
        {
            ("t0", e): tuple(
                Turn(commands=("echo alpha",) if n < 2 else (), input_tokens=tokens)
                for n, tokens in enumerate(counts)
            )
            for e, counts in enumerate(
                ([None, 1200, 1500], [1000, None, 1600], [1000, 1300, None], [2**45, 2**45 + 7]),
                start=1,
            )
        }
    ],
    epochs=4,
)
ITEM_1 = world(
    scenarios=[scenario("s0", GATES[3:], short_help=True, broken=False, judged=False)],
    plays=[
        {
            ("s0", e, v): (
                Turn(commands=("notes show n1",)),
                Turn(commands=("notes -h", "notes show n1")),
                Turn(commands=("notes create --title Standup && notes show n1",)),
            )
            for e in (1, 2)
            for v in ("v1", "v2")
        }
    ],
    versions=("v1", "v2"),
    epochs=2,
)


PATHS = {
    "run folders": check_run_folders,
    "exports": check_exports,
    "shards": check_shards,
    "imports": check_each_import,
}
"""Every path a world's runs take, each its own test so that xdist spreads them. Each path
runs on the named examples and on as many drawn worlds as the profile asks for (the runs
made afresh for it); Hypothesis draws each path's worlds apart, so the paths together see
more worlds than one test over every path did, and each path no fewer."""


@pytest.mark.parametrize("path", PATHS)
@example(world=ITEM_1, chosen=0)  # issue 25 item 1: attempts of one run interleaved
@example(world=ITEM_4, chosen=1)  # item 4: checks of an attempt whose work never ran
@example(world=ITEM_5, chosen=0)  # item 5: null token counts
@given(world=worlds(), chosen=st.integers(0, 20))
def test_every_figure_equals_the_reference_on_every_path(path, world, chosen):
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        PATHS[path](world, run_live(world, root), root, chosen)


# --- issue 25's defects, each a named case ------------------------------------------


def test_issue_25_item_1_the_notes_suite_with_the_scripted_v1_agent(tmp_path):
    """The issue's repro: notes_repair unique 4, retry rate 0.2, first-try 0.4; guidance
    v1 overall retry rate 0.05, first-try 0.775, iteration ratio 0.95."""
    agent = data_path("demo", "guidance", "notes-agent.v1.yaml")
    guidance = data_path("tools", "notes", "AGENTS.v1.md")
    argv = ["run", "notes", "--model", f"scripted:{agent}", "--guidance", f"v1={guidance}"]
    assert main([*argv, "--judge", "sim/careful", "--out", str(tmp_path), "--quiet"]) == 0
    [folder] = tmp_path.iterdir()
    runs = load(folder)
    assert_agrees(runs, [read_run(folder)])
    repair = en.interaction(runs, by="task").filter(task_id="notes_repair").row(0, named=True)
    assert (repair["unique_commands"], repair["retry_rate"]) == (4, 0.2)
    assert repair["first_try_success_rate"] == 0.4
    v1 = en.compare_guidance(runs).summary.row(0, named=True)
    assert (v1["retry_rate"], v1["first_try_success_rate"]) == (0.05, 0.775)
    assert v1["iteration_ratio"] == 0.95


def test_issue_25_item_3_a_regex_check_means_what_bashkit_evals_rust_regex_means(tmp_path):
    """``$`` is the end of the text without ``(?m)``: ``^42$`` does not match ``42\\n``."""
    plays = [{("t0", 1): (Turn(commands=("echo 42",)),)}]
    live = run_live(world(tasks=[("t0", ["stdout_regex:^42$"])], plays=plays), tmp_path)
    assert_agrees(load(*live), [read_run(f) for f in live])


def _without_passed(tasks: pl.DataFrame) -> pl.DataFrame:
    return tasks.drop("passed")


def _passed_as_text(tasks: pl.DataFrame) -> pl.DataFrame:
    return tasks.with_columns(pl.col("passed").cast(pl.Utf8))


@pytest.mark.parametrize("damage", [_without_passed, _passed_as_text])
def test_issue_25_item_7_a_damaged_tasks_table_gives_the_events_figures_or_an_error(
    tmp_path, damage
):
    """A tasks.parquet without its ``passed`` column gave 0 passed, one with a ``passed``
    column of strings a polars traceback: either is rebuilt from the events (the source of
    truth) or refused naming the file."""
    plays = [{("t0", 1): (Turn(commands=("echo alpha",)),)}]
    [folder] = run_live(world(tasks=[("t0", ["stdout_contains:alpha"])], plays=plays), tmp_path)
    damage(pl.read_parquet(folder / "tasks.parquet")).write_parquet(folder / "tasks.parquet")
    try:
        runs = load(folder)
    except InputError as exc:
        assert "tasks.parquet" in str(exc)
    else:
        assert_agrees(runs, [read_run(folder)])
