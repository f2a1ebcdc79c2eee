"""Format detection: the one registry of readers, and which format a file or folder is.

:data:`READERS` is the registry: every reader of foreign results is one entry there, the
module that defines its ``FORMAT``, a :class:`Format` holding everything about it:

- ``key``: the name ``evalnb import <key>`` knows it by;
- ``recognises``: a cheap look at the input (its first bytes, JSON keys, first JSON
  line, or a file directly inside a folder);
- ``read``: the reader function, one input (file or folder) to runs;
- ``tables``: for a format read column by column (Inspect logs), one input to runs
  as their tables, which :func:`evalnb.load` reads instead of ``read``'s records;
- ``options``: the reader's declared :class:`Option` s (Claude Code's and transcripts'
  ``target``), which become ``--<name>`` flags of ``evalnb import``, ``summary`` and
  ``report`` and :func:`evalnb.load`'s ``options``;
- ``gather``: for formats whose file is one task attempt (Claude Code, transcripts), how
  the runs read from all the inputs given at once form the runs of the whole set.

A module that also names inputs it will not read (a lone trial file, say) lists them all
in ``FORMATS``. Readers are tried in :data:`READERS` order; the formats evalnb recognises
but cannot read (any CSV or zip file, binary data, ...) follow them in
:data:`RECOGNISED`, so an unsupported input is named ("a zip archive: not supported
yet") instead of failing on its bytes. A reader is called through
:meth:`Format.read_one` (one input, its declared options) and :func:`read_gathered`
(the runs of every input of the format, formed together): :func:`read_inputs` does
both for ``evalnb import``, and :func:`evalnb.load` the same, input by input.

Adding a reader: write ``evalnb/_formats/<name>.py`` with its ``FORMAT`` and add the
module to :data:`READERS`.

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
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any

from evalnb.errors import InputError
from evalnb.records import RunMeta, TaskRecord

HEAD_BYTES = 65536
READERS = (
    "evalnb._formats.mira",
    "evalnb._formats.scripting_eval",
    "evalnb._formats.bashkit_eval",
    "evalnb._formats.llm_tool_test",
    "evalnb._formats.terminal_bench",
    "evalnb._formats.onetool_bench",
    "evalnb._formats.inspect_log",
    "evalnb._formats.claude_code",
    "evalnb._formats.harbor",
    "evalnb._formats.atif",
    "evalnb._formats.codex",
    "evalnb._formats.gemini_cli",
    "evalnb._formats.swe_agent",
    "evalnb._formats.openhands",
    "evalnb._formats.otel",
    "evalnb._formats.transcript",
)
"""The registry: reader modules, each with a ``FORMAT``; tried in this order (most
specific first; plain-text transcripts, which any ``.txt`` file may be, last)."""

Run = tuple[RunMeta, list[TaskRecord]]
"""One run read from a foreign format: its :class:`RunMeta` and its task records."""
Read = Callable[..., list[Run]]
"""``read(path, **options)``: the runs in one input; ``options`` are the declared ones given."""
Gather = Callable[[list[Run]], list[Run]]
"""``gather(runs)``: the runs read from every input given at once, formed anew."""
ReadTables = Callable[[Path], list[tuple[RunMeta, dict[str, Any]]]]
"""``tables(path)``: the runs in one input, each as its tables (polars frames, by name)."""


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
class Option:
    """A reader's declared option: ``--<name> VALUE`` on the command line,
    ``options={name: value}`` in :func:`evalnb.load`. A ``required`` option missing is
    an error naming the input.

    Example:
        >>> Option("target", "the tool's command name").flag
        '--target'
    """

    name: str
    help: str
    required: bool = False

    @property
    def flag(self) -> str:
        """The command-line flag."""
        return "--" + self.name.replace("_", "-")


@dataclass(frozen=True)
class Format:
    """One format evalnb recognises: one entry of the registry.

    ``name`` says what the input is, as a noun phrase ("a Terminal-Bench run folder").
    ``read`` turns one input into runs (:data:`Run` pairs); None when evalnb
    recognises the format but cannot read it, and then ``advice`` is the message.
    ``key`` is the name ``evalnb import`` knows it by (empty: not importable).
    ``options`` are the keyword arguments ``read`` takes. ``gather`` (None: each input's
    runs stand as read) forms the runs of all the inputs read together. ``tables`` (a
    format that does not gather) reads an input's runs straight into their tables.
    """

    name: str
    recognises: Callable[[Probe], bool]
    read: Read | None = None
    advice: str = "not supported yet"
    key: str = ""
    options: tuple[Option, ...] = ()
    gather: Gather | None = None
    tables: ReadTables | None = None

    def read_one(self, path: Path, options: Mapping[str, str | None]) -> list[Run]:
        """The runs of one input, with the declared options of ``options`` that are set.

        A format evalnb cannot read, or a required option missing, is an
        :class:`~evalnb.errors.InputError` naming ``path``.

        Example:
            >>> RECOGNISED[0].read_one(Path("x.zip"), {})
            Traceback (most recent call last):
            ...
            evalnb.errors.InputError: x.zip: a zip archive: not supported yet
        """
        if self.read is None:
            raise InputError(path, None, None, f"{self.name}: {self.advice}")
        given = {o.name: options[o.name] for o in self.options if options.get(o.name)}
        for option in self.options:
            if option.required and option.name not in given:
                msg = f"{self.name} needs {option.flag} ({option.help})"
                raise InputError(path, None, option.name, msg)
        return self.read(path, **given)


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
    keep with Harbor's own files further down (:mod:`evalnb._formats.harbor`)."""
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


def declared_options() -> dict[str, Option]:
    """Every option some reader declares, by name (the same name means the same option).

    Example:
        >>> sorted(declared_options())
        ['target']
    """
    return {o.name: o for f in formats() for o in f.options}


def check_options(options: Mapping[str, object]) -> None:
    """Refuse an option no reader declares (a misspelt name would be ignored otherwise);
    reads the registry only when there are options.

    Example:
        >>> check_options({"taget": "notes"})
        Traceback (most recent call last):
        ...
        ValueError: no reader takes option 'taget' (reader options: target)
    """
    known = declared_options() if options else {}
    for name in options:
        if name not in known:
            raise ValueError(
                f"no reader takes option {name!r} (reader options: {', '.join(known)})"
            )


def read_inputs(
    fmt: Format, paths: Sequence[Path], options: Mapping[str, str | None] | None = None
) -> list[Run]:
    """The runs of ``paths``, all of format ``fmt``, read together: each input read
    (:meth:`Format.read_one`), then gathered (:func:`read_gathered`).

    Example:
        >>> read_inputs(importable()["terminal-bench"], [])
        []
    """
    return read_gathered(fmt, [run for path in paths for run in fmt.read_one(path, options or {})])


def read_gathered(fmt: Format, runs: list[Run]) -> list[Run]:
    """``runs`` read one input at a time, gathered when ``fmt`` gathers (else as they are).

    Example:
        >>> read_gathered(importable()["mira"], [])
        []
    """
    return fmt.gather(runs) if fmt.gather is not None and runs else runs
