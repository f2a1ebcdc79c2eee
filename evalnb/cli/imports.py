"""``evalnb import``: write run folders from foreign results.

Every format :mod:`evalnb.formats.detect` can read is importable by its key
(``mira``, ``terminal-bench``, ...), besides ``claude-code`` and ``transcript``. All
inputs are read before anything is written, and an existing run folder is refused
before the first write, so a failed import leaves nothing half-written.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from evalnb.cli.args import out_folder
from evalnb.errors import InputError
from evalnb.formats.detect import Probe, importable, recognise


def register(sub: Any) -> None:
    """Add ``import`` to the subcommand parsers."""
    imp = sub.add_parser("import", help="write run folders from foreign results")
    imp.add_argument("format", choices=[*importable(), "claude-code", "transcript"])
    imp.add_argument("files", nargs="+", help="result files or folders of that format")
    imp.add_argument(
        "--out", type=out_folder, default="runs", help="where run folders go (default runs/)"
    )
    imp.add_argument(
        "--target",
        help="the tool's command (transcript: required; claude-code: optional, "
        "scores its no_transcript_errors gate)",
    )
    imp.set_defaults(func=_cmd_import)


def _cmd_import(args: argparse.Namespace) -> int:
    if args.format in importable():
        folders = import_format(args.format, args.files, args.out)
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


def import_format(key: str, paths: list[str], out: str | Path) -> list[Path]:
    """Read every input of format ``key``, then write one run folder per run read.

    Example:
        >>> import tempfile
        >>> import_format("terminal-bench", ["/"], tempfile.mkdtemp())
        Traceback (most recent call last):
        ...
        evalnb.errors.InputError: /: not a Terminal-Bench run folder
    """
    from evalnb.store import RunStore

    fmt = importable()[key]
    runs = []
    for path in map(Path, paths):
        if not fmt.recognises(Probe(path)):
            seen = recognise(path)
            what = f" (it looks like {seen.name})" if seen else ""
            raise InputError(path, None, None, f"not {fmt.name}{what}")
        assert fmt.read is not None
        runs += fmt.read(path)
    ids = [meta.run_id for meta, _ in runs]
    for meta, _ in runs:
        if ids.count(meta.run_id) > 1:
            raise InputError(meta.run_id, None, "run_id", "read twice; give each input once")
        if (Path(out) / meta.run_id).exists():
            msg = "run folder already exists; remove it first"
            raise InputError(Path(out) / meta.run_id, None, None, msg)
    return [RunStore.write_records(out, meta, records) for meta, records in runs]
