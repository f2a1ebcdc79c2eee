"""User patterns in the Rust ``regex`` crate's dialect, matched by RE2 in linear time.

bashkit-eval's checks (``stdout_regex``, and evalnb's own ``file_line_regex`` with them)
and llm-tool-test's gates (``command_output_matches``, ``file_matches``) and command
patterns (``target.command_pattern``) are matched by Rust programs with the ``regex``
crate: ``$`` is the end of the text unless ``(?m)`` is set (Python's ``re`` also
matches before a final newline, so ``stdout_regex:^42$`` matched ``42\\n``), and there
is no backtracking, so no backreferences or lookaround. :func:`compile_pattern` is the
one place a user's pattern is compiled, a check's, a gate's or a command pattern
(``target.command_pattern``, ``interaction(pattern=...)``, the default one of
:func:`evalnb.records.scenario.default_command_pattern` and llm-tool-test's): it
translates the pattern to RE2 (``google-re2``), the engine the Rust crate is modelled
on, which runs in time linear in the text, and refuses at load time what the dialect
lacks. Only evalnb's own fixed patterns stay in Python's ``re``.

RE2's own semantics equal Rust's for ``$``, ``^``, ``\\A``, ``\\z``, ``.`` (any
character but ``\\n``), the flags ``i``, ``m``, ``s``, ``U`` (``(?m)`` lines end at
``\\n`` only), leftmost-first alternation, simple Unicode case folding, ``\\p{Greek}``,
``\\pL``, ``[[:alpha:]]`` and the escapes ``\\x7F`` / ``\\x{10FFFF}``. Translated so that
they mean what they mean in Rust:

- ``\\d`` / ``\\D``: Unicode decimal digits, ``\\p{Nd}`` (RE2's are ASCII ``[0-9]``).
- ``\\s`` / ``\\S``: Unicode ``White_Space`` (:data:`WHITE_SPACE`); ``\\w`` / ``\\W``:
  Rust's word characters (:data:`WORD`). Inside a bracket class ``\\s`` and ``\\w`` too;
  ``\\S`` and ``\\W`` there keep RE2's ASCII meaning (see below).
- ``\\u007F``, ``\\u{7F}``, ``\\U0000007F``, ``\\U{7F}``: written as ``\\x{7F}``.

Refused (ValueError), because the Rust dialect lacks them, so bashkit-eval or
llm-tool-test would refuse the pattern too: backreferences (``\\1``, ``\\k<n>``,
``(?P=n)``), lookahead and lookbehind, atomic groups ``(?>...)``, possessive
quantifiers ``a++`` / ``a*+`` (and any quantifier on a quantifier, below), ``\\Z``,
``\\Q...\\E``, ``\\C``, octal escapes, comment groups ``(?#...)``, a ``{`` that starts no
count ``{n}``, ``{n,}``, ``{n,m}`` (Python and RE2 read it as a character), group names
that start with a digit or repeat, and any other escape of a letter Rust does not know.

Refused because RE2 lacks them although Rust has them (no pattern is matched with a
meaning other than Rust's where evalnb can tell): ``\\<``, ``\\>``, ``\\b{start}``,
``\\b{end}`` and the half boundaries; class set operations ``&&``, ``--``, ``~~`` and
nested classes ``[a[bc]]``; the flags ``x`` (verbose), ``u`` and ``R`` (CRLF lines); a
quantifier on a quantifier (``a**``, ``a{2}{3}``: write ``(?:a*)*``); counts above 1,000;
Unicode properties other than general categories by short name (``L``, ``Lu``, ``Nd``),
scripts by name (``Greek``) and ``Any`` (so ``\\p{Alphabetic}``, ``\\p{Letter}``,
``\\p{sc=Greek}``, ``\\p{greek}``); group names RE2 does not accept (``.``, ``[``, ``]``).

Remaining differences, matched otherwise than Rust would:

- ``\\b`` and ``\\B`` are ASCII word boundaries (Rust's are Unicode): ``\\bcafé\\b`` does
  not match ``café!``, as ``é`` is not a word character to RE2's ``\\b``.
- ``\\S`` and ``\\W`` inside a bracket class are ASCII: ``[^\\W]`` does not match ``é``.
- Unicode tables: RE2's and the Rust crate's Unicode versions can differ, so a
  character assigned in a recent version may fall in different classes.
- Size: RE2 refuses a program above 8 MiB, the Rust crate an automaton above 10 MiB,
  so a very large pattern may compile in one and not the other.
- Text that is not UTF-8 (a lone surrogate in a Python string) is matched with each
  bad byte read as U+FFFD, like Rust's lossy decoding (:meth:`RustRegex.is_match`);
  :func:`utf8`, which keeps positions, reads each lone surrogate as one U+FFFD.

Example:
    >>> compile_pattern(r"^42$").is_match("42\\n"), compile_pattern(r"(?m)^42$").is_match("42\\n")
    (False, True)
    >>> compile_pattern(r"^\\d+$").is_match("٤٢")  # Arabic-Indic digits are digits in Rust
    True
    >>> compile_pattern(r"(\\w)\\1")
    Traceback (most recent call last):
    ...
    ValueError: invalid regex '(\\\\w)\\\\1': a backreference \\1: the Rust regex dialect \
(bashkit-eval, llm-tool-test) has no backreferences
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, Protocol

WHITE_SPACE = r"\t-\r \x{85}\x{A0}\x{1680}\x{2000}-\x{200A}\x{2028}\x{2029}\x{202F}\x{205F}\x{3000}"
"""Unicode's ``White_Space`` property as class items: Rust's ``\\s``."""

WORD = (
    r"\pL\pM\p{Nd}\p{Pc}\p{Nl}\x{200C}\x{200D}"
    r"\x{24B6}-\x{24E9}\x{1F130}-\x{1F149}\x{1F150}-\x{1F169}\x{1F170}-\x{1F189}"
)
"""Rust's ``\\w`` as class items RE2 knows: ``Alphabetic`` (the letters, ``Nl``, and the
``Other_Alphabetic`` characters outside the marks: circled and squared Latin letters),
the marks ``M``, the decimal digits ``Nd``, the connector punctuation ``Pc`` and
``Join_Control`` (U+200C, U+200D)."""

_COUNT = re.compile(r"\{\d+(?:,\d*)?\}")
_POSIX = re.compile(r"\[:\^?[a-z]+:\]")
_FLAGS = re.compile(r"([A-Za-z]*)(?:-([A-Za-z]*))?[:)]")
_NAME = re.compile(r"P?<([^>]*)>")
_HEX = re.compile(r"u([0-9A-Fa-f]{4})|U([0-9A-Fa-f]{8})|[uU]\{([0-9A-Fa-f]{1,8})\}")
_NO_BACKTRACKING = "the Rust regex dialect (bashkit-eval, llm-tool-test) has no"
_RE2_LACKS = "evalnb's engine (RE2) lacks it, though the Rust dialect has it"

_GROUPS = (
    ("<=", f"lookbehind (?<=: {_NO_BACKTRACKING} lookaround"),
    ("<!", f"lookbehind (?<!: {_NO_BACKTRACKING} lookaround"),
    ("=", f"lookahead (?=: {_NO_BACKTRACKING} lookaround"),
    ("!", f"lookahead (?!: {_NO_BACKTRACKING} lookaround"),
    (">", f"an atomic group (?>: {_NO_BACKTRACKING} atomic groups"),
    ("P=", f"a named backreference (?P=: {_NO_BACKTRACKING} backreferences"),
    ("P>", f"a subroutine call (?P>: {_NO_BACKTRACKING} subroutines"),
    ("#", "a comment group (?#: not in the Rust regex dialect"),
    ("'", "a group name in quotes (?'name': write (?P<name>...)"),
)
_FLAG_NAMES = {
    "x": f"the flag x (verbose mode): {_RE2_LACKS}",
    "u": f"the flag u (Unicode mode, on by default): {_RE2_LACKS}",
    "R": f"the flag R (CRLF mode): {_RE2_LACKS}",
}
_LETTER_ESCAPES = {
    "Z": r"\Z: not in the Rust regex dialect; \z is the end of the text",
    "Q": r"\Q...\E quoting: not in the Rust regex dialect; escape each character",
    "E": r"\Q...\E quoting: not in the Rust regex dialect; escape each character",
    "C": r"\C (any byte): not in the Rust regex dialect",
    "k": rf"a named backreference \k: {_NO_BACKTRACKING} backreferences",
    "g": rf"a backreference \g: {_NO_BACKTRACKING} backreferences",
}
_RUST_ESCAPES = set("aftnrvAzbBxpPdDsSwWuU")
_SURROGATE = re.compile("[\ud800-\udfff]")


class Captures(Protocol):
    """A match found by :meth:`RustRegex.captures_at` (Rust's ``regex::bytes::Captures``):
    offsets count bytes of the UTF-8 text searched, a group is its bytes (None when it
    took no part in the match)."""

    def start(self) -> int:
        """Where the match starts."""
        ...

    def end(self) -> int:
        """Where the match ends (the offset after its last byte)."""
        ...

    def group(self, index: int) -> bytes | None:
        """Capture group ``index`` (0: the whole match)."""
        ...


@dataclass(frozen=True)
class RustRegex:
    """A user's pattern compiled by :func:`compile_pattern` (compare it by ``pattern``).

    Example:
        >>> compile_pattern(r"total:\\s+\\d+").is_match("total:  12")
        True
    """

    pattern: str
    """The pattern as written."""
    _re2: Any = field(repr=False, compare=False)

    def is_match(self, text: str) -> bool:
        """True when the pattern matches somewhere in ``text`` (Rust's ``Regex::is_match``).

        Example:
            >>> compile_pattern("^b").is_match("a\\nb"), compile_pattern("(?m)^b").is_match("a\\nb")
            (False, True)
        """
        try:
            return self._re2.search(text) is not None
        except UnicodeEncodeError:  # lone surrogates: read as U+FFFD, as Rust reads bad UTF-8
            lossy = text.encode("utf-8", "surrogatepass").decode("utf-8", "replace")
            return self._re2.search(lossy) is not None

    @property
    def groups(self) -> int:
        """How many capture groups the pattern has (Rust's ``captures_len`` less one).

        Example:
            >>> compile_pattern(r"notes\\s+(\\S+)").groups, compile_pattern("notes").groups
            (1, 0)
        """
        return int(self._re2.groups)

    def captures_at(self, haystack: bytes, start: int = 0) -> Captures | None:
        """The leftmost match in the UTF-8 ``haystack`` that starts at byte ``start`` or
        after, or None (Rust's ``regex::bytes::Regex::captures_at``): the text before
        ``start`` is still seen, so ``^`` matches only at 0 and ``\\b`` looks at the byte
        before. A search resumed from any offset costs only the bytes it reads, where a
        ``str`` would be encoded again for each search (encode with :func:`utf8`).

        Example:
            >>> found = compile_pattern(r"notes\\s+(\\S+)").captures_at(b"notes a; notes b", 1)
            >>> found.start(), found.group(1)
            (9, b'b')
            >>> compile_pattern("^notes").captures_at(b"xnotes", 1) is None
            True
        """
        found: Captures | None = self._re2.search(haystack, start)
        return found


def utf8(text: str) -> bytes:
    """``text`` as UTF-8 for :meth:`RustRegex.captures_at`, each lone surrogate (a byte
    that was not UTF-8) read as one U+FFFD, so the characters stay one for one.

    Example:
        >>> utf8("é\\udcff")
        b'\\xc3\\xa9\\xef\\xbf\\xbd'
    """
    try:
        return text.encode()
    except UnicodeEncodeError:
        return _SURROGATE.sub("\ufffd", text).encode()


@lru_cache(maxsize=4096)
def compile_pattern(pattern: str) -> RustRegex:
    """Compile a user's pattern in the Rust dialect (see the module docstring).

    Raises ValueError ``invalid regex '<pattern>': <why>`` for a pattern the dialect
    or the engine lacks, so datasets and scenarios refuse it when they load. Cached: a
    dataset repeats its patterns across tasks and epochs.

    Example:
        >>> compile_pattern("a(?=b)")
        Traceback (most recent call last):
        ...
        ValueError: invalid regex 'a(?=b)': lookahead (?=: the Rust regex dialect \
(bashkit-eval, llm-tool-test) has no lookaround
    """
    import re2

    options = re2.Options()
    options.log_errors = False
    try:
        return RustRegex(pattern, re2.compile(_translate(pattern), options))
    except _Refused as exc:
        reason = str(exc)
    except re2.error as exc:
        reason = _re2_reason(exc)
    raise ValueError(f"invalid regex {pattern!r}: {reason}")


class _Refused(Exception):
    """A construct :func:`_translate` refuses, with the reason."""


def _translate(pattern: str) -> str:
    """``pattern`` in RE2's syntax with Rust's meaning; raises _Refused."""
    out: list[str] = []
    names: set[str] = set()
    i = 0
    while i < len(pattern):
        c = pattern[i]
        if c == "\\":
            text, i = _escape(pattern, i, in_class=False)
        elif c == "[":
            text, i = _bracket_class(pattern, i)
        elif c == "(":
            _check_group(pattern, i, names)
            text, i = c, i + 1
        elif c == "{":
            count = _COUNT.match(pattern, i)
            if count is None:
                raise _Refused(
                    "a { that starts no count {n}, {n,} or {n,m}: the Rust regex dialect "
                    r"refuses it; write \{ for the character"
                )
            text, i = count.group(), count.end()
        else:
            text, i = c, i + 1
        out.append(text)
    return "".join(out)


def _escape(pattern: str, i: int, *, in_class: bool) -> tuple[str, int]:
    """The escape at ``pattern[i] == '\\'``: its RE2 text and the index after it."""
    c = pattern[i + 1 : i + 2]
    if c in ("d", "D"):
        return (r"\p{Nd}" if c == "d" else r"\P{Nd}"), i + 2
    if c in ("s", "w") or (c in ("S", "W") and not in_class):
        items = WHITE_SPACE if c in "sS" else WORD
        if in_class:
            return items, i + 2
        return (f"[{items}]" if c.islower() else f"[^{items}]"), i + 2
    if c in ("u", "U"):
        code = _HEX.match(pattern, i + 1)
        if code is None:
            raise _Refused(rf"a malformed \{c} escape: write \u007F, \u{{7F}} or \U0000007F")
        return "\\x{" + next(g for g in code.groups() if g) + "}", code.end()
    if c in ("<", ">") or (c == "b" and not in_class and pattern.startswith("{", i + 2)):
        raise _Refused(rf"a start or end of word assertion \{c}: {_RE2_LACKS}")
    if c.isdigit():
        if c == "0":
            raise _Refused(r"an octal escape: off in the Rust regex dialect; write \x00")
        raise _Refused(rf"a backreference \{c}: {_NO_BACKTRACKING} backreferences")
    if c in ("p", "P", "x"):
        end = pattern.find("}", i + 2) + 1 if pattern.startswith("{", i + 2) else 0
        end = end or i + (3 if c != "x" else 4)
        return pattern[i:end], end
    if c.isascii() and c.isalpha() and c not in _RUST_ESCAPES:
        raise _Refused(_LETTER_ESCAPES.get(c, rf"the escape \{c}: not in the Rust regex dialect"))
    return pattern[i : i + 2], i + 2


def _bracket_class(pattern: str, i: int) -> tuple[str, int]:
    """The class opening at ``pattern[i] == '['``: its RE2 text and the index after it."""
    out = ["["]
    i += 1
    if pattern.startswith("^", i):
        out.append("^")
        i += 1
    if pattern.startswith("]", i):  # a ] first in a class is the character
        out.append(r"\]")
        i += 1
    while i < len(pattern):
        c = pattern[i]
        if c == "]":
            out.append(c)
            return "".join(out), i + 1
        if c == "\\":
            text, i = _escape(pattern, i, in_class=True)
        elif c == "[":
            posix = _POSIX.match(pattern, i)
            if posix is None:
                raise _Refused(
                    f"a [ inside a class (a nested class in the Rust dialect): {_RE2_LACKS}; "
                    r"write \[ for the character"
                )
            text, i = posix.group(), posix.end()
        elif pattern.startswith(("&&", "--", "~~"), i):
            raise _Refused(f"the class set operation {pattern[i : i + 2]}: {_RE2_LACKS}")
        else:
            text, i = c, i + 1
        out.append(text)
    return "".join(out), i  # unclosed: RE2 says so


def _check_group(pattern: str, i: int, names: set[str]) -> None:
    """Refuse the group opening at ``pattern[i] == '('`` where Rust and RE2 differ."""
    if not pattern.startswith("(?", i):
        return
    rest = i + 2
    for opener, reason in _GROUPS:
        if pattern.startswith(opener, rest):
            raise _Refused(reason)
    name = _NAME.match(pattern, rest)
    if name is not None:
        group = name.group(1)
        if group[:1].isdigit() or group in names:
            raise _Refused(f"the group name {group!r}: a name starts with a letter or _, once")
        names.add(group)
        return
    flags = _FLAGS.match(pattern, rest)
    for flag in "".join(g or "" for g in flags.groups()) if flags else "":
        if flag in _FLAG_NAMES:
            raise _Refused(_FLAG_NAMES[flag])


def _re2_reason(exc: Exception) -> str:
    """RE2's error message, with what it means for the Rust dialect."""
    raw = exc.args[0] if exc.args else ""
    message = raw.decode("utf-8", "replace") if isinstance(raw, bytes) else str(raw)
    if message.startswith("bad repetition operator"):
        return (
            f"{message}: a quantifier on a quantifier (Python and PCRE read a++ as "
            "possessive, which the Rust dialect lacks; it reads a repeated repetition, "
            "which evalnb's engine (RE2) lacks); write it with a group, as (?:a+)+"
        )
    if message.startswith("invalid repetition size"):
        return f"{message}: evalnb's engine (RE2) allows counts up to 1,000"
    if re.match(r"invalid character class range: \\[pP]", message):
        return (
            f"{message}: evalnb's engine (RE2) knows Unicode general categories by their "
            "short names (L, Lu, Nd), scripts by name (Greek) and Any"
        )
    return message
