"""Plain scripts split all together give exactly what bashkit's parser gives, script by script.

:func:`evalnb._store.plain_scripts.plain_target_commands` finds the target commands of
plain scripts with polars' regular expressions, for speed; every script it calls plain
must give the commands :func:`evalnb._scoring.commands.target_commands` (bashkit's
parser) gives, and it must leave every other kind of script to that parser. Checked on
generated scripts (hypothesis) mixing every token the grammar knows with ones it must
refuse, on the scripts of the published runs, and on hand-picked edge cases.
"""

from __future__ import annotations

import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import evalnb as en
from evalnb._scoring.commands import target_commands
from evalnb._store.plain_scripts import plain_target_commands


def _parsed(script: str) -> list[tuple]:
    """bashkit's answer: the fields of each target command."""
    return [(c.command, c.subcommand, c.is_help, c.name, c.dash_h) for c in target_commands(script)]


def _disagreements(scripts: list[str]) -> tuple[list[str], int]:
    """The plain scripts whose commands differ from bashkit's, and how many were plain."""
    plain, found = plain_target_commands(pl.Series(scripts, dtype=pl.Utf8))
    by_script: dict[int, list[tuple]] = {}
    for row in found.rows():
        by_script.setdefault(row[0], []).append(row[2:])
    wrong = [
        script
        for i, script in enumerate(scripts)
        if plain[i] and by_script.get(i, []) != _parsed(script)
    ]
    return wrong, int(plain.sum())


_CHARS = "abcxyz019-_./*?[]{}~=,:+%@#é"
_word = st.one_of(
    st.text(_CHARS, min_size=1, max_size=6),
    st.sampled_from(["ls", "cat", "grep", "jq", "-h", "--help", "help", "-n", "/bin/ls", "x/"]),
    st.text(_CHARS + ' "$\\`!\t<>|;&()', max_size=6).map(lambda t: f"'{t}'"),
    st.text(_CHARS + " '$\\`!<>|;&()", max_size=6).map(lambda t: f'"{t}"'),
    st.sampled_from(["$x", "${x}", "$(ls)", "`ls`", "a\\ b", "\\", "(", ")", "{", "}", "!"]),
    st.sampled_from(['"$x"', '"a ${x}"b', "$x.y", "'$x'", "$", "${x", "$1", '"$@"', "$x$y"]),
    st.sampled_from(["if", "then", "fi", "for", "do", "done", "in", "exec", "env", "nohup"]),
    st.just("command"),
    st.sampled_from(["x=1", "A_B=c", "#c", "'", '"', "<<EOF", "&", "[[", "time", "eval"]),
)
_separator = st.sampled_from([" ", "  ", "\t", " && ", "&&", " || ", "|", " | ", ";", "; ", "\n"])
_redirect = st.sampled_from([">", ">>", "<", "2>", "2>>", "2>&1", ">&2", "&>", "&>>", ">|", "<>"])
_token = st.one_of(_word, _word, _word, _separator, _separator, _redirect)
_script = st.lists(st.tuples(_token, st.sampled_from(["", " ", " ", "  "])), max_size=12).map(
    lambda parts: "".join(token + space for token, space in parts)
)


@settings(max_examples=150, deadline=None)
@given(st.lists(_script, min_size=1, max_size=20))
def test_generated_plain_scripts_split_as_bashkit_parses_them(scripts):
    wrong, _ = _disagreements(scripts)
    assert wrong == []


_argument = st.one_of(
    st.text("abcxyz019-_./*", min_size=1, max_size=5),
    st.sampled_from(["-c", "--help", "help", "-h", "$f", '"$f"', "${f}.x", "'a b'", "'$f'"]),
    st.sampled_from(["2>&1", "> o", ">>'o x'", "< $f"]),
)
_command = st.tuples(
    st.sampled_from(["ls", "wc", "cat", "help", "jq", "/bin/grep", "break", "x"]),
    st.lists(_argument, max_size=3),
).map(lambda c: " ".join([c[0], *c[1]]))
_commands = st.lists(
    st.tuples(_command, st.sampled_from([" && ", "; ", " | ", "\n", " || ", ";"])),
    min_size=1,
    max_size=3,
).map(lambda parts: "".join(c + s for c, s in parts)[: -len(parts[-1][1])])
_loop = st.tuples(
    st.sampled_from(["f", "_a1", "x"]),
    st.lists(_argument, max_size=3).map(" ".join),
    st.sampled_from([";", "; ", "\n", ";\n", " ;\n\n "]),
    st.sampled_from(["do ", "do\n", "do\n  "]),
    _commands,
    st.sampled_from([";", "; ", "\n", ";\n\n"]),
).map(lambda p: f"for {p[0]} in {p[1]}{p[2]}{p[3]}{p[4]}{p[5]}done")
# a loop with one token inserted or characters dropped somewhere: nearly a loop
_near_loop = st.tuples(
    _loop,
    st.integers(0, 80),
    st.one_of(
        _token,
        st.sampled_from(["; do ", "; done", "; for f in a; ", "do ", "done ", " && ", ";", "|"]),
        st.integers(1, 4).map(lambda n: -n),
    ),
).map(
    lambda p: (
        p[0][: p[1]] + p[2] + p[0][p[1] :]
        if isinstance(p[2], str)
        else p[0][: p[1]] + p[0][p[1] - p[2] :]
    )
)
_pieces = st.one_of(_loop, _near_loop, _commands, _script)
_looping = st.lists(_pieces, min_size=1, max_size=3).flatmap(
    lambda pieces: st.lists(
        st.sampled_from([" && ", "; ", "\n", " || ", " | ", " > o", ""]),
        min_size=len(pieces) - 1,
        max_size=len(pieces) - 1,
    ).map(lambda seps: "".join(p + s for p, s in zip(pieces, [*seps, ""], strict=True)))
)


