"""``evalnb import``: write run folders from foreign results; the only writer of imported runs.

Every format of the registry (:mod:`evalnb._formats.detect`) is importable by its key
(``mira``, ``terminal-bench``, ``claude-code``, ``transcript``, ...), and each reader's
declared options are flags (``--target``). All inputs are read before anything is
written, and an existing run folder is refused before the first write, so a failed
import leaves nothing half-written.
"""

from __future__ import annotations

import argparse
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from evalnb._cli.args import add_reader_options, out_folder, reader_options
from evalnb._formats.detect import Probe, importable, read_inputs, recognise
from evalnb.errors import InputError


def register(sub: Any) -> None:
    """Add ``import`` to the subcommand parsers (its arguments, which name the registry's
    formats, when it parses)."""
    imp = sub.add_parser("import", help="write run folders from foreign results")
    imp.add_later(_arguments)
    imp.set_defaults(func=_cmd_import)


def _arguments(imp: argparse.ArgumentParser) -> None:
    imp.add_argument("format", choices=list(importable()))
    imp.add_argument("files", nargs="+", help="result files or folders of that format")
    imp.add_argument(
        "--out", type=out_folder, default="runs", help="where run folders go (default runs/)"
    )
    add_reader_options(imp)


def _cmd_import(args: argparse.Namespace) -> int:
    for folder in import_format(args.format, args.files, args.out, reader_options(args)):
        print(f"run written: {folder}")
    return 0


def import_format(
    key: str,
    paths: Sequence[str | Path],
    out: str | Path,
    options: Mapping[str, str] | None = None,
) -> list[Path]:
    """Read every input of format ``key``, then write one run folder per run read.

    ``options`` are the reader's declared options (``{"target": "notes"}``); one the
    reader does not declare is an error.

    Example:
        >>> import tempfile
        >>> import_format("terminal-bench", ["/"], tempfile.mkdtemp())
        Traceback (most recent call last):
        ...
        evalnb.errors.InputError: /: not a Terminal-Bench run folder
    """
    from evalnb._store import RunStore

    fmt = importable()[key]
    for name in options or {}:
        if name not in {o.name for o in fmt.options}:
            raise InputError("evalnb import", None, name, f"{key} takes no --{name}")
    for path in map(Path, paths):
        if not fmt.recognises(Probe(path)):
            seen = recognise(path)
            what = f" (it looks like {seen.name})" if seen else ""
            raise InputError(path, None, None, f"not {fmt.name}{what}")
    runs = read_inputs(fmt, [Path(p) for p in paths], options)
    ids = [meta.run_id for meta, _ in runs]
    for meta, _ in runs:
        if ids.count(meta.run_id) > 1:
            raise InputError(meta.run_id, None, "run_id", "read twice; give each input once")
        if (Path(out) / meta.run_id).exists():
            msg = "run folder already exists; remove it first"
            raise InputError(Path(out) / meta.run_id, None, None, msg)
    return [RunStore.write_records(out, meta, records) for meta, records in runs]
