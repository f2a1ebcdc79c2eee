"""Spec 002 layer 2: the nine generic gates, run after the agent finishes.

Gates run in declaration order and never short-circuit, so the whole picture is
always there. Command gates run in the scenario's sandbox (the workspace the agent
used, with the scenario's env), each command prefixed with a ``cd`` to the workspace
(bashkit keeps the agent's last ``cd``) and bounded by the sandbox's per-command
timeout. Relative file paths are relative to the workspace.

==========================  ====================================================
gate                        passes when
==========================  ====================================================
``command_succeeds``        the command exits 0
``command_output_contains`` its stdout contains ``substring`` (exit code ignored)
``command_output_matches``  ``pattern`` matches somewhere in stdout (no flags:
                            use ``(?m)`` for ``^``/``$`` at every line)
``command_json_path``       stdout parses as JSON and ``assertion`` holds for the
                            value at ``path`` (a non-singular path: the list of
                            its matches)
``file_exists``             the path exists (a directory counts)
``file_contains``           the file's text contains ``substring``
``file_matches``            ``pattern`` matches somewhere in the file's text
``no_transcript_errors``    no target-tool command of the attempt exited non-zero
                            (commands found with the command pattern by
                            :func:`evalnb._scoring.commands.target_commands`)
``script``                  exit 0, unless stdout is a JSON object with a boolean
                            ``passed`` (and optional ``message``), which decides;
                            a timed-out script fails
==========================  ====================================================

Patterns are in the Rust ``regex`` dialect llm-tool-test uses, matched in linear time
(:mod:`evalnb.records.rust_regex`): ``$`` is the end of the text unless ``(?m)``.

``command_json_path`` reads stdout as llm-tool-test (a Rust program) does, with serde_json's
number types: an integer literal is an integer (``u64`` from 0 up, ``i64`` below 0; a
larger one, and ``-0``, a float) and any literal with a fraction or an exponent is a
float, so ``1`` and ``1.0`` are different values; ``NaN``, ``Infinity`` and a number
too large for a float are not JSON. The value at ``path``: a *singular* path (only the
root ``$``, single names ``.a`` / ``['a']`` and single indexes ``[0]``, decided from the
parsed path) yields its one match; any other path (a wildcard ``*``, slice, filter
``[?(...)]``, union ``['a','b']`` or ``[0,1]``, recursive descent ``..``, or one of
jsonpath-ng's extensions) yields the list of its matches, even of one or none.
Assertions: ``exists`` (a singular path matches a non-null value; a non-singular one
matches at least one value), ``equals <v>`` (``<v>`` read as JSON the same way when it
parses, else a string; serde_json's ``Value`` equality: integers never equal floats,
``1`` is not ``true``, ``3`` is not ``"3"``, objects equal regardless of key order),
``contains <s>`` (the value is a string containing ``<s>``), ``len >= N``,
``len == N``, ``len > N`` (the value is an array or object). Malformed JSON or a
singular path that matches nothing fails with a message saying so.

Example:
    >>> import asyncio
    >>> from evalnb._runtime.sandbox.local import LocalSandbox
    >>> from evalnb.records import AgentTrace
    >>> from evalnb.records.scenario import FileExists, CommandJsonPath
    >>> box = LocalSandbox({"a.json": '[1, 2, 3]'})
    >>> gates = [FileExists(type="file_exists", path="b.txt"),
    ...          CommandJsonPath(type="command_json_path", command="cat a.json", path="$",
    ...                          assertion="len >= 3")]
    >>> results = asyncio.run(run_gates(gates, box, AgentTrace(), workdir=box.workdir,
    ...                                 command_pattern="x"))
    >>> [(r.gate_type, r.passed, r.message) for r in results]
    [('file_exists', False, 'b.txt not found'), ('command_json_path', True, 'len 3 >= 3')]
    >>> box.close()
"""

from __future__ import annotations

import json
import math
import posixpath
import shlex
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, assert_never

from jsonpath_ng import Child, Fields, Index, JSONPath, Root, This

