"""The ``evalnb`` command.

Exit codes: 0 success; 1 a check failed (``validate`` found a broken task); 2 bad
input (the message names the file, the line and the field).

Example:
    >>> main(["summary", "no-such-results-*.json"])  # the error goes to stderr
    2
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from collections.abc import Sequence
from pathlib import Path

from evalnb.errors import InputError
from evalnb.version import __version__


def main(argv: Sequence[str] | None = None) -> int:
    """Parse arguments, run the subcommand, and return the exit code.

    Example:
        >>> main(["run", "missing.jsonl", "--model", "reference"])  # error on stderr
        2
    """
    parser = _parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    try:
        return args.func(args) or 0
    except InputError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except BrokenPipeError:  # output piped into `head` and cut: not an error
        sys.stderr.close()
        return 0
    except KeyboardInterrupt:
        print("interrupted: resume with `evalnb run --resume <run folder>`", file=sys.stderr)
        return 130


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="evalnb", description="Measure how well LLMs use command-line tools."
    )
    parser.add_argument("--version", action="version", version=f"evalnb {__version__}")
    sub = parser.add_subparsers(metavar="COMMAND")

    run = sub.add_parser("run", help="run models on a dataset and record every call")
    run.add_argument(
        "dataset", nargs="?", help="tasks JSONL, bashkit-eval result JSON, scenario YAML or folder"
    )
    run.add_argument(
        "--model",
        action="append",
        default=[],
        help="anthropic/<m>, openai/<m>, reference, scripted:<file>, replay:<src>, sim/<persona>"
        " (repeatable)",
    )
    run.add_argument("--concurrency", type=int, default=8, help="attempts in flight (default 8)")
    run.add_argument("--max-turns", type=int, default=10, help="turn limit per task (default 10)")
    run.add_argument("--epochs", type=int, default=1, help="repeat each task K times")
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

    val = sub.add_parser("validate", help="prove each task's checks are honest")
    val.add_argument("datasets", nargs="+")
    val.set_defaults(func=_cmd_validate)

    summ = sub.add_parser("summary", help="spec 000 summary of runs and result files")
    summ.add_argument("paths", nargs="+", help="run folders, result JSON files, globs")
    summ.add_argument("--json", action="store_true", help="one JSON object per run")
    summ.add_argument("--prices", help="token price table (default data/prices.yaml)")
    summ.set_defaults(func=_cmd_summary)

    rep = sub.add_parser("report", help="write report.md, report.json and comparison.md")
    rep.add_argument("paths", nargs="+", help="run folders, result JSON files, globs")
    rep.add_argument("--out", default="reports/latest", help="folder (default reports/latest)")
    rep.add_argument("--prices", help="token price table (default data/prices.yaml)")
    rep.set_defaults(func=_cmd_report)

    imp = sub.add_parser("import", help="write run folders from foreign results")
    imp.add_argument("format", choices=["bashkit-eval", "claude-code", "transcript"])
    imp.add_argument("files", nargs="+")
    imp.add_argument("--out", default="runs", help="where run folders go (default runs/)")
    imp.add_argument("--target", help="the tool's command (claude-code, transcript)")
    imp.set_defaults(func=_cmd_import)

    demo = sub.add_parser("demo", help="run the offline demo: runs, reports, charts, notebooks")
    demo.add_argument("--no-notebooks", action="store_true", help="skip executing the notebooks")
    demo.set_defaults(func=_cmd_demo)
    return parser


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
    from evalnb.runtime.cases import load_cases
    from evalnb.runtime.runner import resume, run_cases

    if args.resume:
        from evalnb.store import RunStore

        meta = RunStore.open(args.resume).meta
        dataset = args.dataset or meta.dataset
        if not dataset:
            raise InputError(args.resume, None, "dataset", "run.json names no dataset")
        if meta.dataset_sha256 and dataset_sha256(dataset) != meta.dataset_sha256:
            raise InputError(dataset, None, None, "dataset changed since the run started")
        filters = meta.settings.filters
        cases = _select(load_cases(dataset), filters.tags, filters.task_ids)
        paths = [asyncio.run(resume(args.resume, cases, progress=not args.quiet))]
    else:
        if not args.dataset or not args.model:
            raise InputError("evalnb run", None, None, "give a DATASET and at least one --model")
        try:
            cases = load_cases(
                args.dataset,
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
                        dataset_sha256=dataset_sha256(args.dataset),
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


def _cmd_validate(args: argparse.Namespace) -> int:
    from evalnb.formats.tasks import load_tasks
    from evalnb.runtime.validate import validate_tasks, validation_table

    broken: list[str] = []
    for dataset in args.datasets:
        tasks = load_tasks(dataset)
        results = asyncio.run(validate_tasks(tasks))
        print(f"{dataset}: {len(tasks)} tasks")
        print(validation_table(results))
        for v in results:
            for w in v.warnings:
                print(f"warning: {dataset}: {v.task_id}: {w}", file=sys.stderr)
            for p in v.problems:
                print(f"BROKEN: {dataset}: {v.task_id}: {p}", file=sys.stderr)
        broken += [f"{dataset}:{v.task_id}" for v in results if not v.ok]
    if broken:
        print(f"{len(broken)} broken task(s): {', '.join(broken)}", file=sys.stderr)
        return 1
    print("every task passes the three rules")
    return 0


def _cmd_summary(args: argparse.Namespace) -> int:
    from evalnb.analysis.cost import load_prices
    from evalnb.analysis.load import load
    from evalnb.present.report import summary_records, terminal_report

    prices = load_prices(args.prices)
    runs = load(*args.paths)
    if args.json:
        for record in summary_records(runs, prices):
            print(json.dumps(record, default=str))
    else:
        print(terminal_report(runs, prices))
    return 0


def _cmd_report(args: argparse.Namespace) -> int:
    from evalnb.analysis.cost import load_prices
    from evalnb.analysis.load import load
    from evalnb.present.report import write_report

    prices = load_prices(args.prices)
    for name, path in write_report(load(*args.paths), args.out, prices).items():
        print(f"{name:<14} {path}")
    return 0


def _cmd_import(args: argparse.Namespace) -> int:
    if args.format == "bashkit-eval":
        from evalnb.formats.bashkit_eval import import_bashkit_eval

        folders = import_bashkit_eval(args.files, args.out)
    elif not args.target:
        raise InputError("evalnb import", None, "--target", f"{args.format} needs --target")
    elif args.format == "claude-code":
        from evalnb.formats.claude_code import import_claude_code

        folders = import_claude_code(args.files, args.out, args.target)
    else:
        from evalnb.formats.transcript import import_transcripts

        folders = [import_transcripts(args.files, args.out, args.target)]
    for folder in folders:
        print(f"run written: {folder}")
    return 0


def _cmd_demo(args: argparse.Namespace) -> int:
    from evalnb.demo import run_demo

    run_demo(notebooks=not args.no_notebooks)
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
