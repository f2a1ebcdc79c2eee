"""User patterns in the Rust regex dialect: what matches, what is refused, what differs."""

from __future__ import annotations

import unicodedata

import pytest

from evalnb._scoring.expectations import evaluate_check
from evalnb.records import AgentTrace, Expectation, ToolCallResult
from evalnb.records.rust_regex import WHITE_SPACE, WORD, compile_pattern


def matches(pattern: str, text: str) -> bool:
    return compile_pattern(pattern).is_match(text)


def test_dollar_is_the_end_of_the_text_as_in_bashkit_eval():
    # Issue 25 item 3: Python's re let stdout_regex:^42$ match "42\n".
    trace = AgentTrace(tool_calls=[ToolCallResult(commands="echo 42", stdout="42\n")])
    assert not evaluate_check(Expectation(check="stdout_regex:^42$"), trace, None).passed
    assert evaluate_check(Expectation(check="stdout_regex:(?m)^42$"), trace, None).passed
    assert evaluate_check(Expectation(check=r"stdout_regex:^42\n$"), trace, None).passed


# Each case is what the Rust regex crate answers (its documented syntax and Unicode classes).
@pytest.mark.parametrize(
    ("pattern", "text", "expected"),
    [
        (r"^42$", "42\n", False),
        (r"(?m)^42$", "x\n42\ny", True),
        (r"(?m)^42$", "42\r\n", False),  # lines end at \n only (no CRLF mode)
        (r"\A42\z", "42", True),
        (r"^.$", "\n", False),
        (r"(?s)^.$", "\n", True),
        (r"^.$", "😀", True),  # one character, not one byte
        (r"^\d+$", "١٢٣", True),  # \d is \p{Nd}: Arabic-Indic digits
        (r"^[\d]+$", "١٢٣", True),
        (r"^\D$", "١", False),
        (r"^\s$", "\u00a0", True),  # \s is White_Space: no-break space
        (r"^[\s]$", "\u3000", True),
        (r"^\S$", "\u00a0", False),
        (r"^\w+$", "café", True),  # \w is Unicode: é is a word character
        (r"^[\w-]+$", "naïve-x", True),
        (r"^\W$", "é", False),
        (r"^\w$", "Ⓐ", True),  # Other_Alphabetic (a circled letter) is alphabetic
        (r"^\w$", "\u200d", True),  # Join_Control
        (r"^\p{Greek}+$", "αβγ", True),
        (r"^\pL\p{Lu}$", "aB", True),
        (r"^[[:alpha:]]+$", "abc", True),
        (r"^[[:alpha:]]$", "é", False),  # POSIX classes are ASCII
        (r"^\u00e9\u{e9}\U000000e9\U{E9}\x{e9}\xe9$", "éééééé", True),
        (r"(?i)^straße$", "STRASSE", False),  # simple case folding only
        (r"(?i)^k$", "\u212a", True),  # the Kelvin sign folds to k
        (r"a{2,}", "aa", True),
        (r"^a{2}?$", "aa", True),
        (r"(?U)a+", "a", True),
        (r"(?P<n>x)(?<m>y)", "xy", True),
        (r"\.\-\ \#\&\~\_\"", '.- #&~_"', True),  # any ASCII punctuation may be escaped
        (r"[]a]", "]", True),
        (r"[^]a]", "b", True),
        (r"total:\s+\d+", "total:   12", True),
    ],
)
def test_patterns_match_as_the_rust_regex_crate(pattern, text, expected):
    assert matches(pattern, text) is expected


