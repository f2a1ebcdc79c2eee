"""Argument types shared by the subcommands: numbers are checked where they are parsed."""

from __future__ import annotations

import argparse


def positive_int(text: str) -> int:
    """An integer of at least 1 (``--epochs``, ``--max-turns``, ``--concurrency``).

    Example:
        >>> positive_int("3")
        3
        >>> positive_int("0")
        Traceback (most recent call last):
        argparse.ArgumentTypeError: expected an integer >= 1, got '0'
    """
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected an integer >= 1, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected an integer >= 1, got {text!r}")
    return value
