"""``evalnb compare RUN_A RUN_B``: a paired comparison of two runs on their shared tasks."""

from __future__ import annotations

import argparse
import json
from typing import Any, cast


def register(sub: Any) -> None:
    """Add ``compare`` to the subcommand parsers."""
    cmp = sub.add_parser(
        "compare",
        help="paired comparison of two runs on their shared tasks (exact tests for few tasks)",
    )
    cmp.add_argument("run_a", metavar="RUN_A", help="run folder or result file of run A")
    cmp.add_argument("run_b", metavar="RUN_B", help="run folder or result file of run B")
    cmp.add_argument(
        "--include-errored",
        action="store_true",
        help="count errored attempts as failed (default: leave them out and count them)",
    )
    cmp.add_argument("--json", action="store_true", help="the figures as one JSON object")
    cmp.set_defaults(func=_cmd_compare)


def _cmd_compare(args: argparse.Namespace) -> int:
    from evalnb.analysis.load import load
    from evalnb.analysis.metrics import compare
    from evalnb.analysis.runs import Runs
    from evalnb.errors import InputError

    runs_a, runs_b = (cast(Runs, load(path)) for path in (args.run_a, args.run_b))
    for path, runs in ((args.run_a, runs_a), (args.run_b, runs_b)):
        if runs.runs.height != 1:
            raise InputError(path, None, "run", f"expected one run, found {runs.runs.height}")
    id_a = runs_a.runs.get_column("run_id").item()
    id_b = runs_b.runs.get_column("run_id").item()
    if id_a == id_b:
        raise InputError(
            args.run_b, None, "run_id", f"the same run as RUN_A ({id_a}): nothing to compare"
        )
    try:
        result = compare(
            Runs.concat([runs_a, runs_b]), id_a, id_b, include_errored=args.include_errored
        )
    except ValueError as exc:
        raise InputError(args.run_b, None, "task_id", str(exc)) from None
    if args.json:
        print(json.dumps(result.as_frame().row(0, named=True), default=str))
    else:
        print(result)
    return 0
