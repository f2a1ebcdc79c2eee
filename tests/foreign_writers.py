"""Writers of the formats evalnb imports but does not write, for the differential tests.

Each renders one run of a generated world, read by the reference
(:class:`~tests.reference.folder.Run`: the records of its ``events.jsonl``, never
evalnb's tables), in another harness's format, the way that harness lays it out
(``docs/formats.md``, ``../shared/fixtures/FORMATS.md`` and the published files name the
fields), and writes only what the format can hold. Beside each writer, its *view*: the
same run as the reference sees it once written in that format, with every attempt or
field the format cannot hold dropped or unknown, so that the reference's recount of the
view is what evalnb must read back (:mod:`tests.agreement`).

- bashkit-eval result JSON (spec 000's own format): one file per epoch (a file holds one
  attempt per task), bash tasks only.
- onetool-mcp bench CSV and bashkit mira run folders: bash tasks only.
- llm-tool-test's ``results.jsonl`` (spec 002's own harness): one record per scenario
  attempt, one file per run.
- Claude Code ``stream-json``: one file per bash attempt, one folder per epoch.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.reference import attempt
from tests.reference.folder import Run

FINISHED = "2026-11-26T10:00:00Z"
"""The end time written where a format wants one (no figure reads it)."""


def bashkit_eval_view(run: Run, epoch: int) -> Run:
    """The attempts of ``epoch`` as a bashkit-eval result file holds them.

    The harness dropped an attempt whose provider call failed, so the file has no
    errored attempt; one file is one pass over the tasks (epoch 1 under the file's run
    id, :func:`bashkit_eval_name`); per call it has no token counts, cache parts or
    latency (a trace has only its token totals), per tool call no time-out flag.
    Stop reasons are gone too, but the attempt's ``natural_stop`` they decide is in the
    file, so the view keeps them for the reference to decide it (the llm_calls column
    ``stop_reason`` is lost: ``assert_agrees(..., lost=("stop_reason",))``)."""
    unknown = dict.fromkeys(["input_tokens", "output_tokens", "cache_read_tokens"])
    unknown |= dict.fromkeys(["cache_write_tokens", "latency_ms"])
    records = []
    for record in run.records:
        if record["epoch"] != epoch or record["error"] is not None:
            continue
        trace = record["trace"]
        trace = {
            **trace,
            "llm_calls": [{**c, **unknown} for c in trace["llm_calls"]],
            "tool_calls": [{**c, "timed_out": False} for c in trace["tool_calls"]],
        }
        records.append({**record, "epoch": 1, "trace": trace})
    return Run({**run.info, "run_id": bashkit_eval_name(run, epoch)}, records)


def bashkit_eval_name(run: Run, epoch: int) -> str:
    """The result file's name without ``.json`` (evalnb's run id of it)."""
    return f"{run.run_id}-e{epoch}"


def write_bashkit_eval(run: Run, folder: Path) -> list[Path]:
    """``run``'s bash tasks as bashkit-eval result files, one per epoch, in ``folder``:
    ``provider``, ``model``, ``timestamp``, ``max_turns``, ``results`` (``task``,
    ``trace``, ``score`` per attempt that did not error) and the ``summary``, whose
    ``total_tasks`` counts the errored attempts too (the harness's own count, which makes
    a file that dropped some a partial run)."""
    folder.mkdir(parents=True, exist_ok=True)
    paths = []
    for epoch in sorted({r["epoch"] for r in run.records}):
        attempts = [r for r in run.records if r["epoch"] == epoch]
        doc = {
            "provider": run.info["provider"],
            "model": run.model,
            "timestamp": FINISHED,
            "max_turns": run.info["max_turns"],
            "results": [
                _bashkit_result(attempt.task_row(run.info, r), r)
                for r in attempts
                if r["error"] is None
            ],
            "summary": {"total_tasks": len(attempts)},
        }
        path = folder / f"{bashkit_eval_name(run, epoch)}.json"
        path.write_text(json.dumps(doc, indent=1), encoding="utf-8")
        paths.append(path)
    return paths


def _bashkit_result(row: dict[str, Any], record: dict[str, Any]) -> dict[str, Any]:
    task, trace = record["task"], record["trace"]
    calls = attempt.tool_calls(record)
    return {
        "task": {
            k: task[k]
            for k in ("id", "category", "description", "system", "prompt", "files", "expectations")
        },
        "trace": {
            "messages": [
                {"role": m["role"], "content": [_present(b) for b in m["content"]]}
                for m in trace["messages"]
            ],
            "tool_calls": [
                {k: c[k] for k in ("commands", "stdout", "stderr", "exit_code")} for c in calls
            ],
            "tool_call_count": len(calls),
            "turns": row["turns"],
            "natural_stop": row["natural_stop"],
            "total_input_tokens": row["total_input_tokens"],
            "total_output_tokens": row["total_output_tokens"],
            "duration_ms": row["duration_ms"],
        },
        "score": {
            "task_id": task["id"],
            "results": [
                {k: c[k] for k in ("check", "passed", "detail", "weight")}
                for c in attempt.checks(record)
            ],
            "score": row["score"],
            "max_score": row["max_score"],
        },
    }


def _present(block: dict[str, Any]) -> dict[str, Any]:
    """A content block with only the keys it has (the harness writes no nulls)."""
    return {k: v for k, v in block.items() if v is not None}


ONETOOL_COLUMNS = (
    "scenario",
    "task",
    "model",
    "server",
    "result",
    "total_input",
    "total_output",
    "llm_calls",
    "tool_calls",
    "duration_s",
    "cost_usd",
    "base_context",
    "context_growth_avg",
)
"""The header ``ot-bench run --csv`` writes (spelt out here, not taken from the reader)."""


def onetool_view(run: Run) -> Run:
    """``run``'s attempts an onetool-mcp bench CSV can hold: those whose base context and
    context growth are known (the harness computes both from its own counts, so its
    columns have no way to say unknown). A row holds aggregates only, no call."""
    kept = []
    for record in run.records:
        row = attempt.task_row(run.info, record)
        if row["base_context"] is not None and row["context_growth_avg"] is not None:
            kept.append(record)
    return Run(run.info, kept)


def write_onetool_bench(views: list[Run], path: Path) -> Path:
    """The attempts of ``views`` (:func:`onetool_view` of runs of distinct models) as one
    bench CSV, one row per attempt, in run and attempt order: ``scenario`` = the task's
    category, ``task`` its id, ``result`` ``ERROR`` for an errored attempt, else ``PASS``
    or ``FAIL``; the token totals, calls, tool calls, duration and spec 003's two
    figures; ``server`` ``-`` (no MCP server) and ``cost_usd`` 0 (a played model costs
    nothing)."""
    lines = [",".join(ONETOOL_COLUMNS)]
    for run in views:
        for record in run.records:
            row = attempt.task_row(run.info, record)
            result = "ERROR" if row["error"] is not None else "PASS" if row["passed"] else "FAIL"
            cells = [
                row["category"],
                row["task_id"],
                run.model,
                "-",
                result,
                row["total_input_tokens"],
                row["total_output_tokens"],
                row["llm_call_count"],
                row["tool_call_count"],
                repr(row["duration_ms"] / 1000),
                0.0,
                row["base_context"],
                repr(row["context_growth_avg"]),
            ]
            lines.append(",".join(map(str, cells)))
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


MIRA_RUN = "mira"
"""The ``meta.json`` run id of the written mira folders."""
MIRA_EVAL = "bash"
"""The eval every written case belongs to (mira's dataset; a task's category is lost)."""


def write_mira(runs: list[Run], folder: Path) -> Path:
    """The attempts of ``runs`` (bash tasks, distinct models) as one bashkit mira run
    folder: ``meta.json`` and ``report.json``, one case per attempt of eval
    :data:`MIRA_EVAL`, target ``<provider>/<model>``, sample the task id, trial its epoch.

    A case's transcript holds the attempt's iterations (turns), tool outputs (commands,
    stdout, stderr, exit code), ``metrics.natural_stop``, the token totals with the cache
    reads (omitted when 0, as mira does), the duration and the error. Its one score is
    bashkit's ``bashkit_expectations``: the weighted rate (0 without weight), ``pass``
    when every check passed, the reason ``"k/n checks passed"``; an attempt that errored
    before its work ran has it N/A."""
    cases = []
    for run in runs:
        for record in run.records:
            row = attempt.task_row(run.info, record)
            rows = attempt.checks(record)
            usage = {
                "input_tokens": row["total_input_tokens"],
                "output_tokens": row["total_output_tokens"],
            }
            if row["cache_read_tokens"]:
                usage["cache_read_tokens"] = row["cache_read_tokens"]
            score = {
                "scorer": "bashkit_expectations",
                "value": row["rate"] or 0.0,
                "pass": all(r["passed"] is True for r in rows),
                "reason": f"{sum(r['passed'] is True for r in rows)}/{len(rows)} checks passed",
            }
            if attempt.work_never_ran(record):
                score |= {"value": 0.0, "pass": False, "na": True, "reason": "not run"}
            transcript: dict[str, Any] = {
                "iterations": row["turns"],
                "metadata": {
                    "bashkit": {
                        "tool_outputs": [
                            {k: c[k] for k in ("commands", "exit_code", "stderr", "stdout")}
                            for c in attempt.tool_calls(record)
                        ]
                    }
                },
                "metrics": {"natural_stop": float(row["natural_stop"])},
                "timing": {"duration_ms": row["duration_ms"]},
                "tool_calls_count": row["tool_call_count"],
                "usage": usage,
            }
            if row["error"] is not None:
                transcript["error"] = row["error"]
            cases.append(
                {
                    "eval": MIRA_EVAL,
                    "sample": row["task_id"],
                    "target": f"{run.info['provider']}/{run.model}",
                    "trial": record["epoch"],
                    "passed": row["passed"],
                    "scores": [score],
                    "skipped": False,
                    "transcript": transcript,
                }
            )
    folder.mkdir(parents=True, exist_ok=True)
    meta = {"format": 1, "run_id": MIRA_RUN, "started_unix": 0, "finished_unix": 1}
    (folder / "meta.json").write_text(json.dumps(meta), encoding="utf-8")
    report = {"cases": cases, "summary": {"scored": len(cases)}}
    (folder / "report.json").write_text(json.dumps(report, indent=1), encoding="utf-8")
    return folder


def llm_tool_test_view(run: Run) -> Run:
    """``run`` as llm-tool-test's ``results.jsonl`` says it: an errored attempt is a record
    whose ``outcome`` is ``ERROR``, with no scenario result (outcome, gates, judge and
    composite unknown), so the reference recounts spec 002's layers without it."""
    records = [r if r["error"] is None else {**r, "scenario": None} for r in run.records]
    return Run(run.info, records)


