"""Argument types shared by the subcommands: numbers are checked where they are parsed."""

from __future__ import annotations

import argparse
import math


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


def non_negative_int(text: str) -> int:
    """An integer of at least 0 (``--max-retries``).

    Example:
        >>> non_negative_int("0")
        0
        >>> non_negative_int("-3")
        Traceback (most recent call last):
        argparse.ArgumentTypeError: expected an integer >= 0, got '-3'
    """
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected an integer >= 0, got {text!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"expected an integer >= 0, got {text!r}")
    return value


def positive_float(text: str) -> float:
    """A finite number above 0 (``--request-timeout``, ``--task-timeout``).

    Example:
        >>> positive_float("2.5")
        2.5
        >>> positive_float("inf")
        Traceback (most recent call last):
        argparse.ArgumentTypeError: expected a number > 0, got 'inf'
    """
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number > 0, got {text!r}") from None
    if not math.isfinite(value) or value <= 0:
        raise argparse.ArgumentTypeError(f"expected a number > 0, got {text!r}")
    return value