from evalnb._scoring.commands import executed_commands
from evalnb._scoring.deadline import Deadline, ScoringTimeout
from evalnb.records import AgentTrace, ScoreResult, ToolCallResult
from evalnb.records.base import Record
from evalnb.records.interfaces import Sandbox
from evalnb.records.rust_regex import compile_pattern
from evalnb.records.scenario import (
    ASSERTION,
    CommandJsonPath,
    CommandOutputContains,
    CommandOutputMatches,
    CommandSucceeds,
    FileContains,
    FileExists,
    FileMatches,
    Gate,
    NoTranscriptErrors,
    Script,
    parse_json_path,
)

_SHOWN = 200


class GateResult(Record):
    """Spec 002 ``GateResult``: the gate's type, its verdict and why."""

    gate_type: str
    passed: bool
    message: str


@dataclass(frozen=True)
class Observation:
    """What a gate looked at in the sandbox: its command's result, or its file's type
    (``file_exists``) or text (``file_contains``, ``file_matches``)."""

    result: ToolCallResult | None = None
    file_type: str | None = None
    text: str | None = None


async def run_gates(
    gates: Sequence[Gate],
    sandbox: Sandbox,
    trace: AgentTrace,
    *,
    workdir: str,
    command_pattern: str,
    deadline: Deadline | None = None,
) -> list[GateResult]:
    """Evaluate every gate in order (no short-circuit); see the module docstring.

    Within ``deadline`` (:mod:`evalnb._scoring.deadline`; None: no limit): each gate's
    command is awaited within it, its verdict is given in place, and past it a gate
    fails with the message ``timed out: ...``.
    """
    bound = deadline or Deadline(None)
    results = []
    for gate in gates:
        try:
            seen = await bound.run(observe_gate(gate, sandbox, workdir))
            verdict = gate_verdict(gate, seen, trace, command_pattern)
        except ScoringTimeout as exc:
            verdict = GateResult(gate_type=gate.type, passed=False, message=bound.stop(exc))
        results.append(verdict)
    return results


async def evaluate_gate(
    gate: Gate, sandbox: Sandbox, trace: AgentTrace, *, workdir: str, command_pattern: str
) -> GateResult:
    """Evaluate one gate against the finished attempt's sandbox and trace.

    Example:
        >>> import asyncio
        >>> from evalnb._runtime.sandbox.local import LocalSandbox
        >>> from evalnb.records.scenario import CommandSucceeds
        >>> box = LocalSandbox()
        >>> gate = CommandSucceeds(type="command_succeeds", command="ls missing")
        >>> r = asyncio.run(evaluate_gate(gate, box, AgentTrace(), workdir=box.workdir,
        ...                               command_pattern="x"))
        >>> r.passed, r.message.split(":")[0]
        (False, 'exit 2')
        >>> box.close()
    """
    seen = await observe_gate(gate, sandbox, workdir)
    return gate_verdict(gate, seen, trace, command_pattern)


async def observe_gate(gate: Gate, sandbox: Sandbox, workdir: str) -> Observation:
    """Run the gate's command in the workspace, or read its file (relative to it).

    Example:
        >>> import asyncio
        >>> from evalnb._runtime.sandbox.bashkit import BashkitSandbox
        >>> from evalnb.records.scenario import CommandSucceeds
        >>> gate = CommandSucceeds(type="command_succeeds", command="echo hi")
        >>> asyncio.run(observe_gate(gate, BashkitSandbox(), "/home/eval")).result.stdout
        'hi\\n'
    """
    match gate:
        case NoTranscriptErrors():
            return Observation()
        case FileExists():
            return Observation(file_type=sandbox.file_type(posixpath.join(workdir, gate.path)))
        case FileContains() | FileMatches():
            return Observation(text=sandbox.read_text(posixpath.join(workdir, gate.path)))
        case (
            CommandSucceeds()
            | CommandOutputContains()
            | CommandOutputMatches()
            | CommandJsonPath()
            | Script()
        ):
            command = f"cd {shlex.quote(workdir)} || exit 1\n{gate.command}"
            return Observation(result=await sandbox.exec(command))
        case _:
            assert_never(gate)


