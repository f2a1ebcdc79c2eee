"""Target commands in a bash script or a plain transcript (spec 002 command identification).

Pure functions over strings, used by the gates (``no_transcript_errors``), by the
transcript reader and by the interaction metrics:

- :func:`target_commands` splits one tool call's script into *target commands*.
  Without a pattern (bash tasks) every simple command with a literal name, found by
  bashkit's static analyser (``bashkit.Bash().analyze``), is one, including commands
  inside pipelines, ``$(...)`` substitutions and function bodies; assignment-only
  commands and commands whose name is not a literal word are skipped. The text is
  rebuilt from the parsed words, joined by single spaces, a word quoted when it holds
  whitespace, quotes, ``<`` or ``>``, and a non-literal word (``"$x"``, ``$(date)``)
  written as ``<expr>``. A script that does not parse is one command: its whole text,
  whitespace normalised, named by its first word. The command name is reduced to its
  basename (``./notes`` and ``/x/bin/notes`` are ``notes``); ``exec CMD``,
  ``command CMD``, ``env [NAME=VALUE]... CMD`` and ``nohup CMD`` run CMD (with their
  usual options), ``command -v``/``-V`` run nothing. Quoted strings, heredoc
  bodies and comments are never commands. With a regex ``pattern`` (spec 002
  ``target.command_pattern``, in the Rust dialect:
  :func:`evalnb.records.rust_regex.compile_pattern`) a command is a target command when
  the pattern matches at the start of its text (:func:`argv_command`); capture group 1
  is its subcommand (None without a group). A script that does not parse is then
  scanned with the pattern (:func:`pattern_matches`: only a match that starts a word
  counts), each match running to the end of that shell command (the first unquoted
  newline, ``;``, ``|`` or ``&``).
- :func:`argv_command` applies the same rules to one argv (a recorded invocation).
- :func:`executed_commands` gives a trace's target commands with their exit codes:
  recorded invocations (exact) or the text (the call's exit code, approximate when a
  call holds several).
- :func:`transcript_calls` reads a plain-text transcript (spec 002's fallback).
- ``-h`` is help-seeking only for the commands in :data:`SHORT_HELP`.

Example:
    >>> [c.command for c in target_commands("cat  a | grep -c x")]
    ['cat a', 'grep -c x']
"""

from __future__ import annotations

import posixpath
import re
import shlex
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field, replace
from functools import cache
from typing import TYPE_CHECKING

from evalnb.records import ToolCallResult
from evalnb.records.rust_regex import Captures, RustRegex, utf8

if TYPE_CHECKING:
    import bashkit

_EXIT_RE = re.compile(r"(?i)\bexit\s+(?:code|status)\s*:?\s*(-?\d+)")
_ERROR_RE = re.compile(r"(?i)\berror:")
_PROMPT_RE = re.compile(r"^\s*[$>]\s+")
_NEEDS_QUOTES = re.compile(r"[\s'\"\\<>]")
_WORDISH_PAIR = re.compile(r"[\w./-]{2}")

SHORT_HELP = frozenset(
    {"curl", "git", "jq", "node", "npm", "pip", "pip3", "python", "python3", "yq"}
)
"""Commands whose ``-h`` means ``--help``: for any other command (``df -h``, ``sort -h``,
``ls -h``, ``grep -h`` and the tool under test) ``-h`` is not help-seeking."""


@dataclass(frozen=True)
class TargetCommand:
    """One target command: its text, subcommand and whether it asks for help.

    ``name`` is the command name (a basename) and ``dash_h`` whether ``-h`` is among its
    arguments: a scenario whose tool treats ``-h`` as help (``target.short_help``) counts
    such a command of its tool as help-seeking too.
    """

    command: str
    subcommand: str | None
    is_help: bool
    name: str = field(repr=False)
    dash_h: bool = field(repr=False)


@dataclass(frozen=True)
class Executed:
    """One target command of a trace with its exit code (None: killed before it ended).

    ``approximate`` marks an exit code read from the call (text fallback) for a call
    holding more than one target command.
    """

    command: TargetCommand
    exit_code: int | None
    approximate: bool


@dataclass(frozen=True)
class TranscriptCall:
    """One command line of a transcript, with the output that followed it.

    ``exit_code`` is approximate: N from the first ``Exit code: N`` or ``exit status
    N`` in the output, else 1 when an output line contains ``error:``, else 0.
    """

    commands: str
    output: list[str]
    exit_code: int


