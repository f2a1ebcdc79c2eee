"""Load a dataset as runner cases: bash tasks or CLI-tool scenarios.

Example:
    >>> from evalnb.resources import dataset_path
    >>> [c.task.id for c in load_cases(dataset_path("smoke"))]
    ['smoke_count_words', 'smoke_make_project', 'smoke_jq_fields']
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

from evalnb.errors import InputError
from evalnb.formats.tasks import load_tasks
from evalnb.records import Connection
from evalnb.records.task import LlmJudge
from evalnb.runtime.bash_case import BashCase
from evalnb.runtime.case import Case
from evalnb.runtime.providers.registry import resolve_provider
from evalnb.runtime.scenario_case import load_scenario_cases
from evalnb.scoring.judge import judge_spec, refuse_self_judging


def load_cases(
    path: str | Path,
    *,
    guidance: Mapping[str, Path] | None = None,
    judge: str | None = None,
    models: Sequence[str] = (),
    connection: Connection | None = None,
) -> list[Case]:
    """Load a dataset into cases.

    JSONL tasks or a bashkit-eval result JSON give :class:`BashCase`; a scenario YAML
    or a folder of them gives scenario cases, one per guidance version when
    ``guidance`` (``{name: file}``) is given. ``judge`` is the ``--judge`` model;
    ``models`` are the models under test (a judge among them is refused); bash tasks
    have no judge layer, so a ``judge`` for tasks without an ``llm_judge`` expectation is
    refused (:class:`~evalnb.errors.InputError`) rather than ignored;
    ``connection`` is how the judge is reached (the run's ``--base-url``,
    ``--anthropic-base-url``, key variable, timeout and retries, as for the models).
    """
    path = Path(path)
    if path.is_dir() or path.suffix in (".yaml", ".yml"):
        return list(
            load_scenario_cases(path, guidance, judge, models=models, connection=connection)
        )
    if guidance:
        raise InputError(path, None, "--guidance", "guidance versions apply to scenarios only")
    tasks = load_tasks(path)
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
            refuse_self_judging(spec, models)
            provider = resolve_provider(spec, connection=connection)
    return [BashCase(t, judge=provider) for t in tasks]
