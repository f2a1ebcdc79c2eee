"""Spec 002's nine gates: exact pass/fail semantics, messages, order and no short-circuit."""

from __future__ import annotations

import asyncio
import json
import multiprocessing

import pytest
from pydantic import TypeAdapter, ValidationError

from evalnb._runtime.sandbox import BashkitSandbox
from evalnb._runtime.sandbox.local import LocalSandbox
from evalnb._scoring.gates import GateResult, gate_rows, json_path_check, run_gates
from evalnb.records import AgentTrace, ToolCallResult
from evalnb.records.scenario import Gate

PATTERN = r"\bnotes\s+(\S+)"
GATE = TypeAdapter(Gate)
NOTES = [{"title": "standup", "tags": ["work"]}, {"title": "lunch", "tags": []}]


@pytest.fixture
def box():
    sandbox = LocalSandbox(
        {
            "notes.json": json.dumps(NOTES),
            "report.md": "# Report\nstandup at 9\n",
            "sub/dir/keep": "",
        },
        timeout_s=1,
    )
    yield sandbox
    sandbox.close()


def check(box, gate: dict, trace: AgentTrace | None = None) -> GateResult:
    [result] = asyncio.run(
        run_gates(
            [GATE.validate_python(gate)],
            box,
            trace or AgentTrace(),
            workdir=box.workdir,
            command_pattern=PATTERN,
        )
    )
    return result


@pytest.mark.parametrize(
    ("gate", "passed", "message"),
    [
        ({"type": "command_succeeds", "command": "test -f notes.json"}, True, "exit 0"),
        (
            {"type": "command_succeeds", "command": "echo oops >&2; exit 3"},
            False,
            "exit 3: oops",
        ),
        (
            {"type": "command_output_contains", "command": "cat report.md", "substring": "at 9"},
            True,
            "found",
        ),
        (  # stdout only: stderr does not count, and the exit code is reported
            {
                "type": "command_output_contains",
                "command": "echo standup >&2; false",
                "substring": "standup",
            },
            False,
            "'standup' not in stdout (exit 1)",
        ),
        (
            {"type": "command_output_matches", "command": "cat report.md", "pattern": "^standup"},
            False,  # no flags: ^ is the start of the output only
            "/^standup/ not matched (exit 0)",
        ),
        (
            {
                "type": "command_output_matches",
                "command": "cat report.md",
                "pattern": r"(?m)^standup at \d",
            },
            True,
            "matched",
        ),
        ({"type": "file_exists", "path": "sub/dir"}, True, "sub/dir exists (directory)"),
        ({"type": "file_exists", "path": "nope.txt"}, False, "nope.txt not found"),
        ({"type": "file_contains", "path": "report.md", "substring": "standup"}, True, "found"),
        (
            {"type": "file_contains", "path": "report.md", "substring": "lunch"},
            False,
            "'lunch' not in report.md",
        ),
        ({"type": "file_contains", "path": "sub", "substring": "x"}, False, "sub is not a file"),
        ({"type": "file_matches", "path": "report.md", "pattern": "^# "}, True, "matched"),
        (
            {"type": "file_matches", "path": "report.md", "pattern": "^standup"},
            False,  # ^ is the start of the file without (?m)
            "/^standup/ does not match report.md",
        ),
    ],
)
def test_command_and_file_gates(box, gate, passed, message):
    result = check(box, gate)
    assert (result.gate_type, result.passed, result.message) == (gate["type"], passed, message)