# Refused when the dataset or scenario loads: the Rust dialect lacks these ...
LACKED_BY_RUST = [
    (r"(a)\1", r"a backreference \1: the Rust regex dialect (bashkit-eval, llm-tool-test)"),
    (r"(?P<n>a)(?P=n)", "named backreference"),
    (r"(?<n>a)\k<n>", "named backreference"),
    (r"a(?=b)", "lookahead (?=: the Rust regex dialect"),
    (r"a(?!b)", "no lookaround"),
    (r"(?<=a)b", "lookbehind (?<="),
    (r"(?<!a)b", "lookbehind (?<!"),
    (r"(?>a+)b", "atomic group"),
    (r"a++b", "possessive"),
    (r"a*+b", "possessive"),
    (r"a?+b", "possessive"),
    (r"a\Z", r"\Z: not in the Rust regex dialect; \z is the end of the text"),
    (r"\Qa.b\E", r"\Q...\E quoting"),
    (r"a\Cb", r"\C (any byte)"),
    (r"\012", "octal escape"),
    (r"a(?#note)b", "comment group"),
    (r"a{,3}", "a { that starts no count"),
    (r"{", "a { that starts no count"),
    (r'{"a": 1}', "a { that starts no count"),
    (r"a{2, 3}", "a { that starts no count"),
    (r"(?P<1a>x)", "the group name '1a'"),
    (r"(?P<a>x)(?P<a>y)", "the group name 'a'"),
    (r"(?'n'a)", "write (?P<name>...)"),
    (r"\h", r"the escape \h: not in the Rust regex dialect"),
    (r"\u12", r"a malformed \u escape"),
]
# ... and evalnb's engine (RE2) lacks these, which Rust has: refused, never matched otherwise.
LACKED_BY_RE2 = [
    (r"\<word\>", "start or end of word assertion"),
    (r"\b{start}word", "start or end of word assertion"),
    (r"[a-z&&[^aeiou]]", "the class set operation &&"),
    (r"[a-z&&b]", "the class set operation &&"),
    (r"[0-9--4]", "the class set operation --"),
    (r"[a-g~~b-h]", "the class set operation ~~"),
    (r"[a[bc]]", "a [ inside a class"),
    (r"(?x) a b", "the flag x (verbose mode)"),
    (r"(?-u:\b)a", "the flag u"),
    (r"(?mR)^a$", "the flag R (CRLF mode)"),
    (r"a**", "a quantifier on a quantifier"),
    (r"a{2}{3}", "a quantifier on a quantifier"),
    (r"a{1001}", "allows counts up to 1,000"),
    (r"\p{Alphabetic}", "short names (L, Lu, Nd), scripts by name (Greek) and Any"),
    (r"\p{Letter}", "general categories by their short names"),
    (r"\p{sc=Greek}", "general categories by their short names"),
]


@pytest.mark.parametrize(("pattern", "reason"), LACKED_BY_RUST + LACKED_BY_RE2)
def test_a_pattern_using_what_the_dialect_or_engine_lacks_is_refused(pattern, reason):
    with pytest.raises(ValueError, match="invalid regex") as refused:
        compile_pattern(pattern)
    assert reason in str(refused.value)


@pytest.mark.parametrize(("pattern", "text"), [(r"\bcafé\b", "café!"), (r"^[^\W]$", "é")])
def test_the_remaining_differences_are_as_documented(pattern, text):
    # \b is an ASCII word boundary, and \W inside a bracket class is ASCII, in RE2;
    # the Rust crate matches both. The module docstring and the README list them.
    assert not matches(pattern, text)


def test_the_unicode_classes_equal_rusts_definitions_on_every_assigned_character():
    # Rust: \w = Alphabetic + M + Nd + Pc + Join_Control, \s = White_Space, \d = Nd
    # (the regex crate's documentation); the `regex` package knows these properties.
    regex = pytest.importorskip("regex")
    assigned = "".join(
        chr(c)
        for c in range(0x110000)
        if not 0xD800 <= c <= 0xDFFF and unicodedata.category(chr(c)) != "Cn"
    )
    for items, rust in (
        (WORD, r"[\p{Alphabetic}\p{M}\p{Nd}\p{Pc}\p{Join_Control}]"),
        (WHITE_SPACE, r"\p{White_Space}"),
    ):
        inside = "".join(regex.findall(rust, assigned))
        outside = regex.sub(rust, "", assigned)
        assert compile_pattern(f"^[{items}]+$").is_match(inside)  # every one of Rust's
        assert not compile_pattern(f"[{items}]").is_match(outside)  # and no other


def test_text_that_is_not_utf8_is_read_as_rust_reads_it_lossily():
    assert matches("a.b", "a\udcffb") is False  # three bytes, three U+FFFD
    assert matches("a...b", "a\udcffb")
    assert matches("^a", "a\udcff")


def test_matching_takes_time_linear_in_the_text():
    # A catastrophic-backtracking pattern for Python's re: (a+)+$ on a's and a b. RE2
    # answers at once; Python's re would take about 2**40 steps here.
    assert not matches(r"(a+)+$", "a" * 40 + "b")
