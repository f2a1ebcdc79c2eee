"""Read llm-tool-test results: run artifact folders and the ``results.jsonl`` database.

llm-tool-test (spec 002's own harness) writes, per scenario attempt, an artifacts
folder with ``run.json`` (``scenario_id``, ``scenario_hash``, ``tool``, ``model``,
``timestamp``, ``duration_secs``, ``cost_estimate_usd``, ``token_usage``),
``events.jsonl`` (an ``execution`` event with the tool's whole ``output`` and
``exit_code``; ``post_script`` events), ``transcript.raw.txt``, and, next to it or in
the results folder, ``metrics.json`` (``gates_passed``, ``gates_total``, ``details[]``
of ``{gate_type, passed, message}``, ``efficiency``, ``composite_score``),
``evaluation.md`` and ``report.md``. It appends one ``ResultRecord`` per attempt to
``results.jsonl`` (the same metrics, ``outcome``, ``judge_score``, ``cost_usd``).

What this reader makes of them:

- An artifacts folder is one run with one task (``task_id`` = ``scenario_id``):
  ``run_id`` = ``<scenario_id>-<tool>-<model>-<timestamp>``, ``provider`` = the tool
  (the agent adapter), ``model`` as recorded, ``finished_at`` = ``timestamp`` and
  ``started_at`` = it minus ``duration_secs``.
- ``results.jsonl``: one run per (``tool``, ``model``), one task per record; repeated
  attempts of a scenario are epochs 1..n in file order. A record is one attempt,
  named by its ``id``: a line that repeats an earlier one byte for byte (the same
  ``id``, a record appended twice) is that attempt again, read once, with a warning
  naming both lines; two different records under one ``id`` are kept apart (each an
  epoch) with a warning.
- Gates become checks (layer ``gate``, ``check`` and ``kind`` = ``gate_type``,
  ``detail`` = ``message``) and spec 002's scenario result: ``gates_passed``,
  ``gates_total``, ``composite_score``, ``judge_score`` and ``outcome``.
- Judge score: llm-tool-test's judge returns a ``weighted_score`` in 0-1, stored as
  ``judge_score`` in ``metrics.json`` and ``results.jsonl``; evalnb keeps it as it is
  (its own judge score is 0-1 too). ``evaluation.md`` shows it only as
  ``round(score * 5)`` "**N** / 5"; a folder without ``metrics.json``'s score takes
  ``N / 5`` (so 4 / 5 becomes 0.8, exact to a fifth) and says so in the task's
  ``judge_score_source`` column (``metrics`` or ``evaluation.md (N / 5)``).
- ``outcome`` gives ``passed``: ``Pass``/``PASS`` passes, ``Fail...``
  fails (its text is the ``outcome_reason``), ``ERROR`` or anything else is an errored
  task. In a folder the outcome is read from ``evaluation.md`` or ``report.md``, else
  decided as llm-tool-test does (every gate passed).
- The ``efficiency`` block is kept as ``recorded_<name>`` task columns. Where the
  tool's output is present (``events.jsonl``'s ``execution`` event, else
  ``transcript.raw.txt``) it is also split into tool calls with llm-tool-test's own
  default command pattern (:data:`COMMAND_PATTERN`; exit codes approximate, as in the
  transcript fallback), so evalnb recomputes the interaction metrics itself. The
  counts defined alike in both (``total_commands``, ``error_count``,
  ``help_invocations``) are compared; a disagreement warns and sets the task's
  ``efficiency_agrees`` to False. (llm-tool-test's ``unique_commands`` counts distinct
  subcommands and its ``iteration_ratio`` is total/unique; evalnb's are distinct
  command texts and unique/total, spec 002: those are not compared.)
- ``natural_stop`` is null (unknown): no field says how the agent ended (the outcome
  is the gates' verdict).
- Tokens: ``token_usage`` totals (null stays null). The recorded cost
  (``run.json``'s ``cost_estimate_usd``, ``results.jsonl``'s ``cost_usd``; 0.0 for the
  mock adapter) is the task's ``recorded_cost_usd``: its cost, not re-priced.
- Not in the format: the prompt, LLM calls, per-call tokens and latency, messages.
- A ``run.json`` without llm-tool-test's keys is not read as one (it may be evalnb's);
  a malformed line of ``results.jsonl`` is an InputError naming ``file:line: field``.

Example:
    >>> from evalnb._formats.detect import Probe
    >>> FORMAT.recognises(Probe("/"))
    False
"""

from __future__ import annotations

