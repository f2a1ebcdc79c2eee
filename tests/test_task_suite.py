"""The built-in task datasets (data/tasks/*.jsonl) are solvable, and their checks have teeth.

Every task is checked against the validation rules that ``evalnb validate`` applies:

1. the reference ``solution``, run through the real agent loop in a fresh bashkit
   sandbox, passes every check;
2. an agent that does nothing fails at least one check;
3. an agent that runs the solution but whose output files are then deleted fails at
   least one file check (every task here writes files);

plus lint rules against weak checks, and the contract of the bash suite: its
categories, their sizes and the difficulty mix.
"""

from __future__ import annotations

import asyncio
from collections import Counter
from pathlib import Path

import pytest

from evalnb._formats.tasks import load_tasks
from evalnb._runtime.agent import run_agent
from evalnb._runtime.providers.offline import ReferenceProvider
from evalnb._runtime.sandbox.bashkit import BashkitSandbox
from evalnb._scoring.expectations import score_task
from evalnb.records import AgentTrace, Task, ToolCallResult
from evalnb.records.task import FileCheck, FileLineRegex, StdoutContains, StdoutRegex

TASK_DIR = Path(__file__).resolve().parents[1] / "data" / "tasks"
DATASETS = {path.stem: load_tasks(path) for path in sorted(TASK_DIR.glob("*.jsonl"))}
CASES = [(name, task) for name, tasks in DATASETS.items() for task in tasks]
CASE_IDS = [f"{name}/{task.id}" for name, task in CASES]

PRINTED_KINDS = {"stdout_contains", "stdout_regex"}
TRACE_KINDS = PRINTED_KINDS | {"exit_code"}
FILE_KINDS = {"file_exists", "dir_exists", "file_contains", "file_line_regex"}
PASS_WHEN_IDLE_KINDS = {"stderr_empty", "tool_calls_max"}
DIFFICULTIES = ("easy", "medium", "hard")

SPEC_CATEGORIES = (
    "file_operations",
    "text_processing",
    "pipelines",
    "scripting",
    "data_transformation",
    "error_recovery",
    "system_info",
    "archive_operations",
    "json_processing",
    "complex_tasks",
)
OWN_CATEGORIES = ("code_search", "config_management", "log_analysis")
MIN_PER_CATEGORY = {
    **dict.fromkeys(SPEC_CATEGORIES, 4),
    "json_processing": 6,
    "data_transformation": 6,
    **dict.fromkeys(OWN_CATEGORIES, 3),
}
TARGET_DIFFICULTY_SHARE = {"easy": 0.35, "medium": 0.40, "hard": 0.25}

cases = pytest.mark.parametrize(("dataset", "task"), CASES, ids=CASE_IDS)


def reference_run(task: Task) -> tuple[AgentTrace, BashkitSandbox]:
    """Run the task's solution through the agent loop; return the trace and the sandbox."""
    sandbox = BashkitSandbox(files=task.files)
    outcome = asyncio.run(run_agent(task, ReferenceProvider(), sandbox))
    assert outcome.error is None, outcome.error
    return outcome.trace, sandbox


def is_input_path(task: Task, path: str) -> bool:
    """True for a path the task starts with: an input file or a directory holding one."""
    return path in task.files or any(f.startswith(path.rstrip("/") + "/") for f in task.files)


def written_paths(task: Task) -> list[str]:
    """Paths named by file checks that the agent has to create."""
    paths = {e.spec.path for e in task.expectations if isinstance(e.spec, FileCheck)}
    return sorted(p for p in paths if not is_input_path(task, p))


def idle_results(task: Task):
    """Check results for an agent that made no tool call at all."""
    return score_task(task, AgentTrace(turns=1), BashkitSandbox(files=task.files)).results


@cases
def test_reference_solution_passes_every_check(dataset: str, task: Task) -> None:
    trace, sandbox = reference_run(task)
    failed = [(r.check, r.detail) for r in score_task(task, trace, sandbox).results if not r.passed]
    assert not failed, f"stdout was:\n{''.join(c.stdout for c in trace.tool_calls)}"


@cases
def test_doing_nothing_fails_a_check(dataset: str, task: Task) -> None:
    assert any(not r.passed for r in idle_results(task))


@cases
def test_deleting_written_files_fails_a_file_check(dataset: str, task: Task) -> None:
    trace, sandbox = reference_run(task)
    paths = written_paths(task)
    assert paths, "the task writes no file that a check names"
    for path in paths:
        asyncio.run(sandbox.exec(f"rm -rf -- '{path}'"))
        assert sandbox.file_type(path) is None, f"could not delete {path}"
    results = score_task(task, trace, sandbox).results
    assert any(not r.passed for r in results if r.kind in FILE_KINDS)


