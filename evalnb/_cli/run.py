"""``evalnb run``: run models on a dataset and record every call."""

from __future__ import annotations

import argparse
import asyncio
import os
import signal
import sys
from pathlib import Path
from typing import Any

from evalnb._cli.args import (
    epoch_count,
    http_url,
    non_negative_int,
    out_folder,
    positive_float,
    positive_int,
)
from evalnb.errors import InputError
from evalnb.records.run import (
    DEFAULT_MAX_RETRIES,
    DEFAULT_REQUEST_TIMEOUT_S,
    DEFAULT_TASK_TIMEOUT_S,
    Connection,
)


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
    run.add_argument("--concurrency", type=positive_int, help="attempts in flight (default 8)")
    run.add_argument(
        "--workers",
        type=positive_int,
        default=1,
        help="processes sharing the attempts and the concurrency, for real APIs past ~100 "
        "calls/s (default 1)",
    )
    run.add_argument(
        "--max-turns", type=positive_int, default=10, help="turn limit per task (default 10)"
    )
    run.add_argument(
        "--epochs", type=epoch_count, default=1, help="repeat each task K times (at most 1000)"
    )
    run.add_argument("--tag", action="append", default=[], help="only tasks of this category/tag")
    run.add_argument("--task", action="append", default=[], help="only this task id (repeatable)")
    run.add_argument(
        "--out", type=out_folder, default="runs", help="where run folders go (default runs/)"
    )
    run.add_argument("--resume", metavar="RUN_DIR", help="finish an interrupted run")
    run.add_argument(
        "--base-url",
        type=http_url,
        help="OpenAI-compatible server for openai/* models (or OPENAI_BASE_URL)",
    )
    run.add_argument(
        "--anthropic-base-url",
        type=http_url,
        help="Anthropic-compatible server for anthropic/* models (or ANTHROPIC_BASE_URL)",
    )
    run.add_argument(
        "--api-key-env",
        metavar="NAME",
        help="send the key in $NAME to a non-default server (without it, none is sent)",
    )
    run.add_argument(
        "--request-timeout",
        type=positive_float,
        metavar="S",
        help=f"seconds one HTTP request may take (default {DEFAULT_REQUEST_TIMEOUT_S:g})",
    )
    run.add_argument(
        "--max-retries",
        type=non_negative_int,
        help=f"retries of a failed provider request (default {DEFAULT_MAX_RETRIES})",
    )
    run.add_argument(
        "--task-timeout",
        type=positive_float,
        default=DEFAULT_TASK_TIMEOUT_S,
        metavar="S",
        help="wall-clock seconds of one attempt, retries included; past it the attempt is "
        f"recorded as errored (default {DEFAULT_TASK_TIMEOUT_S:g})",
    )
    run.add_argument(
        "--retry-errored",
        action="store_true",
        help="with --resume: run again the attempts that ended in an error",
    )
    run.add_argument("--seed", type=int, default=7, help="seed of the simulated agents")
    run.add_argument("--sim-sleep", action="store_true", help="simulated agents sleep latencies")
    run.add_argument(
        "--guidance",
        action="append",
        default=[],
        metavar="NAME=FILE",
        help="scenarios: run every scenario once per guidance version (repeatable)",
    )
    run.add_argument(
        "--judge",
        action="append",
        default=[],
        help="the judge model (or EVALNB_JUDGE); never a model tested. Repeat it on scenarios "
        "for more judges: each rates every attempt, the first decides the outcome",
    )
    run.add_argument(
        "--shard",
        metavar="I/N",
        help="run only shard I of N of the attempts (combine the N runs with `evalnb merge`)",
    )
    run.add_argument(
        "--durations-from",
        metavar="RUN_DIR",
        help="start the attempts longest first by their tasks' durations in this earlier run "
        "folder (default: by difficulty tags)",
    )
    run.add_argument("--quiet", action="store_true", help="no progress bars or report")
    run.set_defaults(func=_cmd_run)


def _cmd_run(args: argparse.Namespace) -> int:
    """Run (or resume) and report; SIGTERM and SIGHUP stop it like Ctrl-C (status partial)."""
    for signum in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(signum, lambda *_: os.kill(os.getpid(), signal.SIGINT))
    out = Path(args.out)
    before = set(out.iterdir()) if out.is_dir() else set()
    try:
        return _run(args)
    except KeyboardInterrupt:
        started = [args.resume] if args.resume else sorted(set(out.iterdir()) - before)
        hints = "; ".join(f"evalnb run --resume {path}" for path in started) or "nothing to resume"
        print(f"interrupted (status partial): {hints}", file=sys.stderr)
        return 130


