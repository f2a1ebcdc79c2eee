"""notes: a small notes CLI, the sample tool evalnb's scenarios test.

Pure Python standard library. The store is ``.notes/store.json`` under the current
directory::

    {"version": 1,
     "notes": [{"id": "n1", "title": "...", "body": "...", "tags": ["..."], "author": "..."}],
     "links": [{"from": "n1", "to": "n2"}]}

Two entry points share one implementation, :func:`run`, over a tiny storage
interface (read or write the store file's text):

- :func:`main` on the real filesystem (``bin/notes`` runs it), and
- :func:`bashkit_builtin` as a bashkit custom builtin (``ctx.fs`` is the sandbox's
  virtual filesystem; relative paths there resolve against ``/``, so the store path
  is joined with ``ctx.cwd``).

Exit codes: 0 success (help and ``--version`` included), 1 an error such as a missing
note or store (``error: ...`` on stderr) or a store ``doctor`` finds broken, 2 a usage
error (usage and the reason on stderr). Ids are ``n1``, ``n2``, ...: a new note gets
one more than the highest id in the store. ``NOTES_AUTHOR`` in the environment is
recorded as the author of new notes.

Example:
    >>> store = MemoryStorage()
    >>> run(["create", "--title", "x"], store, {}).stderr
    'error: no notes store here (.notes/store.json not found); run `notes init` first\\n'
    >>> run(["init"], store, {}).exit_code
    0
    >>> run(["create", "--title", "Standup", "--tag", "meeting"], store, {}).stdout
    'created n1\\n'
    >>> print(run(["list"], store, {}).stdout, end="")
    n1  Standup  [meeting]
    1 note
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import posixpath
import re
import sys
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, NamedTuple, NoReturn, Protocol

VERSION = "1.0.0"
STORE = ".notes/store.json"
ID = re.compile(r"^n([1-9][0-9]*)$")
TAG = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_-]*$")


class NotesError(Exception):
    """A failure reported as ``error: <message>`` on stderr with exit code 1.

    ``stdout`` carries any report printed before the failure (``doctor``).
    """

    def __init__(self, message: str, stdout: str = "") -> None:
        super().__init__(message)
        self.stdout = stdout


class Result(NamedTuple):
    """What one invocation printed and its exit code."""

    exit_code: int
    stdout: str = ""
    stderr: str = ""


class _Done(Exception):
    """Raised by the parser for help (exit 0) and usage errors (exit 2)."""

    def __init__(self, result: Result) -> None:
        super().__init__(result.exit_code)
        self.result = result


class Storage(Protocol):
    """Reads and writes the store file's text."""

    def read(self) -> str | None:
        """The store's text, or None when there is no store."""
        ...

    def write(self, text: str) -> None:
        """Replace the store's text, creating ``.notes/`` when needed."""
        ...


class MemoryStorage:
    """A store held in memory (examples and tests).

    Example:
        >>> s = MemoryStorage()
        >>> s.write("{}"); s.read()
        '{}'
    """

    def __init__(self, text: str | None = None) -> None:
        self.text = text

    def read(self) -> str | None:
        """The text written last, or None."""
        return self.text

    def write(self, text: str) -> None:
        """Keep ``text``."""
        self.text = text


class LocalStorage:
    """The store under a real directory.

    Example:
        >>> import tempfile
        >>> s = LocalStorage(Path(tempfile.mkdtemp()))
        >>> s.read() is None
        True
    """

    def __init__(self, root: Path) -> None:
        self.path = root / STORE

    def read(self) -> str | None:
        """The file's text, or None when it does not exist."""
        if not self.path.exists():
            return None
        try:
            return self.path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise NotesError(f"cannot read {STORE}: {exc}") from None

    def write(self, text: str) -> None:
        """Write the file, creating ``.notes/``."""
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self.path.write_text(text, encoding="utf-8")
        except OSError as exc:
            raise NotesError(f"cannot write {STORE}: {exc}") from None