def gate_verdict(
    gate: Gate, seen: Observation, trace: AgentTrace, command_pattern: str
) -> GateResult:
    """The gate's verdict on what :func:`observe_gate` saw (``trace``: the attempt's tool
    calls, for ``no_transcript_errors``).

    Example:
        >>> from evalnb.records.scenario import FileContains
        >>> gate = FileContains(type="file_contains", path="a.txt", substring="x")
        >>> gate_verdict(gate, Observation(text="y"), AgentTrace(), "x").message
        "'x' not in a.txt"
    """
    match gate:
        case NoTranscriptErrors():
            return no_transcript_errors(trace, command_pattern)
        case FileExists():
            ftype = seen.file_type
            return GateResult(
                gate_type=gate.type,
                passed=ftype is not None,
                message=f"{gate.path} exists ({ftype})" if ftype else f"{gate.path} not found",
            )
        case FileContains() | FileMatches():
            return _text_verdict(gate, seen.text)
        case (
            CommandSucceeds()
            | CommandOutputContains()
            | CommandOutputMatches()
            | CommandJsonPath()
            | Script()
        ):
            assert seen.result is not None  # a command gate's observation is its command's result
            return _command_verdict(gate, seen.result)
        case _:
            assert_never(gate)


def _text_verdict(gate: FileContains | FileMatches, text: str | None) -> GateResult:
    """The verdict of a gate on the text of a workspace file (None: not a file)."""
    kind = gate.type
    if text is None:
        return GateResult(gate_type=kind, passed=False, message=f"{gate.path} is not a file")
    match gate:
        case FileContains():
            found = gate.substring in text
            message = "found" if found else f"{gate.substring!r} not in {gate.path}"
            return GateResult(gate_type=kind, passed=found, message=message)
        case FileMatches():
            matched = compile_pattern(gate.pattern).is_match(text)
            message = "matched" if matched else f"/{gate.pattern}/ does not match {gate.path}"
            return GateResult(gate_type=kind, passed=matched, message=message)
        case _:
            assert_never(gate)


def _command_verdict(
    gate: CommandSucceeds | CommandOutputContains | CommandOutputMatches | CommandJsonPath | Script,
    result: ToolCallResult,
) -> GateResult:
    """The verdict of a gate on the result of its command."""
    kind = gate.type
    match gate:
        case CommandSucceeds():
            ok = result.exit_code == 0
            message = "exit 0" if ok else _failure(result)
            return GateResult(gate_type=kind, passed=ok, message=message)
        case CommandOutputContains():
            found = gate.substring in result.stdout
            message = "found" if found else f"{gate.substring!r} not in stdout ({_status(result)})"
            return GateResult(gate_type=kind, passed=found, message=message)
        case CommandOutputMatches():
            matched = compile_pattern(gate.pattern).is_match(result.stdout)
            message = "matched" if matched else f"/{gate.pattern}/ not matched ({_status(result)})"
            return GateResult(gate_type=kind, passed=matched, message=message)
        case CommandJsonPath():
            passed, message = json_path_check(result.stdout, gate.path, gate.assertion)
            if not passed and result.exit_code != 0:
                message += f" ({_status(result)})"
            return GateResult(gate_type=kind, passed=passed, message=message)
        case Script():
            return _script_verdict(result)
        case _:
            assert_never(gate)