# Assertions applied to NOTES (a list of two objects), checked by hand against the spec.
@pytest.mark.parametrize(
    ("path", "assertion", "passed", "message"),
    [
        ("$", "len >= 2", True, "len 2 >= 2"),
        ("$", "len > 2", False, "len 2, expected > 2"),
        ("$", "len == 2", True, "len 2 == 2"),
        ("$[0]", "len == 2", True, "len 2 == 2"),  # an object: its number of keys
        ("$[0].title", "len >= 1", False, "value is a string, which has no length"),
        ("$[0].title", "equals standup", True, "equals 'standup'"),
        ("$[0].title", 'equals "standup"', True, "equals 'standup'"),
        ("$[0].title", "contains stand", True, "contains"),
        ("$[0].title", "contains lunch", False, "'lunch' not in 'standup'"),
        ("$[0].tags", "contains work", False, 'value is list, not a string: ["work"]'),
        ("$[0].tags", 'equals ["work"]', True, "equals ['work']"),
        ("$[1].tags", "exists", True, "exists"),  # an empty list is a value
        ("$[2]", "exists", False, "path $[2] not found"),
        ("$[*].title", 'equals ["standup", "lunch"]', True, "equals ['standup', 'lunch']"),
    ],
)
def test_json_path_assertions(path, assertion, passed, message):
    assert json_path_check(json.dumps(NOTES), path, assertion) == (passed, message)


@pytest.mark.parametrize(
    ("document", "assertion", "passed"),
    [
        ('{"n": 3}', "equals 3", True),
        ('{"n": 3}', "equals 3.0", False),  # serde_json: an integer is not a float
        ('{"n": 3.0}', "equals 3", False),
        ('{"n": 3.0}', "equals 3.0", True),
        ('{"n": 3.0}', "equals 30e-1", True),  # the same float, written otherwise
        ('{"n": -0}', "equals 0", False),  # serde_json reads -0 as the float -0.0
        ('{"n": -0}', "equals 0.0", True),  # which equals 0.0
        ('{"n": 18446744073709551615}', "equals 18446744073709551615", True),  # u64::MAX
        ('{"n": 18446744073709551615}', "equals 1.8446744073709552e19", False),  # int, float
        ('{"n": 18446744073709551616}', "equals 1.8446744073709552e19", True),  # past u64: float
        ('{"n": [1, 2.5]}', "equals [1, 2.5]", True),
        ('{"n": [1, 2.5]}', "equals [1.0, 2.5]", False),  # at any depth
        ('{"n": {"a": 1, "b": 2}}', 'equals {"b": 2, "a": 1}', True),  # key order is free
        ('{"n": "3"}', "equals 3", False),  # a string is not a number
        ('{"n": 1}', "equals true", False),  # nor is a number a boolean
        ('{"n": true}', "equals true", True),
        ('{"n": [1]}', "equals [true]", False),  # at any depth
        ('{"n": null}', "exists", False),
        ('{"n": "not json"}', "equals not json", True),  # unparsable value: a string
    ],
)
def test_equals_is_strict_json_equality(document, assertion, passed):
    assert json_path_check(document, "$.n", assertion)[0] is passed


@pytest.mark.parametrize(
    ("document", "reason"),
    [
        ('{"n": NaN}', "NaN is not a JSON number"),
        ('{"n": Infinity}', "Infinity is not a JSON number"),
        ('{"n": 1e400}', "number out of range: 1e400"),
        ('{"n": 1' + "0" * 400 + "}", "number out of range"),
    ],
)
def test_numbers_serde_json_refuses_are_not_json(document, reason):
    passed, message = json_path_check(document, "$.n", "exists")
    assert not passed
    assert message.startswith(f"stdout is not JSON ({reason}")


