"""``evalnb import``: write run folders from foreign results."""

from __future__ import annotations

import argparse
from typing import Any

from evalnb.errors import InputError


def register(sub: Any) -> None:
    """Add ``import`` to the subcommand parsers."""
    imp = sub.add_parser("import", help="write run folders from foreign results")
    imp.add_argument("format", choices=["bashkit-eval", "claude-code", "transcript"])
    imp.add_argument("files", nargs="+")
    imp.add_argument("--out", default="runs", help="where run folders go (default runs/)")
    imp.add_argument(
        "--target",
        help="the tool's command (transcript: required; claude-code: optional, "
        "scores its no_transcript_errors gate)",
    )
    imp.set_defaults(func=_cmd_import)


def _cmd_import(args: argparse.Namespace) -> int:
    if args.format == "bashkit-eval":
        from evalnb.formats.bashkit_eval import import_bashkit_eval

        folders = import_bashkit_eval(args.files, args.out)
    elif args.format == "claude-code":
        from evalnb.formats.claude_code import import_claude_code

        folders = import_claude_code(args.files, args.out, args.target)
    elif not args.target:
        raise InputError("evalnb import", None, "--target", f"{args.format} needs --target")
    else:
        from evalnb.formats.transcript import import_transcripts

        folders = [import_transcripts(args.files, args.out, args.target)]
    for folder in folders:
        print(f"run written: {folder}")
    return 0
