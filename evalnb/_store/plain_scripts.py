"""The target commands of plain scripts, found for many scripts at once.

Most scripts an agent runs are plain: simple commands joined by ``&&``, ``||``, ``|``,
``;`` or newlines, of words that are literal text or quoted literal text, perhaps with
file redirections (``cat a | grep -c x > out``). Their target commands
(:func:`evalnb._scoring.commands.target_commands` without a pattern) follow from the
words alone, so they are found here for all of them together, with polars' regular
expressions (compiled, linear time) and no Python per script: splitting a million
distinct scripts costs about as much as reading them. Plain scripts may use variables
and ``for`` loops over words. Every other script (substitutions, other compound commands
and loops, heredocs, comments, escapes, assignments, ``exec``/``command``/``env``/``nohup``,
anything odd) is left to bashkit's parser by the caller.

A script is plain when it is, from start to end, tokens separated by blanks:

- a *word*: unquoted characters other than blanks, quotes, ``\\ $ ` | & ; < > ( ) # { }``
  (``{}`` itself is one), variables (``$NAME``, ``${NAME}``), ``'single-quoted'`` text and
  ``"double-quoted"`` text without ``\\ $ ` !`` but for variables, run together, holding no
  ``[[`` or ``]]`` and not ``!``; its text is the characters with the quotes taken off, and
  a word with a variable outside single quotes shows as ``<expr>``, as bashkit's parser
  shows a word it cannot know;
- a *separator*: ``&&``, ``||``, ``|``, ``;`` or a newline;
- a *redirection*: ``>``, ``>>``, ``<``, ``>|``, ``<>``, ``&>``, ``&>>``, with an optional
  file descriptor (``2>``), followed by its target word; or ``N>&M``, ``>&N``, ``N<&M``
  followed by a blank, a separator or the end.

It does not end in ``|``, ``&&`` or ``||``, and each of its simple commands has words, the
first of which is a command name: not a reserved word, an assignment, a path ending in
``/``, a command that runs its arguments, nor a name with quotes, ``$``, ``~`` or glob
characters (``[`` itself is one). The exception is a loop, not nested:
``for NAME in WORD...`` ended by ``;`` or a newline, then ``do`` and at least one command
(the first may follow ``do`` on its line), the last ended by ``;`` or a newline, then
``done``, alone and ended by ``;``, ``&&``, ``||``, a newline or the end; its commands are
the loop's target commands (``for f in *; do wc -c "$f"; done`` has one: ``wc -c <expr>``).
The tests check, script by script, that this gives what bashkit's parser gives
(tests/test_plain_scripts.py, with generated scripts).

Example:
    >>> scripts = ["cat a | grep -c 'x y' > o", "echo $(date)", 'for f in *; do wc "$f"; done']
    >>> plain, found = plain_target_commands(pl.Series(scripts))
    >>> plain.to_list(), found.select("script", "command_index", "command").rows()
    ([True, False, True], [(0, 0, 'cat a'), (0, 1, "grep -c 'x y'"), (2, 0, 'wc <expr>')])
"""

from __future__ import annotations

from typing import Final

import polars as pl

from evalnb._scoring.commands import SHORT_HELP

_NAME = r"[A-Za-z_][A-Za-z0-9_]*"
_VARIABLE = rf"\${_NAME}|\$\{{{_NAME}\}}"
_WORD = rf"""(?:[^\s'"\\$`|&;<>()#{{}}]|\{{\}}|{_VARIABLE}|'[^']*'|"(?:[^"\\$`!]|{_VARIABLE})*")+"""
# a word with a variable outside single quotes (the grammar's words only)
_EXPANDED = r"""^(?:[^'"$]|'[^']*'|"[^"$]*")*(?:\$|"[^"$]*\$)"""
_TARGETED = r"(?:[0-9]?(?:>>|>\||<>|>|<)|&>>|&>)"
_DUPLICATE = r"(?:[0-9]?[<>]&[0-9])"
_SEPARATOR = r"(?:&&|\|\||[|;\n])"
_TOKEN = rf"{_DUPLICATE}|{_TARGETED}|{_SEPARATOR}|{_WORD}"
# a duplication (2>&1) ends at a blank, a separator or the end: ">&2x" redirects to file "2x"
_ONE = rf"{_DUPLICATE}(?:[ \t]+|$|{_SEPARATOR}[ \t]*)|(?:{_TARGETED}|{_SEPARATOR}|{_WORD})[ \t]*"
_PLAIN = rf"^[ \t]*(?:{_ONE})*$"