# Issue 25 item 2: a non-singular path (wildcard, slice, filter, union, recursive
# descent) yields the list of its matches even when it matches once or never.
@pytest.mark.parametrize(
    ("document", "path", "assertion", "passed", "message"),
    [
        # one element of three keys: the list has length 1, not 3
        ('[{"a":1,"b":2,"c":3}]', "$[*]", "len >= 2", False, "len 1, expected >= 2"),
        ('{"a": [{"k": 1}]}', "$.a[*].k", "len == 1", True, "len 1 == 1"),
        ('{"a": [{"k": 1}]}', "$.a[*].k", "equals [1]", True, "equals [1]"),
        (
            '{"a": [{"k": "x"}]}',
            "$.a[*].k",
            "contains x",
            False,
            'value is list, not a string: ["x"]',
        ),
        ('{"a": []}', "$.a[*]", "len == 0", True, "len 0 == 0"),
        ('{"a": []}', "$.a[*]", "exists", False, "path $.a[*] matched nothing"),
        ('{"a": [null]}', "$.a[*]", "exists", True, "exists"),
        ("[5, 6, 7]", "$[0:1]", "equals [5]", True, "equals [5]"),
        ("[5, 6, 7]", "$[0,2]", "equals [5, 7]", True, "equals [5, 7]"),
        ('{"a": 1, "b": 2}', "$['a','b']", "len == 2", True, "len 2 == 2"),
        ('{"x": {"k": 1}}', "$..k", "equals [1]", True, "equals [1]"),
        ('[{"t": 1}, {"t": 2}]', "$[?(@.t > 1)]", 'equals [{"t": 2}]', True, "equals [{'t': 2}]"),
        ('[{"t": 1}]', "$[?(@.t > 1)]", "len == 0", True, "len 0 == 0"),
        ('{"a": {"b": 3}}', "$.*", 'equals [{"b": 3}]', True, "equals [{'b': 3}]"),
        # singular paths yield the value itself
        ('{"a": [{"k": 1}]}', "$.a[0].k", "equals 1", True, "equals 1"),
        ('{"a": [{"k": 1}]}', "$['a'][0]", "len == 1", True, "len 1 == 1"),
        ('{"a": []}', "$.a[0]", "len == 0", False, "path $.a[0] not found"),
    ],
)
def test_a_non_singular_path_always_yields_the_list_of_its_matches(
    document, path, assertion, passed, message
):
    assert json_path_check(document, path, assertion) == (passed, message)


def test_command_json_path_reports_malformed_json_and_the_exit_code(box):
    result = check(
        box,
        {
            "type": "command_json_path",
            "command": "echo '{\"a\": 1,'; exit 4",
            "path": "$.a",
            "assertion": "exists",
        },
    )
    assert not result.passed
    assert result.message.startswith("stdout is not JSON (Expecting property name")
    assert result.message.endswith(': {"a": 1, (exit 4)')


def test_regex_gates_are_matched_in_place_without_a_scorer_process(box):
    # every user pattern is in the Rust dialect (RE2, linear time): nothing to kill
    trace = AgentTrace(tool_calls=[ToolCallResult(commands="notes add x", exit_code=0)])
    gates = [
        {"type": "command_output_matches", "command": "cat report.md", "pattern": "^# Report"},
        {"type": "file_matches", "path": "report.md", "pattern": "(?m)^standup"},
        {"type": "no_transcript_errors"},
    ]
    assert [check(box, g, trace).passed for g in gates] == [True, True, True]
    assert multiprocessing.active_children() == []


def test_no_transcript_errors_looks_only_at_target_commands():
    ok = AgentTrace(
        tool_calls=[
            ToolCallResult(commands="ls missing", exit_code=2),  # not the target tool
            ToolCallResult(commands="notes add x", exit_code=0),
        ]
    )
    bad = AgentTrace(
        tool_calls=[
            ToolCallResult(commands="notes ad x", exit_code=2),
            ToolCallResult(commands="notes add x && notes list", exit_code=0),
        ]
    )
    none = AgentTrace(tool_calls=[ToolCallResult(commands="ls", exit_code=1)])
    box = LocalSandbox()
    try:
        gate = {"type": "no_transcript_errors"}
        results = [check(box, gate, t) for t in (ok, bad, none)]
    finally:
        box.close()
    assert [(r.passed, r.message) for r in results] == [
        (True, "1 target command(s), none failed"),
        (
            False,
            "1 of 3 target command(s) failed: `notes ad x` (exit 2) (exit codes "
            "approximate: a tool call's status charged to each of its commands)",
        ),
        (True, "none ran"),
    ]