def target_commands(script: str, pattern: RustRegex | None = None) -> list[TargetCommand]:
    """The target commands of one script (see the module docstring).

    Example:
        >>> from evalnb.records.rust_regex import compile_pattern
        >>> p = compile_pattern(r"notes\\s+(\\S+)")
        >>> target_commands("./notes add x; echo 'notes rm' # notes ls\\nnotes --help", p)
        ... # doctest: +NORMALIZE_WHITESPACE
        [TargetCommand(command='notes add x', subcommand='add', is_help=False),
         TargetCommand(command='notes --help', subcommand='--help', is_help=True)]
    """
    import bashkit  # imported on first use: `import evalnb` stays light

    try:
        analysis = _analyser().analyze(script)
    except bashkit.BashError:
        return _unparsed(script, pattern)
    found = [argv_command(_invocation([c.name, *c.args]), pattern) for c in analysis.commands]
    return [c for c in found if c is not None]


def argv_command(
    argv: Sequence[str | None], pattern: RustRegex | None = None
) -> TargetCommand | None:
    """One invocation's words as a target command, or None when it is not one.

    ``None`` words are non-literal ones (``"$x"``). The command name is reduced to its
    basename (``/x/bin/notes`` is ``notes``); an empty or non-literal name is not a
    target command. Without a pattern the subcommand is that name. With one, the
    pattern must match at the start of the command text (the words joined by single
    spaces, a non-literal word as ``<expr>``), and its group 1 is the subcommand (None
    without a group). Used for parsed commands and for recorded invocations alike.

    Example:
        >>> from evalnb.records.rust_regex import compile_pattern
        >>> argv_command(["/x/bin/notes", "show", "n1"], compile_pattern(r"notes\\s+(\\S+)"))
        TargetCommand(command='notes show n1', subcommand='show', is_help=False)
        >>> argv_command(["echo", "notes", "show"], compile_pattern(r"notes\\s+(\\S+)")) is None
        True
        >>> argv_command(["df", "-h"]).is_help, argv_command(["jq", "-h"]).is_help
        (False, True)
    """
    if not argv or not argv[0]:
        return None
    name = posixpath.basename(argv[0])
    words = [name, *argv[1:]]
    text = " ".join(_word(w) for w in words)
    is_help, dash_h = _is_help(words[0], words[1:]), "-h" in words[1:]
    if pattern is None:
        return TargetCommand(text, name, is_help, name, dash_h)
    found = pattern.captures_at(utf8(" ".join("<expr>" if w is None else w for w in words)))
    if found is None or found.start() != 0:  # the leftmost match: none starts at 0
        return None
    return TargetCommand(text, _subcommand(found, pattern), is_help, name, dash_h)


def executed_commands(calls: Sequence[ToolCallResult], pattern: RustRegex | None) -> list[Executed]:
    """The target commands a trace's tool calls ran, in order, each with its exit code.

    A call with recorded invocations (``call.invocations`` not None, spec 002's
    structured events) gives one command per invocation with its own exit code, even
    when ``pattern`` does not match its argv (subcommand None then). Other calls fall
    back to :func:`target_commands` on their text: every command inherits the call's
    exit code, approximate when the call holds more than one.

    Example:
        >>> from evalnb.records.rust_regex import compile_pattern
        >>> from evalnb.records import ToolInvocation
        >>> call = ToolCallResult(commands="notes shw n1; echo ok", invocations=[
        ...     ToolInvocation(argv=["notes", "shw", "n1"], exit_code=2)])
        >>> [(e.command.command, e.exit_code, e.approximate)
        ...  for e in executed_commands([call], compile_pattern(r"notes\\s+(\\S+)"))]
        [('notes shw n1', 2, False)]
    """
    out = []
    for call in calls:
        if call.invocations is None:
            found = target_commands(call.commands, pattern)
            out += [Executed(c, call.exit_code, len(found) > 1) for c in found]
            continue
        for run in call.invocations:
            command = argv_command(run.argv, pattern)
            if command is None:
                plain = argv_command(run.argv)
                assert plain is not None  # argv[0] is the tool's name
                command = replace(plain, subcommand=None)
            out.append(Executed(command, run.exit_code, False))
    return out