_FDS = ["", *"0123456789"]
SEPARATORS: Final = ["&&", "||", "|", ";", "\n"]
TARGETED: Final = [f"{fd}{op}" for fd in _FDS for op in (">>", ">|", "<>", ">", "<")] + [
    "&>>",
    "&>",
]
"""Redirections followed by their target word (the grammar's, spelt out)."""
DUPLICATING: Final = [f"{fd}{op}&{to}" for fd in _FDS for op in "<>" for to in "0123456789"]
"""Redirections that duplicate a file descriptor (``2>&1``): no target word."""
WORD, SEPARATOR, TARGETED_KIND, DUPLICATING_KIND = range(4)
FOR, DO, DONE = 1, 2, 3
"""The roles in a loop of the commands that ``for``, ``do`` and ``done`` start."""
_KINDS = {
    **dict.fromkeys(SEPARATORS, SEPARATOR),
    **dict.fromkeys(TARGETED, TARGETED_KIND),
    **dict.fromkeys(DUPLICATING, DUPLICATING_KIND),
}

NOT_PLAIN_NAMES: Final = frozenset(
    {
        *("if", "then", "else", "elif", "fi", "for", "while", "until", "do", "done"),
        *("case", "esac", "function", "select", "time", "coproc", "in"),
        *("{", "}", "!", "[[", "]]"),
        *("exec", "command", "env", "nohup", "eval", "source", ".", "alias"),
    }
)
"""Command names whose script is left to bashkit's parser: reserved words and the
commands that run (or read) other commands."""

COLUMNS: Final = {
    "script": pl.UInt32,
    "command_index": pl.Int64,
    "command": pl.Utf8,
    "subcommand": pl.Utf8,
    "is_help": pl.Boolean,
    "name": pl.Utf8,
    "dash_h": pl.Boolean,
}