class BashkitStorage:
    """The store on a bashkit virtual filesystem, under the shell's working directory.

    bashkit's ``FileSystem`` raises RuntimeError for I/O problems (a directory where
    the file should be, for instance); they become :class:`NotesError`.
    """

    def __init__(self, fs: Any, cwd: str) -> None:
        self.fs = fs
        self.path = posixpath.join(cwd, STORE)

    def read(self) -> str | None:
        """The file's text, or None when it does not exist."""
        if not self.fs.exists(self.path):
            return None
        try:
            return self.fs.read_file(self.path).decode("utf-8")
        except (RuntimeError, UnicodeDecodeError) as exc:
            raise NotesError(f"cannot read {STORE}: {exc}") from None

    def write(self, text: str) -> None:
        """Write the file, creating ``.notes/``."""
        try:
            self.fs.mkdir(posixpath.dirname(self.path), recursive=True)
            self.fs.write_file(self.path, text.encode("utf-8"))
        except RuntimeError as exc:
            raise NotesError(f"cannot write {STORE}: {exc}") from None


# --- the command line -------------------------------------------------------------

_Formatter = functools.partial(argparse.RawDescriptionHelpFormatter, width=88)

DESCRIPTION = f"""\
A small notes tool. Notes live in {STORE} under the current directory;
run `notes init` once before anything else. Note ids are n1, n2, ..."""

EPILOG = """\
examples:
  notes init
  notes create --title "Standup" --body "Ship the release" --tag meeting --tag daily
  notes list --tag meeting --format json
  notes show n1
  notes search release
  notes link n1 n2              # n1 -> n2
  notes tag n2 urgent finance
  notes doctor                  # exit 0 when the store is healthy

Run `notes <command> --help` for a command's options and examples."""

COMMAND_HELP = {
    "init": ("create an empty store in .notes/", "  notes init"),
    "create": (
        "add a note and print its id",
        '  notes create --title "Design review"\n'
        '  notes create --title "Retro" --body "Went well: CI" --tag meeting --tag team',
    ),
    "list": (
        "list notes (optionally only those with a tag)",
        "  notes list\n  notes list --tag meeting\n  notes list --format json | jq length",
    ),
    "show": (
        "show one note with its tags and links",
        "  notes show n1\n  notes show n1 --format json",
    ),
    "search": (
        "find notes whose title, body or tags contain a text (case-insensitive)",
        '  notes search "release"\n  notes search kubernetes --format json',
    ),
    "link": (
        "link note ID1 to note ID2 (ID1 -> ID2)",
        "  notes link n1 n2",
    ),
    "tag": ("add one or more tags to a note", "  notes tag n3 finance urgent"),
    "delete": ("delete a note and its links", "  notes delete n4"),
    "doctor": (
        "check the store for invalid or duplicate ids and dangling links",
        "  notes doctor",
    ),
    "export": (
        "print every note and link as one JSON document",
        "  notes export --format json > export.json\n"
        "  notes export --format json | jq '.links | length'",
    ),
}


FORMAT_HELP = "text (the default) or json"


class _Parser(argparse.ArgumentParser):
    """argparse that returns help and usage errors as results instead of printing and exiting.

    ``print_help`` is what argparse's ``-h`` action calls; ``error`` is what it calls on
    a usage problem.
    """

    def print_help(self, file: Any = None) -> NoReturn:
        """Help text on stdout, exit 0."""
        raise _Done(Result(0, stdout=self.format_help()))

    def error(self, message: str) -> NoReturn:
        """Usage and the problem on stderr, exit 2."""
        command = self.prog
        hint = f"run `{command} --help` for usage and examples\n"
        raise _Done(Result(2, stderr=f"{self.format_usage()}{command}: error: {message}\n{hint}"))