def write_llm_tool_test(run: Run, folder: Path) -> Path:
    """``run``'s scenario attempts as an llm-tool-test ``results.jsonl`` named after the
    run, in epoch order: one ``ResultRecord`` per attempt (``id``, ``scenario_id`` = the
    task id, ``tool`` = the provider, ``model``, ``timestamp``, ``duration_secs``,
    ``cost_usd`` 0 (a played model costs nothing), ``gates_passed``, ``judge_score``,
    ``outcome``) with its ``metrics``: ``gates_passed``, ``gates_total``, ``details`` (one
    ``{gate_type, passed, message}`` per gate: the gate's kind, its verdict, false when it
    never ran, and its detail) and ``composite_score``. ``outcome`` is ``Pass``, ``Fail``
    or, for an errored attempt, ``ERROR``. No ``efficiency`` block: llm-tool-test counts
    it from the tool's output, which a results record does not carry."""
    lines = []
    for n, record in enumerate(sorted(run.records, key=lambda r: r["epoch"]), start=1):
        row = attempt.task_row(run.info, record)
        gates = [r for r in attempt.checks(record) if r["layer"] == "gate"]
        details = [
            {"gate_type": g["kind"], "passed": g["passed"] is True, "message": g["detail"]}
            for g in gates
        ]
        passed = sum(d["passed"] for d in details)
        outcome = "ERROR" if row["error"] is not None else row["outcome"].capitalize()
        doc = {
            "id": f"run-{n}",
            "scenario_id": row["task_id"],
            "tool": run.info["provider"],
            "model": run.model,
            "timestamp": FINISHED,
            "duration_secs": row["duration_ms"] / 1000,
            "cost_usd": 0.0,
            "gates_passed": passed == len(details),
            "metrics": {
                "gates_passed": passed,
                "gates_total": len(details),
                "details": details,
                "composite_score": row["composite_score"],
            },
            "judge_score": row["judge_score"],
            "outcome": outcome,
        }
        lines.append(json.dumps(doc))
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{run.run_id}.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def write_claude_code(run: Run, folder: Path) -> list[list[Path]]:
    """``run``'s bash attempts as ``claude -p --output-format stream-json --verbose``
    files, one per attempt named after its task, one folder per epoch (Claude Code names
    a session's task by its file): the ``system``/``init`` line (model, session id), one
    ``assistant`` line per content block of each reply (``message.id``, ``model``,
    ``stop_reason``, the API's ``usage``: uncached ``input_tokens`` = the whole prompt
    less the cache parts, ``cache_read_input_tokens``, ``cache_creation_input_tokens``,
    ``output_tokens``, each left out when unknown), every tool call as a ``Bash``
    ``tool_use`` answered by a ``user`` line (``tool_result`` with ``is_error`` for a
    non-zero exit and its text led by ``Exit code N``; ``tool_use_result`` with stdout
    and stderr), and the ``result`` line (``success`` for a natural stop,
    ``error_max_turns`` when the turn limit came first, ``error_during_execution``
    with the error, ``duration_ms``, ``num_turns``)."""
    epochs: dict[int, list[Path]] = {}
    for record in run.records:
        task, epoch = record["task"]["id"], record["epoch"]
        path = folder / f"e{epoch}" / f"{task}.jsonl"
        path.parent.mkdir(parents=True, exist_ok=True)
        lines = [_claude_code_line(run, record, line) for line in _claude_code_lines(run, record)]
        path.write_text("".join(lines), encoding="utf-8")
        epochs.setdefault(epoch, []).append(path)
    return [epochs[e] for e in sorted(epochs)]


