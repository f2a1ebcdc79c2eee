"""Arguments shared by the subcommands: numbers, URLs and output folders are checked
where they are parsed, and the readers' declared options are flags.

Building ``evalnb``'s parser imports no reader: the readers' registry
(:mod:`evalnb._formats.detect`) is read only when a command that takes reader options
or a format name parses its arguments or prints its help (:class:`CommandParser`).
"""

from __future__ import annotations

import argparse
import math
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, TypeVar

from evalnb._runtime.providers.endpoint import split_base_url

N = TypeVar("N", int, float)

MAX_EPOCHS = 1_000
"""The most ``--epochs``: every attempt of a run is planned up front, so a count such as
10^11 would exhaust memory before the first attempt started."""


def positive_int(text: str) -> int:
    """An integer of at least 1 (``--epochs``, ``--max-turns``, ``--concurrency``).

    Example:
        >>> positive_int("3")
        3
        >>> positive_int("0")
        Traceback (most recent call last):
        argparse.ArgumentTypeError: expected an integer >= 1, got '0'
    """
    return _checked(text, int, lambda v: v >= 1, "an integer >= 1")


def epoch_count(text: str) -> int:
    """An integer from 1 to :data:`MAX_EPOCHS` (``--epochs``).

    Example:
        >>> epoch_count("5")
        5
        >>> epoch_count("100000000000")
        Traceback (most recent call last):
        argparse.ArgumentTypeError: expected an integer from 1 to 1000, got '100000000000'
    """
    return _checked(text, int, lambda v: 1 <= v <= MAX_EPOCHS, f"an integer from 1 to {MAX_EPOCHS}")


def non_negative_int(text: str) -> int:
    """An integer of at least 0 (``--max-retries``).

    Example:
        >>> non_negative_int("0")
        0
        >>> non_negative_int("-3")
        Traceback (most recent call last):
        argparse.ArgumentTypeError: expected an integer >= 0, got '-3'
    """
    return _checked(text, int, lambda v: v >= 0, "an integer >= 0")


def positive_float(text: str) -> float:
    """A finite number above 0 (``--request-timeout``, ``--task-timeout``).

    Example:
        >>> positive_float("2.5")
        2.5
        >>> positive_float("inf")
        Traceback (most recent call last):
        argparse.ArgumentTypeError: expected a number > 0, got 'inf'
    """
    return _checked(text, float, lambda v: math.isfinite(v) and v > 0, "a number > 0")


def http_url(text: str) -> str:
    """A base URL: ``http://`` or ``https://`` with a host (``--base-url``).

    Example:
        >>> http_url("localhost:8000/v1")
        Traceback (most recent call last):
        argparse.ArgumentTypeError: base URL 'localhost:8000/v1' is not an http:// or https:// ...
    """
    try:
        split_base_url(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
    return text


def out_folder(text: str) -> str:
    """A folder to write into: it may be missing (it is created), but not a file.

    Example:
        >>> out_folder("/dev/null")
        Traceback (most recent call last):
        argparse.ArgumentTypeError: '/dev/null' exists and is not a folder
    """
    if Path(text).exists() and not Path(text).is_dir():
        raise argparse.ArgumentTypeError(f"{text!r} exists and is not a folder")
    return text


def k_list(text: str) -> list[int]:
    """Comma-separated integers of at least 1 (``--k 1,3,5``).

    Example:
        >>> k_list("1,3, 5")
        [1, 3, 5]
        >>> k_list("1,0")
        Traceback (most recent call last):
        argparse.ArgumentTypeError: expected an integer >= 1, got '0'
    """
    return [positive_int(part.strip()) for part in text.split(",")]


def probability(text: str) -> float:
    """A number strictly between 0 and 1 (``--alpha``).

    Example:
        >>> probability("0.05")
        0.05
        >>> probability("1")
        Traceback (most recent call last):
        argparse.ArgumentTypeError: expected a number between 0 and 1, got '1'
    """
    return _checked(text, float, lambda v: 0 < v < 1, "a number between 0 and 1")


def _checked(text: str, convert: Callable[[str], N], ok: Callable[[N], bool], wanted: str) -> N:
    """``convert(text)`` when it parses and ``ok`` holds, else argparse's usage error."""
    try:
        value = convert(text)
    except ValueError:
        value = None
    if value is None or not ok(value):
        raise argparse.ArgumentTypeError(f"expected {wanted}, got {text!r}")
    return value


class CommandParser(argparse.ArgumentParser):
    """A subcommand's parser that adds some of its arguments only when it first parses
    (or prints its help), so that building the ``evalnb`` parser stays cheap.

    Example:
        >>> parser = CommandParser()
        >>> parser.add_later(add_reader_options)
        >>> [a.dest for a in parser._actions]
        ['help']
        >>> parser.parse_args(["--target", "notes"]).target
        'notes'
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._later: list[Callable[[argparse.ArgumentParser], None]] = []

    def add_later(self, add: Callable[[argparse.ArgumentParser], None]) -> None:
        """Call ``add(self)`` before this parser first parses."""
        self._later.append(add)

    def complete(self) -> None:
        """Add the arguments left for later now."""
        while self._later:
            self._later.pop(0)(self)

    def parse_known_args(  # type: ignore[override]  # typeshed overloads the namespace
        self, args: Sequence[str] | None = None, namespace: argparse.Namespace | None = None
    ) -> tuple[argparse.Namespace, list[str]]:
        """Add the arguments left for later, then parse as argparse does."""
        self.complete()
        return super().parse_known_args(args, namespace)


def add_reader_options(parser: argparse.ArgumentParser) -> None:
    """A ``--<name>`` flag for each option a reader declares, its help naming the readers.

    Example:
        >>> parser = argparse.ArgumentParser()
        >>> add_reader_options(parser)
        >>> reader_options(parser.parse_args(["--target", "notes"]))
        {'target': 'notes'}
    """
    from evalnb._formats.detect import declared_options, formats

    for name, option in declared_options().items():
        takers = [
            f"{f.key}{' (required)' if o.required else ''}: {o.help}"
            for f in formats()
            for o in f.options
            if o.name == name
        ]
        parser.add_argument(option.flag, dest=name, help="; ".join(takers))


def reader_options(args: argparse.Namespace) -> dict[str, str]:
    """The reader options given on the command line, by name (see :func:`add_reader_options`).

    Example:
        >>> reader_options(argparse.Namespace(target=None))
        {}
    """
    from evalnb._formats.detect import declared_options

    return {name: value for name in declared_options() if (value := getattr(args, name, None))}