def build_parser() -> argparse.ArgumentParser:
    """The ``notes`` argument parser with every subcommand.

    Example:
        >>> build_parser().parse_args(["link", "n1", "n2"]).target
        'n2'
    """
    parser = _Parser(
        prog="notes", description=DESCRIPTION, epilog=EPILOG, formatter_class=_Formatter
    )
    parser.add_argument("--version", action="store_true", help="print the version and exit")
    commands = parser.add_subparsers(dest="command", title="commands", metavar="<command>")

    def add(name: str) -> argparse.ArgumentParser:
        summary, examples = COMMAND_HELP[name]
        sub = commands.add_parser(
            name,
            help=summary,
            description=summary[0].upper() + summary[1:] + ".",
            epilog="examples:\n" + examples,
            formatter_class=_Formatter,
        )
        sub.set_defaults(command_parser=sub)  # reports leftover arguments with its own usage
        return sub

    add("init")
    create = add("create")
    create.add_argument("--title", required=True, help="the note's title (required)")
    create.add_argument("--body", default="", help="the note's text")
    create.add_argument(
        "--tag", action="append", default=[], metavar="TAG", help="a tag; repeat for more"
    )
    listing = add("list")
    listing.add_argument("--tag", metavar="TAG", help="only notes with this tag")
    listing.add_argument("--format", choices=["text", "json"], default="text", help=FORMAT_HELP)
    show = add("show")
    show.add_argument("id", metavar="ID", help="a note id such as n1")
    show.add_argument("--format", choices=["text", "json"], default="text", help=FORMAT_HELP)
    search = add("search")
    search.add_argument("query", metavar="QUERY", help="the text to look for")
    search.add_argument("--format", choices=["text", "json"], default="text", help=FORMAT_HELP)
    link = add("link")
    link.add_argument("source", metavar="ID1", help="the note the link starts from")
    link.add_argument("target", metavar="ID2", help="the note it points to")
    tag = add("tag")
    tag.add_argument("id", metavar="ID", help="a note id such as n1")
    tag.add_argument("tags", nargs="+", metavar="TAG", help="tags to add")
    delete = add("delete")
    delete.add_argument("id", metavar="ID", help="a note id such as n1")
    add("doctor")
    export = add("export")
    export.add_argument("--format", choices=["json"], default="json", help="json (the default)")
    return parser


def run(argv: list[str], storage: Storage, env: Mapping[str, str]) -> Result:
    """Run one ``notes`` invocation against ``storage``; never raises for bad input.

    Example:
        >>> run(["--version"], MemoryStorage(), {})
        Result(exit_code=0, stdout='notes 1.0.0\\n', stderr='')
        >>> run(["new", "x"], MemoryStorage(), {}).exit_code
        2
    """
    parser = build_parser()
    try:
        args, extra = parser.parse_known_args(argv)
        if extra:
            getattr(args, "command_parser", parser).error(
                f"unrecognized arguments: {' '.join(extra)}"
            )
        if args.version:
            return Result(0, stdout=f"notes {VERSION}\n")
        if args.command is None:
            parser.error("a command is required")
        return Result(0, stdout=COMMANDS[args.command](args, storage, env))
    except _Done as done:
        return done.result
    except NotesError as exc:
        return Result(1, stdout=exc.stdout, stderr=f"error: {exc}\n")


# --- the store ----------------------------------------------------------------------


def _load(storage: Storage) -> dict[str, Any]:
    text = storage.read()
    if text is None:
        raise NotesError(f"no notes store here ({STORE} not found); run `notes init` first")
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise NotesError(
            f"{STORE} is not valid JSON (line {exc.lineno} column {exc.colno}: {exc.msg}); "
            "repair the file, or move it away and run `notes init`"
        ) from None
    problem = _shape_problem(data)
    if problem:
        raise NotesError(f"{STORE} is damaged: {problem}")
    return data


def _shape_problem(data: Any) -> str | None:
    """What makes ``data`` unusable as a store, or None."""
    if not isinstance(data, dict) or not isinstance(data.get("notes"), list):
        return "expected an object with a 'notes' list and a 'links' list"
    if not isinstance(data.get("links"), list):
        return "expected a 'links' list"
    for i, note in enumerate(data["notes"], start=1):
        fields_ok = isinstance(note, dict) and all(
            isinstance(note.get(k), str) for k in ("id", "title", "body")
        )
        tags = note.get("tags") if isinstance(note, dict) else None
        if not fields_ok or not isinstance(tags, list) or not all(isinstance(t, str) for t in tags):
            return f"note {i} needs string 'id', 'title', 'body' and a 'tags' list of strings"
    for i, link in enumerate(data["links"], start=1):
        if not isinstance(link, dict) or not all(
            isinstance(link.get(k), str) for k in ("from", "to")
        ):
            return f"link {i} needs string 'from' and 'to'"
    return None


def _save(storage: Storage, data: dict[str, Any]) -> None:
    storage.write(json.dumps(data, indent=2, ensure_ascii=False) + "\n")


