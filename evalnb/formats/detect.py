"""Format detection: which trace format a file or folder is, and which reader reads it.

Every reader module under :mod:`evalnb.formats` that reads runs defines ``FORMAT``, a
:class:`Format` naming what it recognises (a cheap look at the file's first bytes,
its JSON keys or a file directly inside a folder) and how to read it; a module that also names
inputs it will not read (a lone trial file, say) lists them all in ``FORMATS``.
:data:`READERS` lists those modules, in the order they are tried; the formats evalnb
recognises but cannot read (any CSV or zip file, binary data, ...) follow them in
:data:`RECOGNISED`, so an unsupported input is named ("a zip archive: not supported
yet") instead of failing on its bytes.

Example:
    >>> import json, tempfile, pathlib
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "table.csv"
    >>> _ = p.write_text("a,b\\n1,2\\n")
    >>> recognise(p).name
    'a CSV file'
"""

from __future__ import annotations

import importlib
import json
import os
from collections.abc import Callable
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any

from evalnb.records import RunMeta, TaskRecord

HEAD_BYTES = 65536
READERS = (
    "evalnb.formats.mira",
    "evalnb.formats.scripting_eval",
    "evalnb.formats.bashkit_eval",
    "evalnb.formats.llm_tool_test",
    "evalnb.formats.terminal_bench",
    "evalnb.formats.onetool_bench",
    "evalnb.formats.inspect_log",
    # issue 30: agent traces (each reader's registration is its module's FORMAT/FORMATS)
    "evalnb.formats.harbor",
    "evalnb.formats.atif",
    "evalnb.formats.codex",
    "evalnb.formats.gemini_cli",
    "evalnb.formats.swe_agent",
    "evalnb.formats.openhands",
    "evalnb.formats.otel",
)
"""Reader modules, each with a ``FORMAT``; tried in this order (most specific first)."""

Read = Callable[[Path], list[tuple[RunMeta, list[TaskRecord]]]]


class Probe:
    """A lazy look at one path: its first bytes, its JSON document, its first JSON line.

    Nothing is read until a recogniser asks, and each thing is read once.

    Example:
        >>> Probe("/").is_dir, Probe("/no/such/file").doc is None
        (True, True)
    """

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.is_dir = self.path.is_dir()

    @cached_property
    def head(self) -> bytes:
        """The first :data:`HEAD_BYTES` bytes of a file (empty for a folder or a missing file)."""
        if not self.path.is_file():
            return b""
        with self.path.open("rb") as fh:
            return fh.read(HEAD_BYTES)

    @cached_property
    def doc(self) -> Any:
        """The parsed JSON of a file that starts with ``{`` or ``[`` (None otherwise)."""
        if self.head.lstrip()[:1] not in (b"{", b"["):
            return None
        try:
            return json.loads(self.path.read_text(encoding="utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError, RecursionError):
            return None

    @cached_property
    def first_line(self) -> Any:
        """The parsed first line of a JSON Lines file (None when it is not one JSON value)."""
        line = self.head.split(b"\n", 1)[0].strip()
        try:
            return json.loads(line) if line.startswith(b"{") else None
        except (UnicodeDecodeError, json.JSONDecodeError, RecursionError):
            return None

    def keys(self) -> set[str]:
        """The top-level keys of a JSON object file (empty otherwise)."""
        return set(self.doc) if isinstance(self.doc, dict) else set()

    def child(self, name: str) -> Probe:
        """A probe of ``name`` inside this folder."""
        return Probe(self.path / name)


@dataclass(frozen=True)
class Format:
    """One format evalnb recognises.

    ``name`` says what the input is, as a noun phrase ("a Terminal-Bench run folder").
    ``read`` turns it into runs (``(RunMeta, task records)`` pairs); None when evalnb
    recognises the format but cannot read it, and then ``advice`` is the message.
    ``key`` is the name ``evalnb import`` knows it by (empty: not importable).
    """

    name: str
    recognises: Callable[[Probe], bool]
    read: Read | None = None
    advice: str = "not supported yet"
    key: str = ""


def _zip(probe: Probe) -> bool:
    return not probe.is_dir and probe.head[:4] == b"PK\x03\x04"


def _csv(probe: Probe) -> bool:
    return not probe.is_dir and probe.path.suffix.lower() == ".csv"


def _jsonl(probe: Probe) -> bool:
    return not probe.is_dir and isinstance(probe.first_line, dict) and probe.doc is None


def _binary(probe: Probe) -> bool:
    if probe.is_dir or not probe.head:
        return False
    try:
        probe.head[: HEAD_BYTES - 4].decode("utf-8")
    except UnicodeDecodeError:
        return True
    return b"\x00" in probe.head


RECOGNISED = (
    Format("a zip archive", _zip),
    Format("binary data", _binary, advice="not a trace format evalnb reads"),
    Format("a CSV file", _csv, advice="not a format evalnb reads (onetool-mcp bench CSV is)"),
    Format("a JSON Lines file", _jsonl, advice="not a trace format evalnb reads"),
)
"""Formats evalnb names but does not read, tried after :data:`READERS`."""


def formats() -> list[Format]:
    """Every known format: the readers' (in :data:`READERS` order), then :data:`RECOGNISED`.

    Example:
        >>> formats()[-1].name
        'a JSON Lines file'
    """
    found: list[Format] = []
    for name in READERS:
        module = importlib.import_module(name)
        found += getattr(module, "FORMATS", (module.FORMAT,))
    return found + list(RECOGNISED)


def recognise(path: str | Path) -> Format | None:
    """The first format that recognises ``path``, or None.

    A folder format is recognised by a file directly inside the folder (``probe.child``),
    so a folder that holds no file (say one of run folders) is no format, and the
    readers are not imported to look at it; except a folder in Harbor's trial layout
    (``agent/``, ``verifier/``), which wrappers of Harbor keep without a file of its own.

    Example:
        >>> recognise("/") is None
        True
    """
    probe = Probe(path)
    if probe.is_dir and _holds_no_file(probe.path) and not _trial_layout(probe.path):
        return None
    return next((f for f in formats() if f.recognises(probe)), None)


def _trial_layout(folder: Path) -> bool:
    """A folder holding ``agent/`` or ``verifier/``: Harbor's trial layout, which wrappers
    keep with Harbor's own files further down (:mod:`evalnb.formats.harbor`)."""
    return (folder / "agent").is_dir() or (folder / "verifier").is_dir()


def _holds_no_file(folder: Path) -> bool:
    """True when ``folder`` lists and holds no file (only folders, or nothing)."""
    try:
        with os.scandir(folder) as entries:
            return not any(entry.is_file() for entry in entries)
    except OSError:
        return False


def importable() -> dict[str, Format]:
    """The readable formats by their ``evalnb import`` key.

    Example:
        >>> "terminal-bench" in importable()
        True
    """
    return {f.key: f for f in formats() if f.key and f.read is not None}
