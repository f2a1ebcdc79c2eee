"""The ``evalnb`` command: one module per subcommand, each with a ``register(sub)``.

Exit codes: 0 success; 1 a check failed (``validate`` found a broken task, or
``compare --fail-on-regression`` found a significant regression); 2 bad
input or any other evalnb error (the message names the file, the line and the field);
130 interrupted.

Example:
    >>> main(["summary", "no-such-results-*.json"])  # the error goes to stderr
    2
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from evalnb._cli import (
    analyses,
    compare,
    demo,
    export,
    imports,
    merge,
    notebooks,
    run,
    summary,
    validate,
)
from evalnb._cli.args import CommandParser
from evalnb._version import __version__
from evalnb.errors import EvalnbError

SUBCOMMANDS = (
    run,
    validate,
    summary,
    compare,
    analyses,
    imports,
    export,
    merge,
    demo,
    notebooks,
)


def main(argv: Sequence[str] | None = None) -> int:
    """Parse arguments, run the subcommand, and return the exit code.

    Every evalnb error becomes one ``error: ...`` line on stderr and exit 2, never a
    traceback; so does an invalid argument (argparse's usage message).

    Example:
        >>> main(["run", "missing.jsonl", "--model", "reference"])  # error on stderr
        2
        >>> main(["run", "tasks.jsonl", "--model", "reference", "--epochs", "0"])
        2
    """
    parser = _parser(complete=False)
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # --help (0) or a usage error (2)
        return exc.code if isinstance(exc.code, int) else 2
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    try:
        return args.func(args) or 0
    except EvalnbError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except BrokenPipeError:  # output piped into `head` and cut: not an error
        sys.stderr.close()
        return 0
    except KeyboardInterrupt:
        print("interrupted: resume with `evalnb run --resume <run folder>`", file=sys.stderr)
        return 130


def _parser(*, complete: bool = True) -> argparse.ArgumentParser:
    """``evalnb``'s parser with every argument of every command (the CLI reference reads
    it); with ``complete=False``, as :func:`main` builds it, a command's arguments that
    read the readers' registry are added only when that command parses
    (:class:`~evalnb._cli.args.CommandParser`)."""
    parser = argparse.ArgumentParser(
        prog="evalnb", description="Measure how well LLMs use command-line tools."
    )
    parser.add_argument("--version", action="version", version=f"evalnb {__version__}")
    sub = parser.add_subparsers(metavar="COMMAND", parser_class=CommandParser)
    for command in SUBCOMMANDS:
        command.register(sub)
    if complete:
        for command_parser in sub.choices.values():
            command_parser.complete()
    return parser
