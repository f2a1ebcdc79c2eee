"""Argument types shared by the subcommands: numbers are checked where they are parsed."""

from __future__ import annotations

import argparse
import math
from collections.abc import Callable
from typing import TypeVar

N = TypeVar("N", int, float)


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
