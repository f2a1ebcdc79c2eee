"""Load and validate task datasets: JSONL tasks or a bashkit-eval result JSON.

A JSONL dataset has one task per line in the bashkit-eval format (``id``,
``category``, ``description``, optional ``system``, ``prompt``, ``files``,
``expectations``) plus our optional ``solution`` and ``tags``. Blank lines and
lines starting with ``#`` or ``//`` are skipped. A bashkit-eval result JSON
(recognised by its ``.json`` suffix) is accepted wherever a dataset is: its tasks are
those :func:`evalnb._formats.bashkit_eval.read_bashkit_eval` reads (the one reader of
that file), so a replay of it and the file itself have the same tasks and categories.

Every problem raises :class:`evalnb.errors.InputError` naming file, line and field,
before any model is called.

Example:
    >>> import tempfile, pathlib
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "t.jsonl"
    >>> _ = p.write_text('# a comment\\n{"id":"a","category":"c","prompt":"p"}\\n')
    >>> [t.id for t in load_tasks(p)]
    ['a']
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from evalnb.errors import InputError, from_validation_error, parse_json, read_input
from evalnb.records import Task


def load_tasks(path: str | Path) -> list[Task]:
    """Load a JSONL task file or a bashkit-eval result JSON; raise InputError if invalid.

    Example:
        >>> load_tasks("does/not/exist.jsonl")
        Traceback (most recent call last):
        ...
        evalnb.errors.InputError: does/not/exist.jsonl: file not found
    """
    path = Path(path)
    text = read_input(path)
    if not text.strip():
        raise InputError(path, None, None, "empty dataset: no tasks")
    if path.suffix == ".json":
        return _load_result_json(path)
    return _load_jsonl(path, text)


def dataset_sha256(path: str | Path) -> str:
    """The sha256 of a dataset (recorded in ``run.json``, checked by ``--resume``).

    A file hashes its bytes; a folder (of scenarios) hashes every file under it,
    with its relative path, in sorted order.

    Example:
        >>> import tempfile, pathlib
        >>> p = pathlib.Path(tempfile.mkdtemp()) / "x"; _ = p.write_text("")
        >>> dataset_sha256(p)[:12]
        'e3b0c44298fc'
    """
    path = Path(path)
    if path.is_file():
        return hashlib.sha256(path.read_bytes()).hexdigest()
    digest = hashlib.sha256()
    for file in sorted(p for p in path.rglob("*") if p.is_file()):
        digest.update(str(file.relative_to(path)).encode() + b"\0" + file.read_bytes())
    return digest.hexdigest()


def _load_jsonl(path: Path, text: str) -> list[Task]:
    tasks: list[Task] = []
    seen: dict[str, int] = {}
    # records end at "\n" only: U+2028, U+2029 and U+0085 are valid inside JSON strings
    for lineno, line in enumerate(text.split("\n"), start=1):
        stripped = line.strip()
        if not stripped or stripped.startswith(("#", "//")):
            continue
        raw = parse_json(stripped, path, lineno)
        if not isinstance(raw, dict):
            raise InputError(path, lineno, None, "a task must be a JSON object")
        task = _task(path, lineno, raw)
        if task.id in seen:
            raise InputError(
                path, lineno, "id", f"duplicate id {task.id!r} (first on line {seen[task.id]})"
            )
        seen[task.id] = lineno
        tasks.append(task)
    if not tasks:
        raise InputError(path, None, None, "empty dataset: no tasks")
    return tasks


def _load_result_json(path: Path) -> list[Task]:
    from evalnb._formats.bashkit_eval import read_bashkit_eval  # loading runs need not read it

    _, records = read_bashkit_eval(path)
    if not records:
        raise InputError(path, None, "results", "no tasks in result file")
    return [record.task for record in records]


def _task(path: Path, line: int, raw: dict[str, Any]) -> Task:
    try:
        return Task.model_validate(raw)
    except ValidationError as exc:
        raise from_validation_error(path, line, exc) from None
