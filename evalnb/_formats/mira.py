"""Read bashkit "mira" run folders: ``meta.json``, ``report.json``, ``cases/*/result.json``.

A mira run (everruns/mira, as bashkit's eval writes it) crosses evals with targets
(``provider/model``); ``report.json`` holds ``summary`` and ``cases``, one per
(eval, sample, target[, params][, trial]), and ``cases/<key>/result.json`` holds the
same case alone. What this reader makes of it:

- One evalnb run per (``eval``, ``target``): ``run_id`` is
  ``<meta.run_id>-<eval>-<target>`` (``/`` made ``_``), ``provider`` and ``model`` are
  the target's two halves, ``dataset`` is the eval, started and finished times are
  ``meta.json``'s ``started_unix`` and ``finished_unix``.
- Cases come from ``report.json``; a folder without it (an interrupted run) is read
  from ``cases/*/result.json``. A ``report.json`` with no cases (``cases: []``) is an
  InputError naming it: there is nothing to read, and an empty load would look like
  a run that did nothing.
- ``skipped`` cases (a target without credentials) are left out and counted:
  ``RunMeta.settings.skipped`` and the ``skipped`` column of the ``runs`` table. A
  (eval, target) whose cases were all skipped is still a run, with no tasks.
- ``na`` cases (every score N/A: an infrastructure error, nothing evaluated) are
  errored tasks: ``error`` is the transcript's ``error`` or the first score's
  ``reason``; they count as failed. A transcript ``error`` errors the task too.
- Tasks: ``task_id`` is the sample (with ``[k=v,...]`` axis params when present);
  repeated trials are epochs 1..n in ``trial`` order; ``category`` is the eval.
  Turns and ``llm_call_count`` = ``iterations`` (one LLM call per iteration); tokens
  from ``usage``, and its ``cost_usd`` as the task's recorded cost
  (``recorded_cost_usd``, a recorded 0.0 included; prices fill in only when mira wrote
  none); ``duration_ms`` from ``timing``; ``natural_stop`` from
  ``metrics.natural_stop`` when recorded (else "no error").
- Tool calls: ``metadata.bashkit.tool_outputs`` (commands, stdout, stderr,
  exit_code). Without it only the count is known: no tool-call rows, and the task's
  ``tool_calls_recorded`` column keeps mira's ``tool_calls_count``.
- Checks: one per score, layer ``expectation``, ``check`` and ``kind`` = the scorer,
  ``detail`` = its reason, weight 1; N/A scores are left out. ``score`` is the sum of
  the scores' ``value``, ``max_score`` their count. The per-expectation verdicts are
  not in the format: a bashkit reason ``"7/9 checks passed (...)"`` gives the
  ``expectations_passed`` and ``expectations_total`` task columns.
- ``passed`` is evalnb's rule (no error and every check passed); a case whose own
  ``passed`` disagrees is reported with a warning.
- Cache tokens: mira's ``usage`` is summed over the case's turns and its
  ``cache_read_tokens`` is "a subset of ``input_tokens``" (mira's ``Usage``), so
  ``input_tokens`` is already the whole prompt evalnb's ``total_input_tokens`` means.
  ``cache_read_tokens`` becomes the task's ``cache_read_tokens`` column (null where the
  case does not carry it: mira omits zero), which prices it at the cached-input rate
  (:mod:`evalnb._analysis.cost`). Mira has no cache-write count: the task's
  ``cache_write_tokens`` column is null and listed in ``unavailable``.
- Not in the format (``RunMeta.settings.unavailable``): per-call tokens and latency,
  tool-call durations, the conversation messages, per-expectation verdicts, cache
  writes.

Example:
    >>> from evalnb._formats.detect import Probe
    >>> FORMAT.recognises(Probe("/"))
    False
"""

from __future__ import annotations

import re
from collections import defaultdict
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from evalnb._formats.detect import Format, Probe
from evalnb._formats.json_file import read_json, validate
from evalnb.errors import DataQualityWarning, InputError, PartialRunWarning, warn
from evalnb.records import (
    AgentTrace,
    RunMeta,
    RunSettings,
    ScoreResult,
    Task,
    TaskRecord,
    TaskScore,
    ToolCallResult,
)

META = "meta.json"
REPORT = "report.json"
CASES = "cases"
SOURCE = "bashkit-mira"
UNAVAILABLE = [
    "per_call_tokens",
    "per_call_latency",
    "tool_call_duration",
    "messages",
    "expectation_verdicts",
    "prompt",
    "cache_write_tokens",
]
NO_PROMPT = "(not recorded by mira)"
"""The ``prompt`` of every task: mira's results do not keep the sample's input."""
_REASON = re.compile(r"^(\d+)/(\d+) checks passed")