def plain_target_commands(scripts: pl.Series) -> tuple[pl.Series, pl.DataFrame]:
    """Which ``scripts`` are plain (see the module docstring) and their target commands:
    one row per command, ``script`` its script's position in ``scripts``, with the fields
    of :class:`~evalnb._scoring.commands.TargetCommand` (no pattern: the subcommand is the
    command name).

    Example:
        >>> plain, found = plain_target_commands(pl.Series(["jq -h . a.json && /bin/ls", "a=$x"]))
        >>> plain.to_list(), found.select("script", "command", "name", "is_help").rows()
        ([True, False], [(0, 'jq -h . a.json', 'jq', True), (0, 'ls', 'ls', False)])
    """
    # the token grammar, and no [[ ]] or lone !, nor a trailing |, && or || (bashkit and bash
    # differ on those), each its own search (an alternation of them is 3x slower)
    grammar = (
        scripts.str.contains(_PLAIN)
        & ~scripts.str.contains(r"\[\[|\]\]")
        & ~scripts.str.contains(r"(?:^|[ \t;|&\n])!(?:[ \t]|$)")
        & ~scripts.str.contains(r"(?:\|\||&&|\|)[ \t\n]*$")
    ).fill_null(False)
    token, script, kind = pl.col("token"), pl.col("script"), pl.col("_kind")
    same = script == script.shift(1)  # tokens of one script are consecutive rows
    # a command starts with its script or after a separator (which ends its command)
    starts = ~same.fill_null(False) | ((kind.shift(1) == SEPARATOR) & same).fill_null(False)
    row = pl.int_range(pl.len(), dtype=pl.UInt32)
    role = pl.col("_role")
    tokens = (
        pl.DataFrame({"text": scripts})
        .with_row_index("script")
        .filter(grammar)
        .select("script", token=pl.col("text").str.extract_all(_TOKEN))
        .explode("token")
        .drop_nulls("token")
        .with_columns(_kind=token.replace_strict(_KINDS, default=WORD, return_dtype=pl.UInt8))
        .with_columns(
            _cmd=starts.cum_sum().cast(pl.UInt32).set_sorted(),
            _start=starts,
            # a command's role in a loop, from its first token
            _role=pl.when(starts)
            .then(
                pl.when(token == "for")
                .then(FOR)
                .when(token == "do")
                .then(DO)
                .when(token == "done")
                .then(DONE)
                .otherwise(0)
            )
            .forward_fill(),
            # a word, unless a redirection's target
            _word=(kind == WORD) & ~((kind.shift(1) == TARGETED_KIND) & same).fill_null(False),
        )
        .with_columns(
            # the loop's own words: all of a header, the first of a `do` or `done` command
            _keyword=(role == FOR) | ((role > FOR) & pl.col("_start")),
            # a redirection without its target word
            _bad=(kind == TARGETED_KIND)
            & ~((kind.shift(-1) == WORD) & (script == script.shift(-1))).fill_null(False),
        )
    )
    # per command, from running counts read at its last token (no grouping): its words
    # (not the loop's), loop words, redirections, bad tokens and the separator ending it
    counts = ("_words", "_keywords", "_redirects", "_bad")
    commands = (
        tokens.select(
            "script",
            "_role",
            _end=pl.when(kind == SEPARATOR).then(token),
            _words=(pl.col("_word") & ~pl.col("_keyword")).cum_sum(),
            _keywords=pl.col("_keyword").cum_sum(),
            _redirects=kind.is_in([TARGETED_KIND, DUPLICATING_KIND]).cum_sum(),
            _bad=pl.col("_bad").cum_sum(),
            _last=(pl.col("_cmd") != pl.col("_cmd").shift(-1)).fill_null(True),
        )
        .filter("_last")
        .with_columns(pl.col(c) - pl.col(c).shift(1).fill_null(0) for c in counts)
    )
    # an empty command where bash (or bashkit) would not take one makes the script not
    # plain (a loop's header and `done` are not empty; a bare `do` is)
    prev_end = pl.when(script == script.shift(1)).then(pl.col("_end").shift(1))
    empty = (pl.col("_words") == 0) & ((role == 0) | (role == DO))
    broken = commands.filter(
        (pl.col("_bad") > 0)
        | (
            empty
            & (
                (pl.col("_redirects") > 0)
                | (pl.col("_end").is_not_null() & (pl.col("_end") != "\n"))
                | (pl.col("_end").is_null() & prev_end.is_in(["&&", "||", "|"]).fill_null(False))
            )
        )
    ).get_column("script")
    # loops: `for NAME in WORD...` ended by `;` or a newline, then `do` and at least one
    # command (the first may follow `do`), the last ended by `;` or a newline, then `done`
    # (ended by `;`, `&&`, `||`, a newline or the end), not nested; the blank lines between
    # are empty commands (above)
    steps = commands.filter((role != 0) | (pl.col("_words") > 0) | (pl.col("_redirects") > 0))
    inside = script == script.shift(1)
    before = pl.when(inside).then(role.shift(1))
    depth = pl.when(role == FOR).then(1).when(role == DONE).then(-1).otherwise(0).cum_sum()
    depth -= pl.when(~inside.fill_null(False)).then(depth.shift(1).fill_null(0)).forward_fill()
    last = (script != script.shift(-1)).fill_null(True)
    loops = steps.filter(pl.col("_keywords") > 0).get_column("script").unique().implode()
    # a header that is not `for NAME in WORD...`, a `done` with more, either redirected
    # (their few tokens filtered first); bashkit's parser takes any word for NAME and words
    # after `done`, as bash does not: such scripts are left to it, which is safe either way
    at = pl.col("_at")
    misformed = (
        tokens.filter((role == FOR) | (role == DONE))
        .with_columns(_at=row - pl.when("_start").then(row).forward_fill())
        .filter(
            kind.is_in([TARGETED_KIND, DUPLICATING_KIND])
            | ((role == DONE) & (at > 0) & (kind != SEPARATOR))
            | ((role == FOR) & (at == 1) & ~token.str.contains(f"^{_NAME}$"))
            | ((role == FOR) & (at == 2) & (token != "in"))
        )
        .get_column("script")
    )
    unlooped = (
        steps.filter(script.is_in(loops))
        .filter(
            ((role == FOR) & ((pl.col("_keywords") < 3) | ~pl.col("_end").is_in([";", "\n"])))
            | ((role == FOR) & (pl.when(script == script.shift(-1)).then(role.shift(-1)) != DO))
            | ((role == DO) & (before != FOR)).fill_null(True)
            | (
                (role == DONE)
                & (
                    ~pl.col("_end").is_in([";", "\n", "&&", "||"]).fill_null(True)
                    | ~before.is_in([0, DO]).fill_null(False)
                    | ((before == DO) & (pl.col("_words").shift(1) == 0))
                    | ~pl.when(inside)
                    .then(pl.col("_end").shift(1))
                    .is_in([";", "\n"])
                    .fill_null(False)
                )
            )
            | ~depth.is_between(0, 1)
            | (last & (depth != 0))
        )
        .get_column("script")
    )
    # per word: its text without quotes and as the command shows it: a word with quotes is
    # quoted as shlex.quote would when it holds blanks, quotes, a backslash, < or >, or is
    # empty (a word without quotes holds none of those, so it shows as it is); the first
    # word shows as the command's name, its basename (a name that would need quotes makes
    # the script not plain, below)
    words = tokens.filter(pl.col("_word") & ~pl.col("_keyword")).select(
        "script",
        "_cmd",
        _first=(pl.col("_cmd") != pl.col("_cmd").shift(1)).fill_null(True),
        _raw=token,
    )
    raw = words.get_column("_raw")
    # the words with quotes or variables (few): only they go through the other regexes
    odd = raw.str.contains(r"""['"$]""").arg_true()
    quoted = odd.filter(raw.gather(odd).str.contains(r"""['"]"""))
    expanded = odd.filter(raw.gather(odd).str.contains(_EXPANDED))
    # with one kind of quote, every one is a delimiter: deleting them all is cheap; the
    # few with both go through the regex, which keeps a quote inside the other kind's
    within = raw.gather(quoted)
    has = within.str.contains
    mixed = (has("'", literal=True) & has('"', literal=True)).arg_true()
    unquoted = within.str.replace_all(r"""['"]""", "").scatter(
        mixed, within.gather(mixed).str.replace_all(r"""'([^']*)'|"([^"]*)\"""", "${1}${2}")
    )
    text = raw.clone().scatter(quoted, unquoted)  # scatter writes in place
    quote = pl.concat_str(
        pl.lit("'"), pl.lit(unquoted).str.replace_all("'", "'\"'\"'", literal=True), pl.lit("'")
    )
    special = pl.lit(unquoted).str.contains(r"""^$|[\s'"\\<>]""")
    shown = raw.clone().scatter(
        quoted, pl.select(pl.when(special).then(quote).otherwise(pl.lit(unquoted))).to_series()
    )
    # a word with a variable shows as <expr>, as bashkit's parser shows any non-literal word
    shown.scatter(expanded, "<expr>")
    firsts = words.get_column("_first").arg_true()
    names = text.gather(firsts)
    shown.scatter(firsts, names)
    paths = firsts.filter(names.str.contains("/", literal=True))
    shown.scatter(paths, text.gather(paths).str.replace(r"^.*/", ""))
    word, first = pl.col("word"), pl.col("_first")
    found = (
        words.with_columns(word=text, _shown=shown)
        .with_columns(
            _help=~first & ((word == "--help") | (first.shift(1) & (word == "help"))),
            _dash_h=~first & (word == "-h"),
        )
        .group_by("_cmd", maintain_order=True)  # sorted: each command's words are one slice
        .agg(
            script=script.first(),
            command=pl.col("_shown"),
            name=pl.col("_shown").first(),
            _raw0=pl.col("_raw").first(),
            _help=pl.col("_help").any(),
            dash_h=pl.col("_dash_h").any(),
        )
        .with_columns(pl.col("command").list.join(" "))
    )
    # (a name is a basename: a path ending in / gives an empty one)
    name, raw0 = pl.col("name"), pl.col("_raw0")
    named_badly = found.filter(
        name.is_in(list(NOT_PLAIN_NAMES))
        | name.str.contains(r"^[A-Za-z_][A-Za-z0-9_]*=|^$")
        | (raw0.str.contains(r"""[*?\[\]'"~$]""") & (raw0 != "["))
    ).get_column("script")
    failed = pl.concat([broken, unlooped, misformed, named_badly]).implode()
    plain = grammar & ~pl.int_range(scripts.len(), dtype=pl.UInt32, eager=True).is_in(failed)
    found = found.filter(~script.is_in(failed)).select(
        "script",
        # each script's commands are consecutive rows
        command_index=row
        - pl.when(script != script.shift(1).fill_null(-1)).then(row).forward_fill(),
        command="command",
        subcommand="name",
        is_help=(pl.col("name") == "help")
        | pl.col("_help")
        | (pl.col("dash_h") & pl.col("name").is_in(list(SHORT_HELP))),
        name="name",
        dash_h="dash_h",
    )
    return plain.rename("plain"), found.cast(COLUMNS)  # type: ignore[arg-type]