@pytest.mark.parametrize(
    ("command", "passed", "message"),
    [
        ("true", True, "exit 0"),
        ("echo bad input >&2; exit 1", False, "exit 1: bad input"),
        # stdout JSON overrides the exit code, both ways
        ("""echo '{"passed": false, "message": "2 of 3 notes"}'""", False, "2 of 3 notes"),
        ("""echo '{"passed": true, "message": "fine"}'; exit 5""", True, "fine"),
        ("""echo '{"passed": true}'""", True, "passed"),
        # JSON without a boolean `passed` does not decide: the exit code does
        ("""echo '{"passed": "yes"}'; exit 2""", False, 'exit 2: {"passed": "yes"}'),
    ],
)
def test_script_gate(box, command, passed, message):
    result = check(box, {"type": "script", "command": command, "description": "d"})
    assert (result.passed, result.message) == (passed, message)


def test_a_timed_out_script_fails_even_if_it_printed_a_passing_verdict(box):
    command = """echo '{"passed": true}'; sleep 5"""
    result = check(box, {"type": "script", "command": command, "description": "slow"})
    assert not result.passed
    assert result.message.startswith("timed out: exit 124")


def test_gates_run_in_order_without_short_circuit_and_become_check_rows(box):
    specs = [
        {"type": "file_exists", "path": "missing.txt"},
        {"type": "command_succeeds", "command": "touch made.txt"},
        {"type": "file_exists", "path": "made.txt"},  # sees the effect of the gate before it
    ]
    gates = [GATE.validate_python(g) for g in specs]
    results = asyncio.run(
        run_gates(gates, box, AgentTrace(), workdir=box.workdir, command_pattern=PATTERN)
    )
    assert [r.passed for r in results] == [False, True, True]
    rows = gate_rows(gates, results)
    assert [(r.layer, r.kind, r.weight, r.check) for r in rows] == [
        ("gate", "file_exists", 1.0, "missing.txt exists"),
        ("gate", "command_succeeds", 1.0, "`touch made.txt` exits 0"),
        ("gate", "file_exists", 1.0, "made.txt exists"),
    ]


def test_bashkit_gates_run_in_the_workspace_even_after_the_agent_changed_directory():
    box = BashkitSandbox(files={"/home/eval/work/a.txt": "x"}, cwd="/home/eval/work")
    asyncio.run(box.exec("cd /tmp"))  # bashkit keeps the cwd across calls
    gates = [
        GATE.validate_python({"type": "command_succeeds", "command": "test -f a.txt"}),
        GATE.validate_python({"type": "file_contains", "path": "a.txt", "substring": "x"}),
    ]
    results = asyncio.run(
        run_gates(gates, box, AgentTrace(), workdir="/home/eval/work", command_pattern=PATTERN)
    )
    assert [r.passed for r in results] == [True, True]


@pytest.mark.parametrize(
    ("gate", "error"),
    [
        ({"type": "command_output_matches", "command": "x", "pattern": "("}, "invalid regex"),
        ({"type": "file_matches", "path": "a", "pattern": "[a"}, "invalid regex"),
        (
            {"type": "command_json_path", "command": "x", "path": "$[", "assertion": "exists"},
            "invalid JSONPath",
        ),
        (
            {"type": "command_json_path", "command": "x", "path": "$", "assertion": "len < 3"},
            "unknown assertion",
        ),
        ({"type": "file_size", "path": "a"}, "does not match any of the expected tags"),
        ({"type": "file_exists", "path": "a", "extra": 1}, "Extra inputs are not permitted"),
        ({"type": "script", "command": "sh c.sh"}, "Field required"),
    ],
)
def test_bad_gates_are_rejected_at_load_time(gate, error):
    with pytest.raises(ValidationError, match=error):
        GATE.validate_python(gate)