class _Open(BaseModel):
    """Mira's payloads are open on the wire: unknown fields are ignored."""

    model_config = ConfigDict(extra="ignore")


class MiraMeta(_Open):
    """``meta.json``: the run id and its start and end (unix seconds)."""

    run_id: str
    started_unix: float | None = None
    finished_unix: float | None = None


class MiraScore(_Open):
    """``scores[]``: one scorer's verdict; ``na`` when it could not evaluate."""

    scorer: str
    value: float = 0.0
    passed: bool = Field(alias="pass")
    reason: str = ""
    na: bool = False


class MiraUsage(_Open):
    """``transcript.usage``: tokens and cost summed over the case (cache reads within input)."""

    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_tokens: int | None = None
    cost_usd: float | None = None


class MiraTiming(_Open):
    """``transcript.timing``."""

    duration_ms: float = 0.0


class BashkitToolOutput(_Open):
    """``transcript.metadata.bashkit.tool_outputs[]``: one bash call."""

    commands: str
    exit_code: int
    stdout: str = ""
    stderr: str = ""


class MiraTranscript(_Open):
    """``transcript``: the normalised result of one case."""

    iterations: int = 0
    tool_calls_count: int = 0
    usage: MiraUsage = Field(default_factory=MiraUsage)
    timing: MiraTiming = Field(default_factory=MiraTiming)
    metrics: dict[str, float] = Field(default_factory=dict)
    metadata: dict[str, Any] = Field(default_factory=dict)
    error: str | None = None


class MiraCase(_Open):
    """``cases[]`` (and ``cases/*/result.json``): one (eval, sample, target) cell."""

    eval: str
    sample: str
    target: str
    params: dict[str, Any] = Field(default_factory=dict)
    trial: int | None = None
    passed: bool = False
    scores: list[MiraScore] = Field(default_factory=list)
    transcript: MiraTranscript = Field(default_factory=MiraTranscript)
    skipped: bool = False

    @property
    def na(self) -> bool:
        """Every score N/A (mira's ``is_na``): nothing could be evaluated."""
        return bool(self.scores) and all(s.na for s in self.scores)


class MiraReport(_Open):
    """``report.json``."""

    cases: list[MiraCase]


def is_mira_folder(path: str | Path) -> bool:
    """True when ``path`` is a folder with mira's ``meta.json`` and its cases.

    Example:
        >>> is_mira_folder("/")
        False
    """
    return FORMAT.recognises(Probe(path))


def _recognises(probe: Probe) -> bool:
    if not probe.is_dir:
        return False
    meta = probe.child(META).doc
    has_cases = (probe.path / REPORT).is_file() or (probe.path / CASES).is_dir()
    return isinstance(meta, dict) and "run_id" in meta and has_cases


def read_mira(path: str | Path) -> list[tuple[RunMeta, list[TaskRecord]]]:
    """Read one mira run folder: one ``(RunMeta, task records)`` per (eval, target).

    Example:
        >>> read_mira("no-such-folder")
        Traceback (most recent call last):
        ...
        evalnb.errors.InputError: no-such-folder/meta.json: file not found
    """
    path = Path(path)
    meta_text, meta_doc = read_json(path / META)
    meta = validate(path / META, meta_text, meta_doc, MiraMeta)
    cells: dict[tuple[str, str], list[tuple[Path, MiraCase]]] = defaultdict(list)
    for source, case in _cases(path):
        cells[(case.eval, case.target)].append((source, case))
    runs = []
    for (eval_name, target), cases in cells.items():
        kept = [(source, case) for source, case in cases if not case.skipped]
        records = _records(kept)
        runs.append(
            (_run_meta(path, meta, eval_name, target, records, len(cases) - len(kept)), records)
        )
    return runs


def _cases(path: Path) -> list[tuple[Path, MiraCase]]:
    report = path / REPORT
    if report.is_file():
        text, doc = read_json(report)
        cases = validate(report, text, doc, MiraReport).cases
        if not cases:
            raise InputError(report, None, "cases", "no cases: the run holds nothing to read")
        return [(report, case) for case in cases]
    files = sorted((path / CASES).glob("*/result.json"))
    if not files:
        raise InputError(
            path, None, None, f"mira run folder without {REPORT} or {CASES}/*/result.json"
        )
    out = []
    for file in files:
        text, doc = read_json(file)
        out.append((file, validate(file, text, doc, MiraCase)))
    return out


