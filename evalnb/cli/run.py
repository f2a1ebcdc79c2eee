"""``evalnb run``: run models on a dataset and record every call."""

from __future__ import annotations

import argparse
import asyncio
from pathlib import Path
from typing import Any

from evalnb.cli.args import positive_int
from evalnb.errors import InputError


def register(sub: Any) -> None:
    """Add ``run`` to the subcommand parsers."""
    run = sub.add_parser("run", help="run models on a dataset and record every call")
    run.add_argument(
        "dataset",
        nargs="?",
        help="tasks JSONL, bashkit-eval result JSON, scenario YAML or folder, or a built-in"
        " dataset: bash, smoke, notes",
    )
    run.add_argument(
        "--model",
        action="append",
        default=[],
        help="anthropic/<m>, openai/<m>, reference, scripted:<file>, replay:<src>, sim/<persona>"
        " (repeatable)",
    )
    run.add_argument(
        "--concurrency", type=positive_int, default=8, help="attempts in flight (default 8)"
    )
    run.add_argument(
        "--max-turns", type=positive_int, default=10, help="turn limit per task (default 10)"
    )
    run.add_argument("--epochs", type=positive_int, default=1, help="repeat each task K times")
    run.add_argument("--tag", action="append", default=[], help="only tasks of this category/tag")
    run.add_argument("--task", action="append", default=[], help="only this task id (repeatable)")
    run.add_argument("--out", default="runs", help="where run folders go (default runs/)")
    run.add_argument("--resume", metavar="RUN_DIR", help="finish an interrupted run")
    run.add_argument("--base-url", help="OpenAI-compatible server URL (or OPENAI_BASE_URL)")
    run.add_argument("--seed", type=int, default=7, help="seed of the simulated agents")
    run.add_argument("--sim-sleep", action="store_true", help="simulated agents sleep latencies")
    run.add_argument(
        "--guidance",
        action="append",
        default=[],
        metavar="NAME=FILE",
        help="scenarios: run every scenario once per guidance version (repeatable)",
    )
    run.add_argument("--judge", help="the judge model (or EVALNB_JUDGE); never the model tested")
    run.add_argument("--quiet", action="store_true", help="no progress bars or report")
    run.set_defaults(func=_cmd_run)


def _select(cases: list, tags: list[str], ids: list[str]) -> list:
    """Keep cases whose category or tags match ``--tag`` and whose id matches ``--task``."""
    if tags:
        cases = [c for c in cases if c.task.category in tags or set(c.task.tags) & set(tags)]
    if ids:
        cases = [c for c in cases if c.task.id in ids]
    return cases


def _cmd_run(args: argparse.Namespace) -> int:
    from evalnb.errors import ProviderError
    from evalnb.formats.tasks import dataset_sha256
    from evalnb.records import Filters
    from evalnb.resources import dataset_path
    from evalnb.runtime.cases import load_cases
    from evalnb.runtime.runner import resume, run_cases

    if args.resume:
        from evalnb.store import RunStore

        meta = RunStore.open(args.resume).meta
        dataset = args.dataset or meta.dataset
        if not dataset:
            raise InputError(args.resume, None, "dataset", "run.json names no dataset")
        if meta.dataset_sha256 and dataset_sha256(dataset_path(dataset)) != meta.dataset_sha256:
            raise InputError(dataset, None, None, "dataset changed since the run started")
        filters = meta.settings.filters
        cases = _select(load_cases(dataset_path(dataset)), filters.tags, filters.task_ids)
        paths = [asyncio.run(resume(args.resume, cases, progress=not args.quiet))]
    else:
        if not args.dataset or not args.model:
            raise InputError("evalnb run", None, None, "give a DATASET and at least one --model")
        try:
            cases = load_cases(
                dataset_path(args.dataset),
                guidance=_guidance_versions(args.guidance),
                judge=args.judge,
                models=args.model,
            )
        except (ValueError, ProviderError) as exc:
            raise InputError(args.dataset, None, "--judge", str(exc)) from None
        cases = _select(cases, args.tag, args.task)
        if not cases:
            raise InputError(args.dataset, None, None, "no task matches --tag/--task")
        # one run folder per model and guidance version
        groups: dict[str | None, list] = {}
        for case in cases:
            groups.setdefault(getattr(case, "guidance", None), []).append(case)
        paths = []
        for guidance, group in groups.items():
            try:
                paths += asyncio.run(
                    run_cases(
                        group,
                        args.model,
                        args.out,
                        concurrency=args.concurrency,
                        epochs=args.epochs,
                        max_turns=args.max_turns,
                        dataset=args.dataset,
                        dataset_sha256=dataset_sha256(dataset_path(args.dataset)),
                        guidance=guidance,
                        base_url=args.base_url,
                        seed=args.seed,
                        sim_sleep=args.sim_sleep,
                        filters=Filters(tags=args.tag, task_ids=args.task),
                        progress=not args.quiet,
                    )
                )
            except (ValueError, ProviderError) as exc:
                raise InputError("evalnb run", None, "--model", str(exc)) from None
    if not args.quiet:
        from evalnb.analysis.load import load
        from evalnb.present.report import terminal_report

        print(terminal_report(load(*paths)))
    for path in paths:
        print(f"run written: {path}")
    return 0


def _guidance_versions(values: list[str]) -> dict[str, Path] | None:
    """``--guidance NAME=FILE`` values as ``{name: file}`` (None when there are none)."""
    versions: dict[str, Path] = {}
    for value in values:
        name, sep, file = value.partition("=")
        if not sep or not name or not file:
            raise InputError("evalnb run", None, "--guidance", f"expected NAME=FILE, got {value!r}")
        if name in versions:
            raise InputError("evalnb run", None, "--guidance", f"version {name!r} given twice")
        versions[name] = Path(file)
    return versions or None