def _connection(args: argparse.Namespace, base: Connection) -> Connection:
    """``base`` (the defaults, or a resumed run's) with the connection flags given applied."""
    given = {
        "base_url": args.base_url,
        "anthropic_base_url": args.anthropic_base_url,
        "api_key_env": args.api_key_env,
        "request_timeout_s": args.request_timeout,
        "max_retries": args.max_retries,
    }
    return base.model_copy(update={k: v for k, v in given.items() if v is not None})


def _run(args: argparse.Namespace) -> int:
    from evalnb._formats.tasks import dataset_sha256
    from evalnb._resources import dataset_path
    from evalnb._runtime.cases import load_cases
    from evalnb._runtime.runner import resume, run_cases
    from evalnb._runtime.shard import parse_shard
    from evalnb.records import Filters

    durations = _durations(args.durations_from) if args.durations_from else None
    if args.resume:
        from evalnb._store import RunStore

        meta = RunStore.open(args.resume).meta
        recorded = {"--model": args.model, "--tag": args.tag, "--task": args.task}
        recorded |= {"--guidance": args.guidance, "--shard": args.shard}
        if meta.settings.judges:  # a run that recorded its --judge resumes with it
            recorded["--judge"] = args.judge
        for flag, value in recorded.items():
            if value:
                raise InputError(
                    args.resume, None, flag, "run.json records it: --resume runs it as recorded"
                )
        judges = meta.settings.judges or _judges(args.judge)
        dataset = args.dataset or meta.dataset
        if not dataset:
            raise InputError(args.resume, None, "dataset", "run.json names no dataset")
        if meta.dataset_sha256 and dataset_sha256(dataset_path(dataset)) != meta.dataset_sha256:
            raise InputError(dataset, None, None, "dataset changed since the run started")
        connection = _connection(args, meta.settings.connection)
        cases = load_cases(
            dataset_path(dataset),
            judge=judges[0] if judges else None,
            extra_judges=judges[1:],
            connection=connection,
            filters=meta.settings.filters,
        )
        path = asyncio.run(
            resume(
                args.resume,
                cases,
                concurrency=args.concurrency,
                connection=connection,
                retry_errored=args.retry_errored,
                progress=not args.quiet,
                workers=args.workers,
                durations=durations,
            )
        )
        paths = [path]
    else:
        if not args.dataset or not args.model:
            raise InputError("evalnb run", None, None, "give a DATASET and at least one --model")
        if args.retry_errored:
            raise InputError("evalnb run", None, "--retry-errored", "only with --resume RUN_DIR")
        judges = _judges(args.judge)
        cases = load_cases(
            dataset_path(args.dataset),
            guidance=_guidance_versions(args.guidance),
            judge=judges[0] if judges else None,
            extra_judges=judges[1:],
            models=args.model,
            connection=_connection(args, Connection()),
            filters=Filters(tags=args.tag, task_ids=args.task),
        )
        if not cases:
            raise InputError(args.dataset, None, None, "no task matches --tag/--task")
        # one run folder per model and guidance version
        groups: dict[str | None, list[Any]] = {}
        for case in cases:
            groups.setdefault(getattr(case, "guidance", None), []).append(case)
        paths = []
        for guidance, group in groups.items():
            paths += asyncio.run(
                run_cases(
                    group,
                    args.model,
                    args.out,
                    concurrency=args.concurrency or 8,
                    epochs=args.epochs,
                    max_turns=args.max_turns,
                    dataset=args.dataset,
                    dataset_sha256=dataset_sha256(dataset_path(args.dataset)),
                    guidance=guidance,
                    connection=_connection(args, Connection()),
                    task_timeout_s=args.task_timeout,
                    seed=args.seed,
                    sim_sleep=args.sim_sleep,
                    shard=parse_shard(args.shard) if args.shard else None,
                    filters=Filters(tags=args.tag, task_ids=args.task),
                    progress=not args.quiet,
                    durations=durations,
                    workers=args.workers,
                    judges=judges,
                )
            )
    if not args.quiet:
        from evalnb._analysis.load import load
        from evalnb._present.report import terminal_report

        print(terminal_report(load(*paths)))
    for path in paths:
        print(f"run written: {path}")
    return 0


def _durations(run_dir: str) -> dict[str, float]:
    """``--durations-from``: the mean duration (ms) of each task in an earlier run folder."""
    from evalnb._runtime.schedule import durations_from

    try:
        return durations_from(run_dir)
    except InputError as exc:
        raise InputError(exc.file, exc.line, exc.field or "--durations-from", exc.message) from None


def _judges(values: list[str]) -> list[str]:
    """The ``--judge`` values, in order; one given twice is refused."""
    for i, value in enumerate(values):
        if value in values[:i]:
            raise InputError("evalnb run", None, "--judge", f"judge {value!r} given twice")
    return values


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