@cases
def test_only_guard_checks_pass_without_work(dataset: str, task: Task) -> None:
    """A check an idle agent passes must guard an input file or be stderr_empty/tool_calls_max."""
    results = idle_results(task)
    free = [
        r.check
        for r, e in zip(results, task.expectations, strict=True)
        if r.passed
        and e.kind not in PASS_WHEN_IDLE_KINDS
        and not (isinstance(e.spec, FileCheck) and e.spec.path in task.files)
    ]
    assert not free
    assert sum(not r.passed for r in results) >= 3, "at least three checks must need real work"


@cases
def test_printing_the_inputs_does_not_satisfy_the_output_checks(dataset: str, task: Task) -> None:
    dump = ToolCallResult(commands="cat <inputs>", stdout="".join(task.files.values()))
    trace = AgentTrace(turns=2, tool_calls=[dump])
    results = score_task(task, trace, BashkitSandbox(files=task.files)).results
    printed = [r for r in results if r.kind in PRINTED_KINDS]
    assert any(not r.passed for r in printed)


@cases
def test_checks_read_both_sources_and_are_not_weak(dataset: str, task: Task) -> None:
    kinds = [e.kind for e in task.expectations]
    assert 3 <= len(kinds) <= 8
    assert PRINTED_KINDS & set(kinds), "no check on what was printed"
    assert FILE_KINDS & set(kinds), "no check on what was left on disk"
    for e in task.expectations:
        if isinstance(e.spec, StdoutContains):
            text = e.spec.text
            assert len(text) >= 3, f"{e.check}: too short, use stdout_regex with \\b"
            assert not (text[0].isdigit() or text[-1].isdigit()), (
                f"{e.check}: a number at the edge also matches longer numbers; use \\b"
            )
        if isinstance(e.spec, StdoutRegex | FileLineRegex):
            assert not e.spec.pattern.is_match(""), f"{e.check}: matches the empty string"
    weights = [e.weight for e in task.expectations]
    assert set(weights) <= {1.0, 2.0}
    assert weights.count(2.0) <= 1, "weight 2.0 is for the one key check"


@cases
def test_paths_stay_in_the_task_roots(dataset: str, task: Task) -> None:
    assert all(p.startswith(("/home/eval/", "/data/")) for p in task.files)
    outputs = [e.spec.path for e in task.expectations if isinstance(e.spec, FileCheck)]
    assert all(p.startswith(("/home/eval/", "/output/")) or p in task.files for p in outputs)


@cases
def test_tags_name_one_difficulty_and_a_topic(dataset: str, task: Task) -> None:
    assert sum(tag in DIFFICULTIES for tag in task.tags) == 1
    assert len(task.tags) >= 2


@pytest.mark.parametrize("dataset", sorted(DATASETS))
def test_extra_weight_is_used_sparingly(dataset: str) -> None:
    tasks = DATASETS[dataset]
    weighted = [t.id for t in tasks if any(e.weight != 1.0 for e in t.expectations)]
    assert len(weighted) <= len(tasks) // 5, weighted


def test_task_ids_are_unique_across_datasets() -> None:
    ids = Counter(task.id for _, task in CASES)
    assert [i for i, n in ids.items() if n > 1] == []


def test_bash_suite_covers_every_category() -> None:
    counts = Counter(task.category for task in DATASETS["bash"])
    assert set(counts) == set(MIN_PER_CATEGORY)
    short = {c: counts[c] for c, least in MIN_PER_CATEGORY.items() if counts[c] < least}
    assert short == {}
    assert len(DATASETS["bash"]) >= 54


def test_bash_suite_difficulty_mix_is_near_target() -> None:
    tasks = DATASETS["bash"]
    counts = Counter(tag for task in tasks for tag in task.tags if tag in DIFFICULTIES)
    for level, share in TARGET_DIFFICULTY_SHARE.items():
        assert abs(counts[level] / len(tasks) - share) <= 0.05, (level, counts[level])


def test_most_bash_solutions_take_several_lines() -> None:
    """Simulated agents split solutions into steps at top-level newlines."""
    lines = [len(task.solution.strip().splitlines()) for task in DATASETS["bash"]]
    assert sum(n >= 3 for n in lines) >= len(lines) // 2


def test_smoke_suite_is_three_easy_tasks() -> None:
    assert len(DATASETS["smoke"]) == 3
    assert all("easy" in task.tags for task in DATASETS["smoke"])
