"""``evalnb export``: write runs in another tool's format (``inspect``: Inspect AI logs)."""

from __future__ import annotations

import argparse
from typing import Any

from evalnb.cli.args import out_folder


def register(sub: Any) -> None:
    """Add ``export`` to the subcommand parsers."""
    exp = sub.add_parser("export", help="write runs as another tool's logs (Inspect AI)")
    exp.add_argument("format", choices=["inspect"])
    exp.add_argument("runs", nargs="+", metavar="RUN_DIR", help="evalnb run folders")
    exp.add_argument(
        "--out", type=out_folder, default="logs", help="where the logs go (default logs/)"
    )
    exp.set_defaults(func=_cmd_export)


def _cmd_export(args: argparse.Namespace) -> int:
    from evalnb.formats.inspect_write import write_inspect_log

    for run_dir in args.runs:
        print(f"log written: {write_inspect_log(run_dir, args.out)}")
    return 0
