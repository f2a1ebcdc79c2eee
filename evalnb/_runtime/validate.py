"""``evalnb validate``: prove a dataset's checks are honest.

For every task, three rules must hold:

1. **reference passes**: the task's ``solution``, run through the agent loop,
   passes every check;
2. **empty fails**: an agent that does nothing (one turn, no tool calls) fails at
   least one check;
3. **files matter**: where the task writes files (its file checks name paths that
   are not among its input files), running the solution and then deleting those
   outputs fails at least one file check.

Weak checks are linted as warnings: a ``stdout_contains`` value shorter than 3
characters, a task with no check on disk or no check on output, a task with
fewer than 3 or more than 8 checks.

A CLI-tool scenario (a YAML file, or a folder of them: :func:`validate_scenarios`)
has no reference solution, so rules 1 and 3 do not apply (n/a). Each scenario must
load (every problem :func:`~evalnb._formats.scenario.load_scenario` finds is one,
named with its file, line and field; so is a name two scenarios share), its
workspace must be prepared (fixture, files, health check and setup commands) and
**empty fails**: scored after an agent that did nothing, at least one gate fails.
The judge is not called: when only an enabled judge could fail that empty attempt,
it is a warning, not a problem; a scenario without gates is warned about too.

Example:
    >>> import asyncio
    >>> from evalnb.records import Task
    >>> t = Task(id="t", category="c", prompt="p", solution="echo hello > /out.txt; cat /out.txt",
    ...          expectations=[{"check": "file_contains:/out.txt:hello"},
    ...                        {"check": "stdout_contains:hello"}])
    >>> [v] = asyncio.run(validate_tasks([t]))
    >>> v.reference_passes, v.empty_fails, v.files_matter, v.ok
    (True, True, True, True)
"""

from __future__ import annotations

import asyncio
import shlex
from dataclasses import dataclass, field
from pathlib import Path

from evalnb._formats.scenario import load_scenario
from evalnb._runtime.agent import run_agent
from evalnb._runtime.providers.offline import ReferenceProvider
from evalnb._runtime.sandbox import BashkitSandbox
from evalnb._runtime.scenario_case import ScenarioCase
from evalnb._scoring.expectations import score_task
from evalnb.errors import InputError, SetupError
from evalnb.records import AgentTrace, Task
from evalnb.records.scenario import Scenario
from evalnb.records.task import FileCheck, StdoutContains

FILE_KINDS = {"file_exists", "dir_exists", "file_contains", "file_line_regex"}
OUTPUT_KINDS = {"exit_code", "stdout_contains", "stdout_regex"}


@dataclass
class TaskValidation:
    """The verdict of the three rules (and lint warnings) for one task or scenario.

    A rule that does not apply, or could not be checked, is None: ``files_matter``
    when the task writes no files, ``reference_passes`` for a scenario (it has no
    solution), ``empty_fails`` for a scenario that did not load or whose workspace
    could not be prepared (the reason is among ``problems``).
    """

    task_id: str
    reference_passes: bool | None
    empty_fails: bool | None
    files_matter: bool | None
    problems: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        """True when no rule is broken (warnings do not count)."""
        return not self.problems


def output_paths(task: Task) -> list[str]:
    """Paths named by the task's file checks that are not among its input files.

    Example:
        >>> t = Task(id="t", category="c", prompt="p", files={"/in.txt": ""},
        ...          expectations=[{"check": "file_exists:/in.txt"},
        ...                        {"check": "file_contains:/out.txt:x"}])
        >>> output_paths(t)
        ['/out.txt']
    """
    paths = [e.spec.path for e in task.expectations if isinstance(e.spec, FileCheck)]
    return list(dict.fromkeys(p for p in paths if p not in task.files))


def lint(task: Task) -> list[str]:
    """Weak-check warnings for one task.

    Example:
        >>> for w in lint(Task(id="t", category="c", prompt="p",
        ...                    expectations=[{"check": "stdout_contains:ok"}])):
        ...     print(w)
        stdout_contains value 'ok' is shorter than 3 characters: use stdout_regex with \\b
        no check on disk (file_exists, dir_exists, file_contains, file_line_regex)
        only 1 check(s): use 3 to 8
    """
    out = []
    for e in task.expectations:
        if isinstance(e.spec, StdoutContains) and len(e.spec.text) < 3:
            out.append(
                f"stdout_contains value {e.spec.text!r} is shorter than 3 characters: "
                "use stdout_regex with \\b"
            )
    kinds = {e.kind for e in task.expectations}
    if not kinds & FILE_KINDS:
        out.append("no check on disk (file_exists, dir_exists, file_contains, file_line_regex)")
    if not kinds & OUTPUT_KINDS:
        out.append("no check on output (exit_code, stdout_contains, stdout_regex)")
    n = len(task.expectations)
    if not 3 <= n <= 8:
        out.append(f"only {n} check(s): use 3 to 8" if n < 3 else f"{n} checks: use 3 to 8")
    return out