def json_path_check(stdout: str, path: str, assertion: str) -> tuple[bool, str]:
    """Parse ``stdout`` as JSON and apply a spec-002 assertion at ``path``.

    See the module docstring for the JSON reading, singular paths and the assertions.

    Example:
        >>> json_path_check('{"notes": [{"tag": "a"}]}', "$.notes[0].tag", "equals a")
        (True, "equals 'a'")
        >>> json_path_check('[{"a": 1, "b": 2, "c": 3}]', "$[*]", "len >= 2")
        (False, 'len 1, expected >= 2')
        >>> json_path_check('{"n": 1.0}', "$.n", "equals 1")
        (False, 'got 1.0, expected 1 (an integer never equals a float)')
        >>> json_path_check('not json', "$", "exists")[1]
        'stdout is not JSON (Expecting value at line 1 column 1): not json'
    """
    try:
        document = load_json(stdout)
    except json.JSONDecodeError as exc:
        where = f"{exc.msg} at line {exc.lineno} column {exc.colno}"
        return False, f"stdout is not JSON ({where}): {_clip(stdout)}"
    except ValueError as exc:  # a number serde_json refuses, an integer too long to convert
        return False, f"stdout is not JSON ({exc}): {_clip(stdout)}"
    expr = parse_json_path(path)
    matches = [m.value for m in expr.find(document)]
    singular = is_singular(expr)
    if singular and not matches:
        return False, f"path {path} not found"
    value = matches[0] if singular else matches
    spec = ASSERTION.match(assertion)
    assert spec is not None  # validated when the scenario was loaded
    if assertion == "exists":
        if not singular:
            return bool(matches), "exists" if matches else f"path {path} matched nothing"
        return value is not None, "exists" if value is not None else f"path {path} is null"
    if spec["value"] is not None:
        expected = _json_or_text(spec["value"])
        if json_equal(value, expected):
            return True, f"equals {expected!r}"
        kinds = {type(value), type(expected)}
        note = " (an integer never equals a float)" if kinds == {int, float} else ""
        return False, f"got {_clip(json.dumps(value))}, expected {expected!r}{note}"
    if spec["sub"] is not None:
        if not isinstance(value, str):
            return (
                False,
                f"value is {type(value).__name__}, not a string: {_clip(json.dumps(value))}",
            )
        found = spec["sub"] in value
        return found, "contains" if found else f"{spec['sub']!r} not in {_clip(value)!r}"
    if not isinstance(value, list | dict):
        return False, f"value is {_json_type(value)}, which has no length"
    size, op, n = len(value), spec["op"], int(spec["n"])
    passed = {">=": size >= n, "==": size == n, ">": size > n}[op]
    return passed, f"len {size} {op} {n}" if passed else f"len {size}, expected {op} {n}"


def is_singular(path: JSONPath) -> bool:
    """True when ``path`` selects at most one value: only the root, ``@``, single names
    and single indexes (RFC 9535's singular query), read from the parsed path.

    Example:
        >>> from evalnb.records.scenario import parse_json_path
        >>> [is_singular(parse_json_path(p)) for p in ("$.a[0]", "$.a[*].k", "$..k", "$[0,1]")]
        [True, False, False, False]
    """
    match path:
        case Root() | This():
            return True
        case Fields(fields=(name,)):
            return name != "*"  # jsonpath-ng reads a field named * as every field
        case Index(indices=(_,)):
            return True
        case Child(left=left, right=right):
            return is_singular(left) and is_singular(right)
    return False


def load_json(text: str) -> Any:
    """``text`` read as JSON with serde_json's number types (llm-tool-test's reader).

    An integer literal is an ``int`` when it fits serde_json's ``u64`` (0 up) or ``i64``
    (below 0), else a ``float``, and ``-0`` is the float ``-0.0``; a literal with a
    fraction or an exponent is a ``float``. ``NaN``, ``Infinity`` and a number beyond a
    float's range raise ValueError, as serde_json refuses them.

    Example:
        >>> load_json('[1, 1.0, -0, 18446744073709551616]')
        [1, 1.0, -0.0, 1.8446744073709552e+19]
    """
    return json.loads(
        text, parse_int=_serde_int, parse_float=_serde_float, parse_constant=_not_json
    )