@settings(max_examples=150, deadline=None)
@given(st.lists(_looping, min_size=1, max_size=20))
def test_generated_loops_split_as_bashkit_parses_them(scripts):
    """`for NAME in WORD...; do ...; done` loops, well formed or nearly, among plain
    commands and with variables in their words."""
    assert _disagreements(scripts)[0] == []


REALISTIC = [
    "cat /data/a.txt",
    "ls -la /work/kato",
    "grep -n ka /data/ka_1.txt",
    "grep -c ka /data/ka_1.txt | sort -n",
    "jq '.items[0].name' /data/x.json",
    "jq -r '.items[3].ka' /data/x.json && wc -l /data/x.json",
    "sed -n '3,3p' /data/f.txt; head -n 5 /data/f.txt",
    "awk -F, '{print $2}' /data/f.csv | sort | uniq -c",
    "find /work -name '*.py' -type f",
    "mkdir -p /work/out && cp /data/a.txt /work/out/",
    "tar -czf out.tar.gz /work/out",
    "cut -d: -f2 /etc/passwd | sort -u",
    "echo done >> /work/log.txt",
    "test -f /data/a.txt && echo ok || echo missing",
    "diff /data/a.txt /work/a.bak",
    "sort -k2 -t, /data/f.csv | head -n 3",
    "cat /data/a.txt 2>/dev/null | wc -l",
    'echo "total: 12" > /work/out.txt',
    "python3 -c 'print(1+1)'",
    "git status --short",
    'for f in /work/*; do wc -c "$f"; done',
    "cat <<EOF > /work/a.txt\nhello\nEOF",
    "x=$(wc -l < /data/a.txt); echo $x",
    "cd /work && ls",
]
"""Scripts of the kind agents run (the bench's templates and common idioms)."""


def test_most_realistic_scripts_are_plain_and_split_as_bashkit_parses_them():
    wrong, plain = _disagreements(REALISTIC)
    assert wrong == []
    assert plain == len(REALISTIC) - 2  # all but the heredoc and the substitution


@pytest.mark.parametrize(
    "script",
    [
        "ls *.txt ~/x [ab]* {a,b}",
        "echo 'a b'c \"x y\" '' \"it's\" a'b'\"c\"",
        "echo a>f; echo a 2>err; ls 1>&2 >&2 2>&1 &>f >|f <>f 2>>e",
        "ls &&\nls |\nwc;\n\nls;",
        "/usr/bin/git status --help; help cd; jq -h; df -h",
        "[ -d x ] && ls -- -h",
        ";ls",
        "ls; ;ls",
        "> f",
        "ls >",
        "x/ -a",
        "ls & echo x",
        "echo a#b",
        "a=1 ls",
        'echo $x "${y}z" \'$w\' "a $v"b',
        'for f in a "b c" *; do wc -c "$f"; done && ls',
        "for f in a\ndo\n  ls\ndone\nls",
        "for f in a; do ls; done; for g in b; do cat $g; done",
        "for f in a; do\ndone",
        "for f x; do ls; done",
        "for f; do ls; done",
        "for 1 in a; do ls; done",
        "for f in a; do ls; do ls; done",
        "for f in a; do ls &&\ndone",
        "for f in a; do for g in b; do ls; done; done",
        "for f in a; do ls; done > o",
        "for f in a; do ls; done | wc",
        "$cmd -x",
    ],
)
def test_edge_cases_split_as_bashkit_parses_them_or_are_left_to_it(script):
    assert _disagreements([script])[0] == []


def test_the_published_runs_scripts_split_as_bashkit_parses_them(bashkit_eval_files):
    scripts = en.load(*bashkit_eval_files).tool_calls.get_column("commands").unique()
    wrong, plain = _disagreements(scripts.drop_nulls().to_list())
    assert wrong == []
    assert plain > 0