import re
from collections import defaultdict
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from evalnb._formats.detect import Format, Probe
from evalnb._formats.json_file import read_json, validate
from evalnb._scoring.commands import transcript_calls
from evalnb.errors import (
    DataQualityWarning,
    InputError,
    from_validation_error,
    parse_json,
    read_input,
    warn,
)
from evalnb.records import (
    AgentTrace,
    RunMeta,
    RunSettings,
    ScenarioResult,
    ScoreResult,
    Task,
    TaskRecord,
    TaskScore,
    ToolCallResult,
)
from evalnb.records.rust_regex import compile_pattern

SOURCE = "llm-tool-test"
RUN = "run.json"
METRICS = "metrics.json"
EVENTS = "events.jsonl"
TRANSCRIPT = "transcript.raw.txt"
REPORT = "report.md"
OUTCOME_FILES = ("evaluation.md", REPORT)
COMMAND_PATTERN = r"^\s*[a-z][a-z0-9_.-]*\s+(--help|[a-z][a-z0-9_-]*)\b"
"""llm-tool-test's default command pattern (binary, then the subcommand as group 1), in
its Rust dialect (:func:`~evalnb.records.rust_regex.compile_pattern`)."""
UNAVAILABLE = ["prompt", "llm_calls", "per_call_tokens", "per_call_latency", "messages"]
COMPARED = ("total_commands", "error_count", "help_invocations")
_OUTCOME = re.compile(r"^- \*\*Outcome\*\*: (.+)$", re.M)
_JUDGE = re.compile(r"^\*\*([0-9.]+)\*\* / 5", re.M)
_GATES = re.compile(r"^- \*\*Gates Passed\*\*: (\d+)/(\d+)$", re.M)
_GATE = re.compile(r"^- ([✓✗]) ([^:\n]+): (.*)$", re.M)
_FIELD = re.compile(r"^- \*\*([A-Za-z ]+)\*\*: ([0-9.]+)%?$", re.M)
_REPORT_FIELDS = {
    "Total Commands": "total_commands",
    "Unique Commands": "unique_commands",
    "Error Count": "error_count",
    "First Try Success Rate": "first_try_success_rate",
    "Iteration Ratio": "iteration_ratio",
}


class _Open(BaseModel):
    model_config = ConfigDict(extra="ignore")


class TokenUsage(_Open):
    """``run.json`` ``token_usage``."""

    input: int
    output: int


class RunMetadata(_Open):
    """An artifacts folder's ``run.json``."""

    scenario_id: str
    scenario_hash: str = ""
    tool: str
    model: str
    timestamp: str
    duration_secs: float = 0.0
    cost_estimate_usd: float | None = None
    token_usage: TokenUsage | None = None


class Gate(_Open):
    """``details[]``: one gate's verdict."""

    gate_type: str
    passed: bool
    message: str = ""


class Efficiency(_Open):
    """``efficiency``: llm-tool-test's interaction metrics."""

    total_commands: int = 0
    unique_commands: int = 0
    error_count: int = 0
    retry_count: int = 0
    help_invocations: int = 0
    first_try_success_rate: float = 0.0
    iteration_ratio: float = 0.0


class Metrics(_Open):
    """``metrics.json`` (and a record's ``metrics``)."""

    gates_passed: int
    gates_total: int
    details: list[Gate] = Field(default_factory=list)
    efficiency: Efficiency | None = None
    composite_score: float | None = None
    judge_score: float | None = Field(default=None, ge=0, le=1)


class ResultRecord(_Open):
    """One line of ``results.jsonl``."""

    id: str
    scenario_id: str
    tool: str
    model: str
    timestamp: str
    duration_secs: float = 0.0
    cost_usd: float | None = None
    metrics: Metrics
    judge_score: float | None = Field(default=None, ge=0, le=1)
    outcome: str


def _is_run_json(doc: Any) -> bool:
    return isinstance(doc, dict) and {"scenario_id", "tool", "model"} <= set(doc)


def _recognises(probe: Probe) -> bool:
    return probe.is_dir and _is_run_json(probe.child(RUN).doc)


def _recognises_db(probe: Probe) -> bool:
    first = probe.first_line
    return (
        not probe.is_dir
        and isinstance(first, dict)
        and {"id", "scenario_id", "metrics", "outcome"} <= set(first)
    )