def json_equal(a: Any, b: Any) -> bool:
    """serde_json's ``Value`` equality on values read by :func:`load_json`.

    Two numbers are equal only when both are integers or both floats (``1`` is not
    ``1.0``; ``0.0`` equals ``-0.0``); a boolean never equals a number; strings compare
    exactly; arrays element by element; objects by their keys and values, in any order.

    Example:
        >>> json_equal(load_json('{"a": [1, true]}'), load_json('{"a": [1, true]}'))
        True
        >>> json_equal(1, 1.0), json_equal(True, 1), json_equal(-0.0, 0.0)
        (False, False, True)
    """
    if type(a) is not type(b):
        return False
    if isinstance(a, list):
        return len(a) == len(b) and all(json_equal(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(json_equal(a[k], b[k]) for k in a)
    return bool(a == b)


_U64_MAX = 2**64 - 1
_I64_MIN = -(2**63)


def _serde_int(literal: str) -> int | float:
    value = int(literal)
    if literal.startswith("-") and value == 0:
        return -0.0
    return value if _I64_MIN <= value <= _U64_MAX else _serde_float(literal)


def _serde_float(literal: str) -> float:
    try:
        value = float(literal)
    except OverflowError:
        value = math.inf
    if math.isinf(value):
        raise ValueError(f"number out of range: {_clip(literal)}")
    return value


def _not_json(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON number")


def no_transcript_errors(trace: AgentTrace, command_pattern: str) -> GateResult:
    """Pass when no target-tool command in the trace exited non-zero.

    The commands and exit codes are :func:`evalnb._scoring.commands.executed_commands`:
    a recorded invocation's own exit code (a killed one, without an exit code, fails),
    else the command text's targets with their tool call's exit code, in which case
    the message says the exit codes are approximate when a call held several. No
    target command at all passes.

    Example:
        >>> t = AgentTrace(tool_calls=[ToolCallResult(commands="notes ad x", exit_code=2)])
        >>> no_transcript_errors(t, r"notes\\s+(\\S+)").message
        '1 of 1 target command(s) failed: `notes ad x` (exit 2)'
    """
    commands = executed_commands(trace.tool_calls, compile_pattern(command_pattern))
    failed = [e for e in commands if e.exit_code != 0]
    note = (
        " (exit codes approximate: a tool call's status charged to each of its commands)"
        if any(e.approximate for e in commands)
        else ""
    )
    if not failed:
        detail = f"{len(commands)} target command(s), none failed" if commands else "none ran"
        return GateResult(gate_type="no_transcript_errors", passed=True, message=detail + note)
    shown = ", ".join(
        f"`{e.command.command}` ({'killed' if e.exit_code is None else f'exit {e.exit_code}'})"
        for e in failed[:3]
    )
    more = f" and {len(failed) - 3} more" if len(failed) > 3 else ""
    return GateResult(
        gate_type="no_transcript_errors",
        passed=False,
        message=f"{len(failed)} of {len(commands)} target command(s) failed: {shown}{more}{note}",
    )


def gate_rows(gates: Sequence[Gate], results: Sequence[GateResult]) -> list[ScoreResult]:
    """The ``checks`` rows of the gates: layer ``gate``, kind = type, weight 1.

    Example:
        >>> from evalnb.records.scenario import FileExists
        >>> g = FileExists(type="file_exists", path="a.txt")
        >>> ok = GateResult(gate_type="file_exists", passed=True, message="ok")
        >>> gate_rows([g], [ok])[0].check
        'a.txt exists'
    """
    return [
        ScoreResult(
            check=g.describe(),
            passed=r.passed,
            detail=r.message,
            weight=1.0,
            layer="gate",
            kind=g.type,
        )
        for g, r in zip(gates, results, strict=True)
    ]


def _script_verdict(result: ToolCallResult) -> GateResult:
    if result.timed_out:
        return GateResult(
            gate_type="script", passed=False, message=f"timed out: {_failure(result)}"
        )
    try:
        verdict: Any = json.loads(result.stdout)
    except ValueError:
        verdict = None
    if isinstance(verdict, dict) and isinstance(verdict.get("passed"), bool):
        message = str(verdict.get("message") or ("passed" if verdict["passed"] else "failed"))
        return GateResult(gate_type="script", passed=verdict["passed"], message=message)
    ok = result.exit_code == 0
    return GateResult(gate_type="script", passed=ok, message="exit 0" if ok else _failure(result))


def _failure(result: ToolCallResult) -> str:
    err = result.stderr.strip() or result.stdout.strip()
    return f"exit {result.exit_code}: {_clip(err)}" if err else f"exit {result.exit_code}"


def _status(result: ToolCallResult) -> str:
    return f"exit {result.exit_code}" + (", stdout truncated" if result.stdout_truncated else "")


def _clip(text: str) -> str:
    text = " ".join(text.split()) or "(empty)"
    return text if len(text) <= _SHOWN else text[:_SHOWN] + "..."


def _json_or_text(raw: str) -> Any:
    try:
        return load_json(raw)
    except ValueError:
        return raw


def _json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    return "a string"