def _find(data: dict[str, Any], note_id: str) -> dict[str, Any]:
    for note in data["notes"]:
        if note["id"] == note_id:
            return note
    raise NotesError(f"no note with id {note_id!r} (see `notes list`)")


def _check_tags(tags: list[str]) -> list[str]:
    for tag in tags:
        if not TAG.match(tag):
            raise NotesError(
                f"invalid tag {tag!r}: a tag is one word of letters, digits, '-' and '_'"
                " (give several tags as separate arguments)"
            )
    return list(dict.fromkeys(tags))


def _next_id(data: dict[str, Any]) -> str:
    numbers = [int(m.group(1)) for n in data["notes"] if (m := ID.match(n["id"]))]
    return f"n{max(numbers, default=0) + 1}"


def _plural(count: int, word: str, many: str | None = None) -> str:
    return f"{count} {word if count == 1 else many or word + 's'}"


def _public(note: dict[str, Any]) -> dict[str, Any]:
    return {
        "id": note["id"],
        "title": note["title"],
        "body": note["body"],
        "tags": list(note["tags"]),
        "author": note.get("author", ""),
    }


def _line(note: dict[str, Any]) -> str:
    tags = f"  [{', '.join(note['tags'])}]" if note["tags"] else ""
    return f"{note['id']}  {note['title']}{tags}\n"


def _json(value: Any) -> str:
    return json.dumps(value, indent=2, ensure_ascii=False) + "\n"


# --- the commands (each returns its stdout or raises NotesError) --------------------


def cmd_init(args: argparse.Namespace, storage: Storage, env: Mapping[str, str]) -> str:
    """Create an empty store; an existing store is left alone.

    Example:
        >>> s = MemoryStorage()
        >>> cmd_init(argparse.Namespace(), s, {})
        'initialised an empty notes store in .notes/store.json\\n'
        >>> cmd_init(argparse.Namespace(), s, {})
        'a notes store already exists at .notes/store.json; nothing to do\\n'
    """
    if storage.read() is not None:
        return f"a notes store already exists at {STORE}; nothing to do\n"
    _save(storage, {"version": 1, "notes": [], "links": []})
    return f"initialised an empty notes store in {STORE}\n"


def cmd_create(args: argparse.Namespace, storage: Storage, env: Mapping[str, str]) -> str:
    """Add a note; print ``created <id>``.

    Example:
        >>> s = MemoryStorage('{"notes": [], "links": []}')
        >>> cmd_create(argparse.Namespace(title="Retro", body="", tag=["team"]), s, {})
        'created n1\\n'
        >>> cmd_create(argparse.Namespace(title="x", body="", tag=["a,b"]), s, {})
        ... # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        notes.NotesError: invalid tag 'a,b': a tag is one word of letters, digits, '-' and '_'...
    """
    data = _load(storage)
    if not args.title.strip():
        raise NotesError("a note needs a non-empty --title")
    note = {
        "id": _next_id(data),
        "title": args.title,
        "body": args.body,
        "tags": _check_tags(args.tag),
        "author": env.get("NOTES_AUTHOR", ""),
    }
    data["notes"].append(note)
    _save(storage, data)
    return f"created {note['id']}\n"


def cmd_list(args: argparse.Namespace, storage: Storage, env: Mapping[str, str]) -> str:
    """Notes in creation order, one line each and a count (or a JSON array).

    Example:
        >>> s = MemoryStorage('{"notes": [], "links": []}')
        >>> cmd_list(argparse.Namespace(tag=None, format="json"), s, {})
        '[]\\n'
    """
    notes = [n for n in _load(storage)["notes"] if args.tag is None or args.tag in n["tags"]]
    if args.format == "json":
        return _json([_public(n) for n in notes])
    return "".join(_line(n) for n in notes) + _plural(len(notes), "note") + "\n"


