"""``evalnb demo``: the offline demo (runs, reports, charts, notebooks)."""

from __future__ import annotations

import argparse
from typing import Any

from evalnb._cli.args import out_folder


def register(sub: Any) -> None:
    """Add ``demo`` to the subcommand parsers."""
    demo = sub.add_parser("demo", help="run the offline demo: runs, reports, charts, notebooks")
    demo.add_argument(
        "--runs",
        type=out_folder,
        default="runs/demo",
        help="run folders go here (default runs/demo)",
    )
    demo.add_argument(
        "--out",
        type=out_folder,
        default="reports/demo",
        help="reports, charts, notebooks (default reports/demo)",
    )
    demo.add_argument("--no-notebooks", action="store_true", help="skip executing the notebooks")
    demo.set_defaults(func=_cmd_demo)


def _cmd_demo(args: argparse.Namespace) -> int:
    from evalnb._demo import run_demo

    run_demo(args.runs, args.out, notebooks=not args.no_notebooks)
    return 0