def transcript_calls(text: str, pattern: RustRegex) -> tuple[str, list[TranscriptCall]]:
    """Split a plain-text transcript into ``(preamble, command lines with their output)``.

    When some lines start with a shell prompt (``$ `` or ``> ``) each such line is one
    call (its text without the prompt), whether or not it runs the target tool, and
    lines without a prompt are output. Without any prompt, every line with a match of
    ``pattern`` that starts a word (:func:`pattern_matches`) is one call, its text
    running from the first such match to the end of the line.
    A call's output runs to the next call; the preamble is the
    text before the first call.

    Example:
        >>> from evalnb.records.rust_regex import compile_pattern
        >>> pre, calls = transcript_calls("ok\\n$ notes add a\\nerror: no store\\n$ ls\\n",
        ...                               compile_pattern("notes"))
        >>> pre, [(c.commands, c.exit_code) for c in calls]
        ('ok', [('notes add a', 1), ('ls', 0)])
    """
    lines = text.splitlines()
    starts = [i for i, line in enumerate(lines) if _PROMPT_RE.match(line)]
    if starts:
        commands = {i: _PROMPT_RE.sub("", lines[i]).strip() for i in starts}
    else:  # prose lines: the command starts where the pattern matches
        found = {i: next(pattern_matches(line, pattern), None) for i, line in enumerate(lines)}
        commands = {i: lines[i][m[0] :].strip() for i, m in found.items() if m}
        starts = sorted(commands)
    calls = [
        TranscriptCall(
            commands=commands[i],
            output=lines[i + 1 : stop],
            exit_code=_transcript_exit_code(lines[i + 1 : stop]),
        )
        for i, stop in zip(starts, [*starts[1:], len(lines)], strict=False)
    ]
    preamble = "\n".join(lines[: starts[0] if starts else len(lines)]).strip()
    return preamble, calls


def pattern_matches(text: str, pattern: RustRegex) -> Iterator[tuple[int, str | None]]:
    """Where ``pattern`` finds commands in plain text: ``(start, subcommand)`` of each
    match that starts a word, left to right, not overlapping.

    A match whose first character and the one before it are both word characters,
    ``.``, ``/`` or ``-`` starts inside a word, a path or a file name (``my-notes``,
    ``cat ./notes``), so it is no command: the search goes on from the next byte. The
    character after a match is free to start the next one, so adjacent commands
    (``notes;notes``) are two. ``start`` counts the characters of ``text``; the
    subcommand is capture group 1 (None without a group or when it took no part). This
    is the word boundary the default command pattern
    (:func:`~evalnb.records.scenario.default_command_pattern`) once wrote as a
    lookbehind, which the Rust dialect lacks; it holds for every pattern, as a parsed
    command starts a word too. Each search resumes in one UTF-8 copy of the text, so the
    text is encoded once; a match refused this way costs one more search.

    Example:
        >>> from evalnb.records.rust_regex import compile_pattern
        >>> from evalnb.records.scenario import default_command_pattern
        >>> p = compile_pattern(default_command_pattern("notes"))
        >>> list(pattern_matches("my-notes notes add;notes", p))
        [(9, 'add'), (19, None)]
    """
    data = utf8(text)
    pos = chars = counted = 0
    while pos <= len(data) and (found := pattern.captures_at(data, pos)) is not None:
        start = found.start()
        if _inside_word(data, start):
            pos = start + 1
            continue
        chars += len(data[counted:start].decode())
        counted = start
        yield chars, _subcommand(found, pattern)
        pos = max(found.end(), start + 1)


def _inside_word(data: bytes, start: int) -> bool:
    """Whether byte ``start`` of ``data`` is inside a character, or its character and
    the one before are both word characters, ``.``, ``/`` or ``-``."""
    if _continues_char(data, start):
        return True
    end = start + 1
    while _continues_char(data, end):
        end += 1
    pair = data[_char_start(data, start) : end].decode()
    return _WORDISH_PAIR.fullmatch(pair) is not None


def _subcommand(found: Captures, pattern: RustRegex) -> str | None:
    """Capture group 1 of ``found``, decoded (None without a group)."""
    group = found.group(1) if pattern.groups else None
    return None if group is None else group.decode()


def _char_start(data: bytes, end: int) -> int:
    """Where the UTF-8 character that ends at byte ``end`` starts (``end`` at 0)."""
    start = max(end - 1, 0)
    while start > 0 and _continues_char(data, start):
        start -= 1
    return start


def _continues_char(data: bytes, at: int) -> bool:
    """Whether byte ``at`` is inside a UTF-8 character (a continuation byte)."""
    return at < len(data) and data[at] & 0xC0 == 0x80