def _task_id(case: MiraCase) -> str:
    if not case.params:
        return case.sample
    return f"{case.sample}[{','.join(f'{k}={v}' for k, v in sorted(case.params.items()))}]"


def _records(cases: list[tuple[Path, MiraCase]]) -> list[TaskRecord]:
    trials: dict[str, list[int]] = defaultdict(list)
    for _, case in cases:
        trials[_task_id(case)].append(case.trial or 0)
    records = []
    for source, case in cases:
        task_id = _task_id(case)
        epoch = sorted(set(trials[task_id])).index(case.trial or 0) + 1
        record = _record(case, task_id, epoch)
        if not case.na and record.passed != case.passed:
            warn(
                f"{source}: case {case.eval}/{task_id}@{case.target}: mira says passed="
                f"{case.passed} but its scores say {record.passed}; evalnb uses the scores",
                DataQualityWarning,
            )
        records.append(record)
    return records


def _record(case: MiraCase, task_id: str, epoch: int) -> TaskRecord:
    tr = case.transcript
    outputs = (tr.metadata.get("bashkit") or {}).get("tool_outputs")
    tool_calls = [
        ToolCallResult(**BashkitToolOutput.model_validate(o).model_dump(), call_index=i)
        for i, o in enumerate(outputs or [])
    ]
    scored = [s for s in case.scores if not s.na]
    checks = [
        ScoreResult(
            check=s.scorer, passed=s.passed, detail=s.reason, layer="expectation", kind=s.scorer
        )
        for s in scored
    ]
    error = tr.error
    if case.na and error is None:
        error = case.scores[0].reason or "not evaluated (every score N/A)"
    natural = tr.metrics.get("natural_stop")
    extra: dict[str, Any] = {
        "recorded_cost_usd": tr.usage.cost_usd,
        # per-case totals, not per call: they replace the sums of the (absent) call rows
        "recorded": {
            "cache_read_tokens": tr.usage.cache_read_tokens,
            "cache_write_tokens": None,
            "llm_call_count": tr.iterations,  # one LLM call per iteration of the loop
        },
    }
    if outputs is None:
        extra["tool_calls_recorded"] = tr.tool_calls_count
    for s in scored:
        match = _REASON.match(s.reason)
        if match:
            extra["expectations_passed"] = int(match.group(1))
            extra["expectations_total"] = int(match.group(2))
    return TaskRecord(
        task=Task(id=task_id, category=case.eval, prompt=NO_PROMPT),
        epoch=epoch,
        trace=AgentTrace(
            tool_calls=tool_calls,
            turns=tr.iterations,
            natural_stop=bool(natural) if natural is not None else error is None,
            total_input_tokens=tr.usage.input_tokens,
            total_output_tokens=tr.usage.output_tokens,
            duration_ms=tr.timing.duration_ms,
        ),
        score=TaskScore(
            task_id=task_id,
            results=checks,
            score=sum(s.value for s in scored),
            max_score=float(len(scored)),
        ),
        error=error,
        extra=extra,
    )


def _utc(unix: float | None) -> str | None:
    if unix is None:
        return None
    return datetime.fromtimestamp(unix, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _run_meta(
    path: Path, meta: MiraMeta, eval_name: str, target: str, records: list[TaskRecord], skipped: int
) -> RunMeta:
    provider, _, model = target.partition("/")
    run_id = f"{meta.run_id}-{eval_name}-{target}".replace("/", "_")
    if skipped:
        warn(
            f"{path}: {eval_name}@{target}: {skipped} skipped case(s) left out "
            f"({len(records)} task(s) read)",
            PartialRunWarning,
        )
    return RunMeta(
        run_id=run_id,
        provider=provider if model else "",
        model=model or provider,
        source=SOURCE,
        dataset=eval_name,
        started_at=_utc(meta.started_unix),
        finished_at=_utc(meta.finished_unix),
        status="complete",
        task_count=len(records),
        settings=RunSettings(source_files=[path.name], unavailable=UNAVAILABLE, skipped=skipped),
    )


FORMAT = Format("a bashkit mira run folder", _recognises, read=read_mira, key="mira")
REPORT_FORMAT = Format(
    "a bashkit mira report.json",
    lambda probe: not probe.is_dir and {"cases", "summary"} <= probe.keys(),
    advice="load its run folder (with meta.json) instead",
)
"""A mira ``report.json`` given alone: named, and its folder suggested."""
FORMATS = (FORMAT, REPORT_FORMAT)
