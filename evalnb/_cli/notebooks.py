"""``evalnb notebooks DIR``: copy the analysis notebooks out of the installed package."""

from __future__ import annotations

import argparse
from typing import Any

from evalnb._cli.args import out_folder


def register(sub: Any) -> None:
    """Add ``notebooks`` to the subcommand parsers."""
    nbs = sub.add_parser("notebooks", help="copy the analysis notebooks into a folder")
    nbs.add_argument("dir", type=out_folder, help="destination folder (created)")
    nbs.add_argument("--force", action="store_true", help="overwrite notebooks already there")
    nbs.set_defaults(func=_cmd_notebooks)


def _cmd_notebooks(args: argparse.Namespace) -> int:
    from evalnb._resources import copy_notebooks

    for path in copy_notebooks(args.dir, force=args.force):
        print(f"notebook written: {path}")
    print(
        "open them with `jupyter lab` (pip install 'evalnb[notebooks]' jupyterlab); "
        "they read EVALNB_RUNS or make the demo runs under ./runs/demo"
    )
    return 0