@cache
def _analyser() -> bashkit.Bash:
    """A bashkit interpreter for static analysis only: ``analyze()`` runs nothing."""
    import bashkit

    return bashkit.Bash()


def _word(word: str | None) -> str:
    if word is None:
        return "<expr>"
    return shlex.quote(word) if not word or _NEEDS_QUOTES.search(word) else word


def _is_help(name: str | None, args: Sequence[str | None]) -> bool:
    return (
        name == "help"
        or args[:1] == ["help"]
        or "--help" in args
        or ("-h" in args and name in SHORT_HELP)
    )


def _invocation(words: list[str | None]) -> list[str | None]:
    """The words of the command a parsed simple command runs.

    ``exec [-cl] [-a NAME] CMD``, ``command [-p] CMD``, ``env [-i] [-u NAME]
    [NAME=VALUE]... CMD`` and ``nohup CMD`` run CMD; ``command -v``/``-V`` only look it
    up, so they run nothing (an empty list). Any other option, ``env`` without a command
    and ``env`` with a non-literal word leave the words as they are (the command is then
    ``env`` itself).

    Example:
        >>> _invocation(["env", "-i", "A=1", "exec", "-a", "x", "notes", "list"])
        ['notes', 'list']
        >>> _invocation(["command", "-v", "notes"]), _invocation(["env", "-S", "notes"])
        ([], ['env', '-S', 'notes'])
    """
    while words and words[0] in _RUNNER_OPTIONS:
        flags, with_value = _RUNNER_OPTIONS[words[0]]
        rest = words[1:]
        while rest:
            word = rest[0]
            if word is None:
                if words[0] == "env":
                    return words  # a non-literal word: a variable or the command?
                break
            if word in ("-v", "-V") and words[0] == "command":
                return []
            if word in with_value:
                rest = rest[2:]
            elif word in flags or word == "--" or (words[0] == "env" and _assignment(word)):
                rest = rest[1:]
            elif word.startswith("-"):
                return words  # an option this reading does not know
            else:
                break
        if not rest and words[0] == "env":
            return words  # plain `env` prints the environment: env itself ran
        words = rest
    return words


_RUNNER_OPTIONS: dict[str | None, tuple[frozenset[str], frozenset[str]]] = {
    "exec": (frozenset({"-c", "-l", "-cl", "-lc"}), frozenset({"-a"})),
    "command": (frozenset({"-p"}), frozenset()),
    "env": (frozenset({"-i", "-", "--ignore-environment"}), frozenset({"-u", "--unset"})),
    "nohup": (frozenset(), frozenset()),
}
"""Commands that run their arguments as a command: (flags, options taking a value)."""


def _assignment(word: str) -> bool:
    """``NAME=VALUE`` (an ``env`` argument that sets a variable)."""
    name, eq, _ = word.partition("=")
    return bool(eq) and name.replace("_", "a").isalnum() and not name[0].isdigit()


def _unparsed(script: str, pattern: RustRegex | None) -> list[TargetCommand]:
    """A script bashkit cannot parse: one command of its words, or the pattern's matches."""
    if pattern is None:
        words = script.split()
        return [_unparsed_command(words, words[0])] if words else []
    return [
        _unparsed_command(_segment(script, start).split(), sub)
        for start, sub in pattern_matches(script, pattern)
    ]


def _unparsed_command(words: list[str], subcommand: str | None) -> TargetCommand:
    """A command of an unparsed script: its words joined by single spaces."""
    name, args = posixpath.basename(words[0]), words[1:]
    return TargetCommand(" ".join(words), subcommand, _is_help(name, args), name, "-h" in args)


def _segment(text: str, start: int) -> str:
    """``text`` from ``start`` to the first unquoted newline, ``;``, ``|`` or ``&``."""
    quote = ""
    i = start
    while i < len(text):
        ch = text[i]
        if ch == "\\" and quote != "'":
            i += 2
            continue
        if quote:
            quote = "" if ch == quote else quote
        elif ch in "'\"":
            quote = ch
        elif ch in "\n;|&":
            break
        i += 1
    return text[start:i]


def _transcript_exit_code(following: list[str]) -> int:
    for line in following:
        if match := _EXIT_RE.search(line):
            return int(match.group(1))
    return 1 if any(_ERROR_RE.search(line) for line in following) else 0
