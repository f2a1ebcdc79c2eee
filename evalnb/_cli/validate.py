"""``evalnb validate``: prove each task's checks (each scenario's gates) are honest."""

from __future__ import annotations

import argparse
import asyncio
import sys
from typing import Any


def register(sub: Any) -> None:
    """Add ``validate`` to the subcommand parsers."""
    val = sub.add_parser("validate", help="prove each task's checks are honest")
    val.add_argument(
        "datasets",
        nargs="+",
        help="task files, scenario YAML files or folders, or a built-in: bash, smoke, notes",
    )
    val.set_defaults(func=_cmd_validate)


def _cmd_validate(args: argparse.Namespace) -> int:
    from evalnb._formats.tasks import load_tasks
    from evalnb._resources import dataset_path
    from evalnb._runtime.validate import validate_scenarios, validate_tasks, validation_table

    broken: list[str] = []
    for dataset in args.datasets:
        path = dataset_path(dataset)
        if path.is_dir() or path.suffix in (".yaml", ".yml"):
            results = validate_scenarios(path)
            print(f"{dataset}: {len(results)} scenarios")
        else:
            results = asyncio.run(validate_tasks(load_tasks(path)))
            print(f"{dataset}: {len(results)} tasks")
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
    print("every task passes the three rules (every scenario: nothing done fails a gate)")
    return 0