async def validate_task(task: Task) -> TaskValidation:
    """Apply the three rules and the lint to one task.

    Example:
        >>> t = Task(id="t", category="c", prompt="p", solution="echo x",
        ...          expectations=[{"check": "stderr_empty"}])
        >>> asyncio.run(validate_task(t)).problems
        ['an agent that does nothing passes every check']
    """
    problems: list[str] = []
    if not task.solution:
        return TaskValidation(
            task.id, False, False, None, ["no 'solution' to validate"], lint(task)
        )

    box = BashkitSandbox(files=task.files)
    outcome = await run_agent(task, ReferenceProvider(), box)
    score = score_task(task, outcome.trace, box)
    failed = [r for r in score.results if not r.passed]
    reference_passes = outcome.error is None and not failed
    if not reference_passes:
        why = outcome.error or "; ".join(f"{r.check} ({r.detail})" for r in failed)
        problems.append(f"reference solution fails: {why}")

    empty = score_task(
        task, AgentTrace(turns=1, natural_stop=True), BashkitSandbox(files=task.files)
    )
    empty_fails = not empty.all_passed()
    if not empty_fails:
        problems.append("an agent that does nothing passes every check")

    files_matter: bool | None = None
    outputs = output_paths(task)
    if outputs:
        await box.exec("rm -rf " + " ".join(shlex.quote(p) for p in outputs))
        rescored = score_task(task, outcome.trace, box)
        files_matter = any(not r.passed for r in rescored.results if r.kind in FILE_KINDS)
        if not files_matter:
            problems.append("deleting the output files fails no file check")
    box.close()
    return TaskValidation(
        task.id, reference_passes, empty_fails, files_matter, problems, lint(task)
    )


async def validate_tasks(tasks: list[Task], concurrency: int = 8) -> list[TaskValidation]:
    """Validate every task (concurrently), in dataset order.

    Example:
        >>> t = Task(id="t", category="c", prompt="p")  # no solution
        >>> [v.problems for v in asyncio.run(validate_tasks([t]))]
        [["no 'solution' to validate"]]
    """
    limit = asyncio.Semaphore(concurrency)

    async def one(task: Task) -> TaskValidation:
        async with limit:
            return await validate_task(task)

    return list(await asyncio.gather(*(one(t) for t in tasks)))


def validate_scenarios(path: str | Path) -> list[TaskValidation]:
    """Validate a scenario YAML, or every ``*.yaml``/``*.yml`` in a folder (see the module
    docstring), in file name order; a scenario that does not load is one BROKEN row.

    Example:
        >>> import tempfile, pathlib
        >>> folder = pathlib.Path(tempfile.mkdtemp())
        >>> _ = (folder / "s.yaml").write_text(
        ...     "name: hello\\ntarget: {binary: wc, mode: local}\\ntask: Count the words.\\n"
        ...     "gates:\\n- {type: file_exists, path: out.txt}\\n")
        >>> [(v.task_id, v.empty_fails, v.ok) for v in validate_scenarios(folder)]
        [('hello', True, True)]
    """
    root = Path(path)
    files = sorted([*root.glob("*.yaml"), *root.glob("*.yml")]) if root.is_dir() else [root]
    if root.is_dir() and not files:
        raise InputError(root, None, None, "no *.yaml scenarios in this folder")
    out: list[TaskValidation] = []
    seen: dict[str, Path] = {}
    for file in files:
        try:
            scenario = load_scenario(file)
        except InputError as exc:
            out.append(TaskValidation(file.stem, None, None, None, [str(exc)]))
            continue
        validation = asyncio.run(validate_scenario(scenario))
        if scenario.name in seen:
            validation.problems.append(f"scenario name also used by {seen[scenario.name]}")
        seen.setdefault(scenario.name, file)
        out.append(validation)
    return out


async def validate_scenario(scenario: Scenario) -> TaskValidation:
    """The empty-agent rule for one loaded scenario (see the module docstring).

    Example:
        >>> import pathlib, tempfile
        >>> from evalnb._formats.scenario import load_scenario
        >>> path = pathlib.Path(tempfile.mkdtemp()) / "s.yaml"
        >>> _ = path.write_text("name: vacuous\\ntarget: {binary: wc, mode: local}\\n"
        ...     "task: Count.\\ngates:\\n- {type: command_succeeds, command: 'true'}\\n")
        >>> asyncio.run(validate_scenario(load_scenario(path))).problems
        ['an agent that does nothing passes every gate']
    """
    judged = scenario.evaluation.judge_enabled
    gates_only = scenario.model_copy(
        update={"evaluation": scenario.evaluation.model_copy(update={"judge": None})}
    )
    warnings = [] if scenario.gates else ["no gates: only the judge scores it"]
    case = ScenarioCase(gates_only)
    try:
        box = await case.sandbox()
    except SetupError as exc:
        problem = f"the workspace could not be prepared: {exc}"
        return TaskValidation(scenario.name, None, None, None, [problem], warnings)
    try:
        scored = await case.score(AgentTrace(turns=1, natural_stop=True), box)
    finally:
        box.close()
    assert scored.scenario is not None
    empty_fails = scored.scenario.outcome != "pass"
    problems: list[str] = []
    if not empty_fails and judged:
        warnings.append("an agent that does nothing passes every gate: only the judge can fail it")
    elif not empty_fails:
        problems.append("an agent that does nothing passes every gate")
    return TaskValidation(scenario.name, None, empty_fails, None, problems, warnings)


def validation_table(results: list[TaskValidation]) -> str:
    """A fixed-width table: one line per task with the three rules and its warnings.

    Example:
        >>> print(validation_table([TaskValidation("t1", True, True, None)]))
        task  reference  empty  files  result
        t1    pass       fails  n/a    ok
    """

    def mark(value: bool | None, yes: str, no: str) -> str:
        return "n/a" if value is None else (yes if value else no)

    rows = [("task", "reference", "empty", "files", "result")]
    for v in results:
        result = "ok" if v.ok else "BROKEN"
        if v.warnings:
            result += f" ({len(v.warnings)} warning{'s' if len(v.warnings) > 1 else ''})"
        rows.append(
            (
                v.task_id,
                mark(v.reference_passes, "pass", "FAIL"),
                mark(v.empty_fails, "fails", "PASSES"),
                mark(v.files_matter, "fail", "PASS"),
                result,
            )
        )
    widths = [max(len(r[i]) for r in rows) for i in range(5)]
    return "\n".join(
        "  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip() for r in rows
    )