def read_artifacts(path: str | Path) -> tuple[RunMeta, list[TaskRecord]]:
    """Read one artifacts folder as ``(RunMeta, [its one task record])``.

    Example:
        >>> read_artifacts("no-such-folder")
        Traceback (most recent call last):
        ...
        evalnb.errors.InputError: no-such-folder/run.json: file not found
    """
    path = Path(path)
    text, doc = read_json(path / RUN)
    run = validate(path / RUN, text, doc, RunMetadata)
    metrics = None
    if (path / METRICS).is_file():
        m_text, m_doc = read_json(path / METRICS)
        metrics = validate(path / METRICS, m_text, m_doc, Metrics)
    outcome, judge_fifths = _outcome_from_reports(path)
    if metrics is None and (path / REPORT).is_file():
        metrics = metrics_from_report(read_input(path / REPORT))
    if outcome is None and metrics is not None:
        outcome = "Pass" if metrics.gates_passed >= metrics.gates_total else "Fail"
    output = _tool_output(path)
    tokens = run.token_usage
    judge, judge_source = judge_score(metrics, judge_fifths)
    record = _record(
        run.scenario_id,
        1,
        metrics,
        outcome,
        judge,
        output,
        where=path,
        extra={
            "recorded_cost_usd": run.cost_estimate_usd,
            "scenario_hash": run.scenario_hash,
            "judge_score_source": judge_source,
        },
        duration_secs=run.duration_secs,
        tokens=(tokens.input, tokens.output) if tokens else None,
    )
    finished = _utc(path / RUN, run.timestamp)
    started = finished - timedelta(seconds=run.duration_secs)
    stamp = finished.strftime("%Y%m%dT%H%M%S")
    meta = RunMeta(
        run_id=f"{run.scenario_id}-{run.tool}-{run.model}-{stamp}".replace("/", "_"),
        provider=run.tool,
        model=run.model,
        source=SOURCE,
        started_at=started.strftime("%Y-%m-%dT%H:%M:%SZ"),
        finished_at=finished.strftime("%Y-%m-%dT%H:%M:%SZ"),
        status="complete",
        task_count=1,
        settings=_settings(
            [f.name for f in sorted(path.iterdir()) if f.is_file()], output is not None, metrics
        ),
    )
    return meta, [record]


def read_results_db(path: str | Path) -> list[tuple[RunMeta, list[TaskRecord]]]:
    """Read ``results.jsonl``: one ``(RunMeta, task records)`` per (tool, model).

    Example:
        >>> import tempfile, pathlib
        >>> p = pathlib.Path(tempfile.mkdtemp()) / "results.jsonl"
        >>> _ = p.write_text('{"id": "r1"}\\n')
        >>> read_results_db(p)  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        evalnb.errors.InputError: ...results.jsonl:1: scenario_id: Field required
    """
    path = Path(path)
    groups: dict[tuple[str, str], list[tuple[int, ResultRecord]]] = defaultdict(list)
    lines: dict[str, tuple[int, str]] = {}  # a record's id: its first line and text
    for lineno, line in enumerate(read_input(path).splitlines(), start=1):
        if not line.strip():
            continue
        doc = parse_json(line, path, lineno)
        record_id = doc.get("id") if isinstance(doc, dict) else None
        if isinstance(record_id, str) and record_id in lines:
            first, text = lines[record_id]
            same = text == line.strip()
            warn(
                f"{path}:{lineno}: result {record_id!r} "
                + (
                    f"repeats line {first} byte for byte: read once"
                    if same
                    else f"is also line {first}, with other figures: both kept, as epochs"
                ),
                DataQualityWarning,
            )
            if same:
                continue
        elif isinstance(record_id, str):
            lines[record_id] = (lineno, line.strip())
        try:
            rec = ResultRecord.model_validate(doc)
        except ValidationError as exc:
            raise from_validation_error(path, lineno, exc) from None
        groups[(rec.tool, rec.model)].append((lineno, rec))
    if not groups:
        raise InputError(path, None, None, "no result records (empty results.jsonl)")
    runs = []
    for (tool, model), rows in groups.items():
        attempts: dict[str, int] = defaultdict(int)
        records = []
        for lineno, rec in rows:
            attempts[rec.scenario_id] += 1
            records.append(
                _record(
                    rec.scenario_id,
                    attempts[rec.scenario_id],
                    rec.metrics,
                    rec.outcome,
                    rec.judge_score,
                    None,
                    where=f"{path}:{lineno}",
                    extra={"recorded_cost_usd": rec.cost_usd, "result_id": rec.id},
                    duration_secs=rec.duration_secs,
                    tokens=None,
                )
            )
        times = sorted(_utc(path, rec.timestamp) for _, rec in rows)
        fmt = "%Y-%m-%dT%H:%M:%SZ"
        meta = RunMeta(
            run_id=f"{path.stem}-{tool}-{model}".replace("/", "_"),
            provider=tool,
            model=model,
            source=SOURCE,
            epochs=max(attempts.values()),
            started_at=times[0].strftime(fmt),
            finished_at=times[-1].strftime(fmt),
            status="complete",
            task_count=len(records),
            settings=_settings([path.name], False, rows[0][1].metrics),
        )
        runs.append((meta, records))
    return runs


