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
  whitespace normalised, named by its first word. With a regex ``pattern`` (spec 002
  ``target.command_pattern``) every match is a target command; its text runs from the
  match to the end of that shell command (the first unquoted newline, ``;``, ``|`` or
  ``&``), whitespace normalised, and its subcommand is capture group 1 (None without
  a group).
- :func:`transcript_commands` reads a plain-text transcript (spec 002's fallback).

Example:
    >>> [c.command for c in target_commands("cat  a | grep -c x")]
    ['cat a', 'grep -c x']
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass
from functools import cache

import bashkit

_EXIT_RE = re.compile(r"(?i)\bexit\s+(?:code|status)\s*:?\s*(-?\d+)")
_ERROR_RE = re.compile(r"(?i)\berror:")
_PROMPT_RE = re.compile(r"^\s*[$>]\s+")
_NEEDS_QUOTES = re.compile(r"[\s'\"\\<>]")


@dataclass(frozen=True)
class TargetCommand:
    """One target command: its text, subcommand and whether it asks for help."""

    command: str
    subcommand: str | None
    is_help: bool


@dataclass(frozen=True)
class TranscriptCall:
    """One command line of a transcript, with the output that followed it.

    ``exit_code`` is approximate: N from the first ``Exit code: N`` or ``exit status
    N`` in the output, else 1 when an output line contains ``error:``, else 0.
    """

    commands: str
    output: list[str]
    exit_code: int


def target_commands(script: str, pattern: re.Pattern[str] | None = None) -> list[TargetCommand]:
    """The target commands of one script (see the module docstring).

    Example:
        >>> target_commands("notes add x; notes --help", re.compile(r"notes\\s+(\\S+)"))
        ... # doctest: +NORMALIZE_WHITESPACE
        [TargetCommand(command='notes add x', subcommand='add', is_help=False),
         TargetCommand(command='notes --help', subcommand='--help', is_help=True)]
    """
    if pattern is not None:
        out = []
        for match in pattern.finditer(script):
            command = " ".join(_segment(script, match.start()).split())
            sub = match.group(1) if pattern.groups else None
            out.append(TargetCommand(command, sub, _is_help(command.split()[1:], sub)))
        return out
    try:
        analysis = _analyser().analyze(script)
    except bashkit.BashError:
        words = script.split()
        return (
            [TargetCommand(" ".join(words), words[0], _is_help(words[1:], words[0]))]
            if words
            else []
        )
    return [
        TargetCommand(
            " ".join(_word(w) for w in [c.name, *c.args]), c.name, _is_help(c.args, c.name)
        )
        for c in analysis.commands
        if c.name
    ]


def transcript_calls(text: str, pattern: re.Pattern[str]) -> tuple[str, list[TranscriptCall]]:
    """Split a plain-text transcript into ``(preamble, command lines with their output)``.

    When some lines start with a shell prompt (``$ `` or ``> ``) each such line is one
    call (its text without the prompt), whether or not it runs the target tool, and
    lines without a prompt are output. Without any prompt, every line with a match of
    ``pattern`` is one call. A call's output runs to the next call; the preamble is the
    text before the first call.

    Example:
        >>> pre, calls = transcript_calls("ok\\n$ notes add a\\nerror: no store\\n$ ls\\n",
        ...                               re.compile("notes"))
        >>> pre, [(c.commands, c.exit_code) for c in calls]
        ('ok', [('notes add a', 1), ('ls', 0)])
    """
    lines = text.splitlines()
    starts = [i for i, line in enumerate(lines) if _PROMPT_RE.match(line)] or [
        i for i, line in enumerate(lines) if pattern.search(line)
    ]
    calls = [
        TranscriptCall(
            commands=_PROMPT_RE.sub("", lines[i]).strip(),
            output=lines[i + 1 : stop],
            exit_code=_transcript_exit_code(lines[i + 1 : stop]),
        )
        for i, stop in zip(starts, [*starts[1:], len(lines)], strict=False)
    ]
    preamble = "\n".join(lines[: starts[0] if starts else len(lines)]).strip()
    return preamble, calls


@cache
def _analyser() -> bashkit.Bash:
    """A bashkit interpreter for static analysis only: ``analyze()`` runs nothing."""
    return bashkit.Bash()


def _word(word: str | None) -> str:
    if word is None:
        return "<expr>"
    return shlex.quote(word) if not word or _NEEDS_QUOTES.search(word) else word


def _is_help(args: list[str | None], subcommand: str | None) -> bool:
    return subcommand == "help" or "--help" in args or "-h" in args or args[:1] == ["help"]


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
