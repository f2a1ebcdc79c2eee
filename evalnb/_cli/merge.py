"""``evalnb merge``: combine shard runs (``evalnb run --shard i/N``) into one run folder."""

from __future__ import annotations

import argparse
from typing import Any


def register(sub: Any) -> None:
    """Add ``merge`` to the subcommand parsers."""
    merge = sub.add_parser("merge", help="combine the shard runs of one run into one run folder")
    merge.add_argument("shards", nargs="+", metavar="SHARD_DIR", help="the N shard run folders")
    merge.add_argument("--out", required=True, metavar="RUN_DIR", help="the merged run folder")
    merge.set_defaults(func=_cmd_merge)


def _cmd_merge(args: argparse.Namespace) -> int:
    from evalnb._store.merge import merge_shards

    print(f"run written: {merge_shards(args.shards, args.out)}")
    return 0