def _claude_code_line(run: Run, record: dict[str, Any], line: dict[str, Any]) -> str:
    session = f"{run.run_id}-{record['task']['id']}-{record['epoch']}"
    return json.dumps({**line, "session_id": session}) + "\n"


def _claude_code_lines(run: Run, record: dict[str, Any]) -> list[dict[str, Any]]:
    row = attempt.task_row(run.info, record)
    calls = attempt.llm_calls(record)
    tools = iter(attempt.tool_calls(record))
    lines: list[dict[str, Any]] = [{"type": "system", "subtype": "init", "model": run.model}]
    n = 0
    for message in record["trace"]["messages"]:
        if message["role"] == "assistant":
            call = calls[n]
            n += 1
            for block in message["content"]:
                if block["type"] == "tool_use":
                    command = block["input"]["commands"]
                    block = {"type": "tool_use", "id": block["id"], "name": "Bash"}
                    block["input"] = {"command": command}
                else:
                    block = {"type": "text", "text": block["text"]}
                reply = {"id": f"msg_{n}", "model": run.model, "role": "assistant"}
                reply |= {"content": [block], "stop_reason": call["stop_reason"]}
                reply["usage"] = _claude_code_usage(call)
                lines.append({"type": "assistant", "message": reply})
        elif message["role"] == "tool_result":
            for block in message["content"]:
                tool = next(tools)
                code = tool["exit_code"]
                text = tool["stdout"] if code == 0 else f"Exit code {code}\n{tool['stderr']}"
                result = {"type": "tool_result", "tool_use_id": block["tool_use_id"]}
                result |= {"content": text, "is_error": code != 0}
                lines.append(
                    {
                        "type": "user",
                        "message": {"role": "user", "content": [result]},
                        "tool_use_result": {"stdout": tool["stdout"], "stderr": tool["stderr"]},
                    }
                )
    if row["error"] is not None:
        ending = {"subtype": "error_during_execution", "is_error": True, "result": row["error"]}
    elif row["natural_stop"]:
        ending = {"subtype": "success", "is_error": False, "result": "done"}
    else:
        ending = {"subtype": "error_max_turns", "is_error": True}
    ending |= {"duration_ms": row["duration_ms"], "num_turns": row["turns"]}
    return [*lines, {"type": "result", **ending}]


def _claude_code_usage(call: dict[str, Any]) -> dict[str, int]:
    """The API's usage of one reply: its input without the cache parts."""
    usage = {}
    if call["input_tokens"] is not None:
        read, write = call["cache_read_tokens"], call["cache_write_tokens"]
        usage["input_tokens"] = call["input_tokens"] - (read or 0) - (write or 0)
        if read is not None:
            usage["cache_read_input_tokens"] = read
        if write is not None:
            usage["cache_creation_input_tokens"] = write
    if call["output_tokens"] is not None:
        usage["output_tokens"] = call["output_tokens"]
    return usage
