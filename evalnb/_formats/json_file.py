"""Reading a harness's JSON result file: parse, validate, locate and count.

The readers of JSON result files (bashkit-eval, scripting-eval, mira, llm-tool-test,
Terminal-Bench, and :func:`evalnb.load` for report files) share these: the text and
its strict parse (:func:`read_json`), validation whose error names the field and its
line (:func:`validate`, :func:`error_at`, :func:`line_of`), and the partial-run rule
for a file that holds fewer tasks than it says it ran (:func:`completeness`).

Example:
    >>> line_of('{"results": [\\n {"task": 1},\\n {"task": "x"}]}', ("results", 1, "task"))
    3
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Literal, TypeVar

from pydantic import BaseModel, ValidationError

from evalnb.errors import (
    InputError,
    PartialRunWarning,
    from_validation_error,
    parse_json,
    read_input,
    warn,
)

M = TypeVar("M", bound=BaseModel)


def read_json(path: Path) -> tuple[str, Any]:
    """The text and parsed JSON of ``path``; InputError (with the line) if unreadable.

    Example:
        >>> import tempfile, pathlib
        >>> p = pathlib.Path(tempfile.mkdtemp()) / "x.json"
        >>> _ = p.write_text('{"a": [1,\\n')
        >>> read_json(p)  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        evalnb.errors.InputError: ...x.json:2: invalid JSON: Expecting value (column 1)
    """
    text = read_input(path)
    return text, parse_json(text, path)


def validate(path: Path, text: str, doc: Any, model: type[M]) -> M:
    """Validate parsed JSON against ``model``; the InputError names the field and its line.

    Example:
        >>> class Doc(BaseModel):
        ...     results: list[int]
        >>> validate(Path("f.json"), '{"results": [1,\\n "x"]}', {"results": [1, "x"]}, Doc)
        Traceback (most recent call last):
        ...
        evalnb.errors.InputError: f.json:2: results.1: Input should be a valid integer, ...
    """
    try:
        return model.model_validate(doc)
    except ValidationError as exc:
        loc = tuple(exc.errors()[0]["loc"])
        raise from_validation_error(path, line_of(text, loc), exc) from None


def completeness(
    path: Path, present: int, expected: int, counted: str
) -> tuple[Literal["partial", "complete"], int | None]:
    """``(status, missing_tasks)`` of a run whose file holds ``present`` of the ``expected``
    tasks: ``("partial", expected - present)`` with a warning when fewer (``counted`` says
    where ``expected`` comes from), else ``("complete", None)``.

    Example:
        >>> completeness(Path("f.json"), 3, 3, "the file's summary says total_tasks=3")
        ('complete', None)
    """
    if present >= expected:
        return "complete", None
    warn(
        f"{path}: partial run: {present} tasks present but {counted}; every figure is "
        f"computed from the {present} tasks present",
        PartialRunWarning,
    )
    return "partial", expected - present


def line_of(text: str, loc: tuple[Any, ...]) -> int | None:
    """The line of the JSON value at ``loc`` (or of its nearest existing parent).

    Example:
        >>> line_of('{"a": [\\n 1,\\n {"b": 2}]}', ("a", 1, "b"))
        3
        >>> line_of('{"a": 1}', ("missing",))
        1
    """
    decoder = json.JSONDecoder()
    try:
        pos = _skip_blank(text, 0)
        for key in loc:
            inner = _skip_blank(text, pos + 1)
            if text[pos] == "{" and isinstance(key, str):
                found = _find_key(decoder, text, inner, key)
            elif text[pos] == "[" and isinstance(key, int):
                found = _find_index(decoder, text, inner, key)
            else:
                break
            if found is None:
                break
            pos = found
    except (ValueError, IndexError):
        return None
    return text.count("\n", 0, pos) + 1


def _find_key(decoder: json.JSONDecoder, text: str, pos: int, key: str) -> int | None:
    while text[pos] != "}":
        name, pos = decoder.raw_decode(text, pos)
        pos = _skip_blank(text, _skip_blank(text, pos) + 1)
        if name == key:
            return pos
        pos = _skip_value(decoder, text, pos)
    return None


def _find_index(decoder: json.JSONDecoder, text: str, pos: int, index: int) -> int | None:
    for _ in range(index):
        if text[pos] == "]":
            return None
        pos = _skip_value(decoder, text, pos)
    return None if text[pos] == "]" else pos


def _skip_value(decoder: json.JSONDecoder, text: str, pos: int) -> int:
    _, pos = decoder.raw_decode(text, pos)
    pos = _skip_blank(text, pos)
    if text[pos] == ",":
        pos = _skip_blank(text, pos + 1)
    return pos


def error_at(path: Path, text: str, loc: tuple[Any, ...], message: str) -> InputError:
    """An InputError at the JSON value ``loc`` of ``text``: its line and dotted field.

    Example:
        >>> print(error_at(Path("f.json"), '{"a":\\n [1, 2]}', ("a", 1), "too big"))
        f.json:2: a.1: too big
    """
    return InputError(path, line_of(text, loc), ".".join(map(str, loc)), message)


def _skip_blank(text: str, pos: int) -> int:
    """The position of the first non-whitespace character (JSON's four) from ``pos``."""
    while pos < len(text) and text[pos] in " \t\r\n":
        pos += 1
    return pos
