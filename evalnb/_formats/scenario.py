"""Load scenario and rubric YAML (spec 002) with errors that name file, line and field.

Paths inside a scenario are relative to the scenario file's folder; the builtin's
Python file is imported and the judge's rubric loaded during validation, so every
problem shows before a model is called. The models are in
:mod:`evalnb.records.scenario`.

Example:
    >>> load_scenario("no/such/scenario.yaml")
    Traceback (most recent call last):
    ...
    evalnb.errors.InputError: no/such/scenario.yaml: file not found
"""

from __future__ import annotations

import hashlib
import importlib.util
import sys
from collections.abc import Callable
from functools import cache
from pathlib import Path
from typing import Any, cast

from evalnb._formats.yamlio import load_model
from evalnb.records.scenario import LoadContext, Rubric, Scenario


def load_scenario(path: str | Path) -> Scenario:
    """Load and validate a scenario YAML; raise :class:`~evalnb.errors.InputError` if invalid.

    Example:
        >>> import tempfile, pathlib
        >>> p = pathlib.Path(tempfile.mkdtemp()) / "s.yaml"
        >>> _ = p.write_text("name: s\\ntarget: {binary: wc, mode: local}\\ntask: Count.\\n")
        >>> print(load_scenario(p).target.pattern)  # the default: wc as a word, its subcommand
        wc(?:\\s+([^\\s;&|)]+)|[^\\w.-]|$)
        >>> _ = p.write_text("name: s\\ntarget: {binary: wc, short_help: yes}\\ntask: Count.\\n")
        >>> load_scenario(p).target.short_help
        True
    """
    path = Path(path)
    context: LoadContext = {
        "base_dir": path.resolve().parent,
        "load_rubric": load_rubric,
        "load_callable": load_callable,
    }
    return load_model(path, Scenario, display=str(path), context=context)


def load_rubric(path: str | Path) -> Rubric:
    """Load and validate a rubric YAML (weights summing to 1).

    Example:
        >>> import tempfile, pathlib
        >>> p = pathlib.Path(tempfile.mkdtemp()) / "r.yaml"
        >>> _ = p.write_text("criteria:\\n  - {id: ok, weight: 1.0, description: Done}\\n")
        >>> [c.id for c in load_rubric(p).criteria]
        ['ok']
    """
    return load_model(Path(path), Rubric, display=str(path))


@cache
def load_callable(ref: str) -> Callable[..., Any]:
    """Import ``/abs/file.py:name`` once and return the callable (ValueError if unusable).

    Example:
        >>> load_callable("/nonexistent.py:main")
        Traceback (most recent call last):
        ...
        ValueError: importing /nonexistent.py failed: FileNotFoundError: [Errno 2] No such file \
or directory: '/nonexistent.py'
    """
    file, _, name = ref.rpartition(":")
    module_name = "evalnb_tool_" + hashlib.sha256(file.encode()).hexdigest()[:12]
    spec = importlib.util.spec_from_file_location(module_name, file)
    if spec is None or spec.loader is None:
        raise ValueError(f"cannot import {file}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module  # dataclasses and typing look the module up by name
    try:
        spec.loader.exec_module(module)
    except Exception as exc:
        del sys.modules[module_name]
        raise ValueError(f"importing {file} failed: {type(exc).__name__}: {exc}") from None
    fn = getattr(module, name, None)
    if not callable(fn):
        raise ValueError(f"{file} has no callable {name!r}")
    return cast("Callable[..., Any]", fn)