def cmd_show(args: argparse.Namespace, storage: Storage, env: Mapping[str, str]) -> str:
    """One note with its tags, author and links in both directions.

    Example:
        >>> s = MemoryStorage('{"notes": [], "links": []}')
        >>> cmd_show(argparse.Namespace(id="n7", format="text"), s, {})
        Traceback (most recent call last):
        ...
        notes.NotesError: no note with id 'n7' (see `notes list`)
    """
    data = _load(storage)
    note = _find(data, args.id)
    links_to = [lk["to"] for lk in data["links"] if lk["from"] == note["id"]]
    linked_from = [lk["from"] for lk in data["links"] if lk["to"] == note["id"]]
    if args.format == "json":
        return _json({**_public(note), "links_to": links_to, "linked_from": linked_from})
    links = [f"-> {i}" for i in links_to] + [f"<- {i}" for i in linked_from]
    return (
        f"id:     {note['id']}\n"
        f"title:  {note['title']}\n"
        f"tags:   {', '.join(note['tags']) or '-'}\n"
        f"author: {note.get('author') or '-'}\n"
        f"links:  {', '.join(links) or '-'}\n" + (f"\n{note['body']}\n" if note["body"] else "")
    )


def cmd_search(args: argparse.Namespace, storage: Storage, env: Mapping[str, str]) -> str:
    """Notes whose title, body or a tag contains the query, ignoring case.

    Example:
        >>> s = MemoryStorage('{"notes": [], "links": []}')
        >>> cmd_search(argparse.Namespace(query="x", format="text"), s, {})
        "0 matches for 'x'\\n"
    """
    query = args.query.casefold()
    hits = [
        n
        for n in _load(storage)["notes"]
        if any(query in text.casefold() for text in [n["title"], n["body"], *n["tags"]])
    ]
    if args.format == "json":
        return _json([_public(n) for n in hits])
    return (
        "".join(_line(n) for n in hits)
        + f"{_plural(len(hits), 'match', 'matches')} for {args.query!r}\n"
    )


def cmd_link(args: argparse.Namespace, storage: Storage, env: Mapping[str, str]) -> str:
    """Link ID1 to ID2 (both must exist and differ); an existing link is kept once.

    Example:
        >>> s = MemoryStorage('{"notes": [], "links": []}')
        >>> cmd_link(argparse.Namespace(source="n1", target="-"), s, {})
        Traceback (most recent call last):
        ...
        notes.NotesError: no note with id 'n1' (see `notes list`)
    """
    data = _load(storage)
    source, target = (_find(data, i)["id"] for i in (args.source, args.target))
    if source == target:
        raise NotesError(f"cannot link {source} to itself")
    if {"from": source, "to": target} in data["links"]:
        return f"{source} is already linked to {target}\n"
    data["links"].append({"from": source, "to": target})
    _save(storage, data)
    return f"linked {source} -> {target}\n"


def cmd_tag(args: argparse.Namespace, storage: Storage, env: Mapping[str, str]) -> str:
    """Add tags to a note (tags it already has are not repeated); print its tags.

    Example:
        >>> s = MemoryStorage('{"notes": [{"id": "n1", "title": "T", "body": "",'
        ...                   ' "tags": ["a"]}], "links": []}')
        >>> cmd_tag(argparse.Namespace(id="n1", tags=["b", "a"]), s, {})
        'n1 tags: a, b\\n'
    """
    data = _load(storage)
    note = _find(data, args.id)
    note["tags"] = _check_tags([*note["tags"], *args.tags])
    _save(storage, data)
    return f"{note['id']} tags: {', '.join(note['tags'])}\n"


def cmd_delete(args: argparse.Namespace, storage: Storage, env: Mapping[str, str]) -> str:
    """Delete every note with the id and every link that touches it.

    Example:
        >>> s = MemoryStorage('{"notes": [{"id": "n1", "title": "T", "body": "", "tags": []}],'
        ...                   ' "links": [{"from": "n1", "to": "n9"}]}')
        >>> cmd_delete(argparse.Namespace(id="n1"), s, {})
        "deleted n1 'T' and 1 link\\n"
    """
    data = _load(storage)
    note = _find(data, args.id)
    data["notes"] = [n for n in data["notes"] if n["id"] != note["id"]]
    kept = [lk for lk in data["links"] if note["id"] not in (lk["from"], lk["to"])]
    dropped = len(data["links"]) - len(kept)
    data["links"] = kept
    _save(storage, data)
    return f"deleted {note['id']} {note['title']!r} and {_plural(dropped, 'link')}\n"