def _settings(files: list[str], has_output: bool, metrics: Metrics | None) -> RunSettings:
    unavailable = list(UNAVAILABLE)
    if not has_output:
        unavailable.append("tool_calls")
    if metrics is None:
        unavailable.append("gates")
    return RunSettings(
        source_files=files,
        unavailable=unavailable,
        command_pattern=COMMAND_PATTERN if has_output else None,
        exit_codes="approximate" if has_output else None,
    )


def _utc(path: Path, timestamp: str) -> datetime:
    # llm-tool-test writes nanoseconds; Python reads at most microseconds.
    trimmed = re.sub(r"(\.\d{6})\d+", r"\1", timestamp.replace("Z", "+00:00"))
    try:
        moment = datetime.fromisoformat(trimmed)
    except ValueError:
        raise InputError(path, None, "timestamp", f"not an ISO 8601 time: {timestamp!r}") from None
    return moment.astimezone(UTC) if moment.tzinfo else moment.replace(tzinfo=UTC)


def _outcome_from_reports(path: Path) -> tuple[str | None, float | None]:
    outcome = judge = None
    for name in OUTCOME_FILES:
        if not (path / name).is_file():
            continue
        text = read_input(path / name)
        found = _OUTCOME.search(text)
        outcome = outcome or (found.group(1).strip() if found else None)
        score = _JUDGE.search(text)
        if judge is None and score:
            judge = float(score.group(1))
            if judge > 5:
                line = text.count("\n", 0, score.start()) + 1
                raise InputError(path / name, line, "Judge Score", f"{judge} is not in 0..5")
    return outcome, judge


def judge_score(metrics: Metrics | None, fifths: float | None) -> tuple[float | None, str | None]:
    """The 0-1 judge score of a folder and where it came from (see the module docstring).

    ``metrics.json``'s ``judge_score`` (0-1, as the judge returned it) wins; else
    ``evaluation.md``'s "**N** / 5" becomes ``N / 5``.

    Example:
        >>> judge_score(None, 4.0)
        (0.8, 'evaluation.md (N / 5)')
        >>> judge_score(Metrics(gates_passed=1, gates_total=1, judge_score=0.73), 4.0)
        (0.73, 'metrics')
        >>> judge_score(None, None)
        (None, None)
    """
    if metrics is not None and metrics.judge_score is not None:
        return metrics.judge_score, "metrics"
    if fifths is None:
        return None, None
    return fifths / 5, "evaluation.md (N / 5)"


def metrics_from_report(text: str) -> Metrics | None:
    """The gates and efficiency of a ``report.md`` (for folders without ``metrics.json``).

    The report rounds its figures (a rate to 0.1 %, a ratio to 0.01) and has no
    ``retry_count`` or ``help_invocations``; None when it has no ``Gates Passed`` line.

    Example:
        >>> m = metrics_from_report("- **Gates Passed**: 1/2\\n- ✓ MinNotes: found 2\\n"
        ...                         "- ✗ SearchHit: no hit\\n- **Total Commands**: 4\\n")
        >>> m.gates_passed, [g.passed for g in m.details], m.efficiency.total_commands
        (1, [True, False], 4)
    """
    gates = _GATES.search(text)
    if gates is None:
        return None
    fields = {_REPORT_FIELDS[k]: float(v) for k, v in _FIELD.findall(text) if k in _REPORT_FIELDS}
    if "first_try_success_rate" in fields:
        fields["first_try_success_rate"] /= 100
    composite = re.search(r"^- \*\*Composite Score\*\*: ([0-9.]+)$", text, re.M)
    return Metrics(
        gates_passed=int(gates.group(1)),
        gates_total=int(gates.group(2)),
        details=[
            Gate(gate_type=t.strip(), passed=m == "✓", message=msg)
            for m, t, msg in _GATE.findall(text)
        ],
        efficiency=Efficiency.model_validate(
            {k: int(v) if k.endswith(("commands", "count")) else v for k, v in fields.items()}
        )
        if fields
        else None,
        composite_score=float(composite.group(1)) if composite else None,
    )


