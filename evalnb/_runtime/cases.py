"""Load a dataset as runner cases: bash tasks or CLI-tool scenarios.

Example:
    >>> from evalnb._resources import dataset_path
    >>> [c.task.id for c in load_cases(dataset_path("smoke"))]
    ['smoke_count_words', 'smoke_make_project', 'smoke_jq_fields']
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

from evalnb._formats.tasks import load_tasks
from evalnb._runtime.bash_case import BashCase
from evalnb._runtime.case import Case
from evalnb._runtime.providers.registry import resolve_provider
from evalnb._runtime.scenario_case import load_scenarios, scenario_cases
from evalnb._scoring.judge import judge_spec, refuse_self_judging
from evalnb.errors import InputError
from evalnb.records import Connection, Filters
from evalnb.records.task import LlmJudge, Task


def load_cases(
    path: str | Path,
    *,
    guidance: Mapping[str, Path] | None = None,
    judge: str | None = None,
    extra_judges: Sequence[str] = (),
    models: Sequence[str] = (),
    connection: Connection | None = None,
    filters: Filters | None = None,
) -> list[Case]:
    """Load a dataset into cases: those ``filters`` (``--tag``, ``--task``) select.

    JSONL tasks or a bashkit-eval result JSON give :class:`BashCase`; a scenario YAML
    or a folder of them gives scenario cases, one per guidance version when
    ``guidance`` (``{name: file}``) is given. ``judge`` is the ``--judge`` model,
    resolved only for the cases selected (a judge no selected case uses needs no key);
    ``extra_judges`` (a ``--judge`` given again) rate scenario attempts beside it and
    decide nothing (:func:`~evalnb._runtime.scenario_case.scenario_cases`; bash tasks
    refuse them: their ``llm_judge`` checks have one judge);
    ``models`` are the models under test: a judge among them is refused, and so is a
    scripted agent (``scripted:FILE``) that scripts a task the dataset lacks. Bash tasks
    have no judge layer, so a ``judge`` for tasks without an ``llm_judge`` expectation is
    refused (:class:`~evalnb.errors.InputError`) rather than ignored;
    ``connection`` is how the judge is reached (the run's ``--base-url``,
    ``--anthropic-base-url``, key variable, timeout and retries, as for the models).

    Example:
        >>> from evalnb._resources import dataset_path
        >>> [c.task.id for c in load_cases(dataset_path("notes"),
        ...                                filters=Filters(task_ids=["notes_capture"]))]
        ['notes_capture']
    """
    path = Path(path)
    keep = filters or Filters()
    if path.is_dir() or path.suffix in (".yaml", ".yml"):
        scenarios = load_scenarios(path)
        _check_scripts(models, {s.name for _, s in scenarios})
        _refuse_unknown_ids(path, keep, {s.name for _, s in scenarios})
        kept = [(f, s) for f, s in scenarios if keep.keeps(s.name, s.category, s.tags)]
        cases: list[Case] = list(
            scenario_cases(
                kept,
                guidance,
                judge,
                extra_judges=extra_judges,
                models=models,
                connection=connection,
            )
        )
        _refuse_reference_without_solutions(path, models, [c.task for c in cases])
        return cases
    if guidance:
        raise InputError(path, None, "--guidance", "guidance versions apply to scenarios only")
    if extra_judges:
        raise InputError(
            path, None, "--judge", "several judges rate scenarios only: give one --judge"
        )
    tasks = load_tasks(path)
    _check_scripts(models, {t.id for t in tasks})
    _refuse_unknown_ids(path, keep, {t.id for t in tasks})
    tasks = [t for t in tasks if keep.keeps(t.id, t.category, t.tags)]
    _refuse_reference_without_solutions(path, models, tasks)
    provider = None
    judged = any(isinstance(e.spec, LlmJudge) for t in tasks for e in t.expectations)
    if judge and not judged:
        raise InputError(
            path,
            None,
            "--judge",
            "bash tasks have no judge layer (spec 000 checks only), and none of these has "
            "an llm_judge expectation for a judge to score: drop --judge",
        )
    if judged:
        spec = judge_spec(judge, None)  # --judge, else $EVALNB_JUDGE, else no judge
        if spec:
            refuse_self_judging(spec, models, path)
            provider = resolve_provider(spec, connection=connection, origin=(path, "--judge"))
    return [BashCase(t, judge=provider) for t in tasks]


def _refuse_unknown_ids(path: Path, keep: Filters, task_ids: set[str]) -> None:
    """A ``--task`` id the dataset lacks is a typo, never silently dropped."""
    unknown = sorted(set(keep.task_ids) - task_ids)
    if unknown:
        names = ", ".join(repr(i) for i in unknown)
        raise InputError(path, None, "--task", f"no task {names} in this dataset")


def _refuse_reference_without_solutions(
    path: Path, models: Sequence[str], tasks: Sequence[Task]
) -> None:
    """The reference agent runs each task's ``solution``: with none among the selected
    tasks every attempt would only error, so the run is refused before it starts (a task
    without one among others that have one is recorded as errored, saying so)."""
    if "reference" in models and tasks and not any(t.solution for t in tasks):
        raise InputError(
            path,
            None,
            "--model",
            "the reference agent runs each task's 'solution', and none of the "
            f"{len(tasks)} selected tasks has one: run a model or a scripted agent",
        )


def _check_scripts(models: Sequence[str], task_ids: set[str]) -> None:
    """Refuse a ``scripted:`` file that scripts a task the dataset does not have."""
    from evalnb._runtime.providers.offline import ScriptedProvider

    for model in models:
        if model.startswith("scripted:"):
            ScriptedProvider(model.removeprefix("scripted:")).check_tasks(task_ids)