def store_problems(data: dict[str, Any]) -> list[str]:
    """What ``doctor`` reports: invalid ids, duplicate ids and dangling links.

    Example:
        >>> store_problems({"notes": [{"id": "n1"}, {"id": "n1"}],
        ...                 "links": [{"from": "n1", "to": "n5"}]})
        ["duplicate id 'n1': notes 1 and 2 share it", "dangling link n1 -> n5: no note 'n5'"]
    """
    problems = []
    positions: dict[str, list[int]] = {}
    for i, note in enumerate(data["notes"], start=1):
        if not ID.match(note["id"]):
            problems.append(f"note {i} has an invalid id {note['id']!r} (ids look like n1, n2)")
        positions.setdefault(note["id"], []).append(i)
    for note_id, where in positions.items():
        if len(where) > 1:
            numbers = ", ".join(map(str, where[:-1])) + f" and {where[-1]}"
            problems.append(f"duplicate id {note_id!r}: notes {numbers} share it")
    for link in data["links"]:
        for end in ("from", "to"):
            if link[end] not in positions:
                problems.append(
                    f"dangling link {link['from']} -> {link['to']}: no note {link[end]!r}"
                )
    return problems


def cmd_doctor(args: argparse.Namespace, storage: Storage, env: Mapping[str, str]) -> str:
    """Check the store; a healthy one prints ``ok: ...``, a broken one fails with its problems.

    Example:
        >>> cmd_doctor(argparse.Namespace(), MemoryStorage('{"notes": [], "links": []}'), {})
        'ok: 0 notes, 0 links, no problems found\\n'
    """
    data = _load(storage)
    problems = store_problems(data)
    if problems:
        report = "".join(f"problem: {p}\n" for p in problems)
        raise NotesError(
            f"{_plural(len(problems), 'problem')} found in {STORE}; the store needs repair",
            stdout=report,
        )
    counts = f"{_plural(len(data['notes']), 'note')}, {_plural(len(data['links']), 'link')}"
    return f"ok: {counts}, no problems found\n"


def cmd_export(args: argparse.Namespace, storage: Storage, env: Mapping[str, str]) -> str:
    """Every note and link as ``{"notes": [...], "links": [...]}``.

    Example:
        >>> cmd_export(argparse.Namespace(), MemoryStorage('{"notes": [], "links": []}'), {})
        '{\\n  "notes": [],\\n  "links": []\\n}\\n'
    """
    data = _load(storage)
    return _json(
        {"notes": [_public(n) for n in data["notes"]], "links": [dict(lk) for lk in data["links"]]}
    )


COMMANDS: dict[str, Callable[[argparse.Namespace, Storage, Mapping[str, str]], str]] = {
    "init": cmd_init,
    "create": cmd_create,
    "list": cmd_list,
    "show": cmd_show,
    "search": cmd_search,
    "link": cmd_link,
    "tag": cmd_tag,
    "delete": cmd_delete,
    "doctor": cmd_doctor,
    "export": cmd_export,
}


# --- entry points -------------------------------------------------------------------


def main(argv: list[str] | None = None) -> int:
    """Run ``notes`` on the real filesystem (store under the current directory).

    Example:
        >>> main(["--version"])
        notes 1.0.0
        0
    """
    result = run(sys.argv[1:] if argv is None else argv, LocalStorage(Path.cwd()), os.environ)
    sys.stdout.write(result.stdout)
    sys.stderr.write(result.stderr)
    return result.exit_code


def bashkit_builtin(ctx: Any) -> Any:
    """``notes`` as a bashkit custom builtin (``bashkit.Bash(custom_builtins={"notes": ...})``).

    Example:
        >>> import bashkit
        >>> bash = bashkit.Bash(custom_builtins={"notes": bashkit_builtin}, cwd="/w")
        >>> bash.execute_sync("mkdir -p /w && notes init >/dev/null && notes list").stdout
        '0 notes\\n'
    """
    import bashkit

    result = run(list(ctx.argv), BashkitStorage(ctx.fs, ctx.cwd), dict(ctx.env))
    return bashkit.BuiltinResult(
        stdout=result.stdout, stderr=result.stderr, exit_code=result.exit_code
    )


if __name__ == "__main__":
    sys.exit(main())