def _tool_output(path: Path) -> str | None:
    if (path / EVENTS).is_file():
        for lineno, line in enumerate(read_input(path / EVENTS).splitlines(), start=1):
            if not line.strip():
                continue
            event = parse_json(line, path / EVENTS, lineno)
            if isinstance(event, dict) and event.get("type") == "execution":
                output = event.get("output")
                if not isinstance(output, str):
                    raise InputError(path / EVENTS, lineno, "output", "not a string")
                return output
    if (path / TRANSCRIPT).is_file():
        return read_input(path / TRANSCRIPT)
    return None


def _record(
    scenario_id: str,
    epoch: int,
    metrics: Metrics | None,
    outcome: str | None,
    judge_score: float | None,
    output: str | None,
    where: str | Path,
    extra: dict[str, Any],
    duration_secs: float,
    tokens: tuple[int, int] | None,
) -> TaskRecord:
    gates = metrics.details if metrics else []
    checks = [
        ScoreResult(
            check=g.gate_type, passed=g.passed, detail=g.message, layer="gate", kind=g.gate_type
        )
        for g in gates
    ]
    verdict = (outcome or "").strip()
    error = None
    scenario = None
    if verdict.lower().startswith(("pass", "fail")) and metrics is not None:
        passed = verdict.lower().startswith("pass")
        scenario = ScenarioResult(
            outcome="pass" if passed else "fail",
            outcome_reason=None if passed else verdict,
            gates_passed=metrics.gates_passed,
            gates_total=metrics.gates_total,
            judge_score=judge_score,
            composite_score=metrics.composite_score,
        )
    else:
        error = f"outcome {verdict!r}" if verdict else "no outcome recorded"
    calls = _calls(output) if output is not None else []
    efficiency = metrics.efficiency if metrics else None
    recorded_cols = {
        f"recorded_{k}": v for k, v in (efficiency.model_dump() if efficiency else {}).items()
    }
    if efficiency is not None and output is not None:
        recount = _recount(calls)
        differ = [k for k in COMPARED if recount[k] != getattr(efficiency, k)]
        recorded_cols["efficiency_agrees"] = not differ
        if differ:
            detail = ", ".join(f"{k} {getattr(efficiency, k)} vs {recount[k]}" for k in differ)
            warn(
                f"{where}: {scenario_id}: llm-tool-test's efficiency block disagrees with "
                f"evalnb's recount of the tool output ({detail})",
                DataQualityWarning,
            )
    recorded: dict[str, Any] = {}
    if tokens is None:
        recorded = {"total_input_tokens": None, "total_output_tokens": None}
    return TaskRecord(
        task=Task(id=scenario_id, category=SOURCE, prompt=scenario_id),
        epoch=epoch,
        trace=AgentTrace(
            tool_calls=calls,
            natural_stop=None,
            total_input_tokens=tokens[0] if tokens else 0,
            total_output_tokens=tokens[1] if tokens else 0,
            duration_ms=duration_secs * 1000,
        ),
        score=TaskScore.from_results(scenario_id, checks),
        error=error,
        scenario=scenario,
        extra={**extra, **recorded_cols, **({"recorded": recorded} if recorded else {})},
    )


def _calls(output: str) -> list[ToolCallResult]:
    _, found = transcript_calls(output, compile_pattern(COMMAND_PATTERN))
    return [
        ToolCallResult(
            commands=c.commands,
            stdout="\n".join(c.output),
            exit_code=c.exit_code,
            call_index=i,
        )
        for i, c in enumerate(found)
    ]


def _recount(calls: list[ToolCallResult]) -> dict[str, int]:
    """llm-tool-test's counts of the calls (a ``--help`` subcommand is in the call's text)."""
    return {
        "total_commands": len(calls),
        "error_count": sum(1 for c in calls if c.exit_code != 0),
        "help_invocations": sum(1 for c in calls if "--help" in c.commands),
    }


def _read_folder(path: Path) -> list[tuple[RunMeta, list[TaskRecord]]]:
    return [read_artifacts(path)]


FORMAT = Format(
    "an llm-tool-test run artifacts folder", _recognises, read=_read_folder, key="llm-tool-test"
)
DB_FORMAT = Format(
    "an llm-tool-test results.jsonl", _recognises_db, read=read_results_db, key="llm-tool-test-db"
)
SCENARIO_FORMAT = Format(
    "an llm-tool-test scenario YAML",
    lambda probe: probe.path.suffix in (".yaml", ".yml") and b"\ntask:" in b"\n" + probe.head,
    advice="a scenario, not results: run it with `evalnb run <scenario.yaml> --model ...`",
)
FORMATS = (FORMAT, DB_FORMAT, SCENARIO_FORMAT)
