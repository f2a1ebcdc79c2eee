"""Task attempts as HTML: one attempt's transcript, or one task of two runs side by side.

:func:`task_html` shows an attempt's outcome, its transcript with every tool call
(commands, stdout, stderr, exit code; long output folded), the tokens and latency of
each LLM call, and every check with its verdict. Plain HTML (no widget library), so the
widgets (:mod:`evalnb._present.widgets`) and report.html
(:mod:`evalnb._present.report_html`) share it.

Example:
    >>> from evalnb._analysis.runs import Runs
    >>> "no task 't' in run 'a'" in side_by_side_html(Runs.empty(), "t", "a", "b")
    True
"""

from __future__ import annotations

import html
from typing import Any

import polars as pl

from evalnb._analysis.runs import Runs
from evalnb._analysis.verdicts import PASSED

FOLD_CHARS = 800
"""Tool output longer than this (or than :data:`FOLD_LINES` lines) is folded in <details>."""
FOLD_LINES = 12
TASK_STYLE = """<style>
.evalnb-task {font-family: sans-serif; font-size: 13px; line-height: 1.4; max-width: 1000px}
.evalnb-task pre {background: #f6f6f6; padding: 6px 8px; margin: 4px 0; white-space: pre-wrap;
  word-break: break-word; font-size: 12px}
.evalnb-task .call {border-left: 3px solid #4C78A8; padding-left: 8px; margin: 8px 0}
.evalnb-task .call.failed {border-left-color: #E45756}
.evalnb-task .meta {color: #666; font-size: 12px}
.evalnb-task .pass {color: #2e7d32; font-weight: bold}
.evalnb-task .fail {color: #c62828; font-weight: bold}
.evalnb-task table {border-collapse: collapse; margin: 6px 0}
.evalnb-task td, .evalnb-task th {border: 1px solid #ddd; padding: 3px 6px; text-align: left;
  vertical-align: top; font-size: 12px}
</style>"""


def task_html(runs: Runs, run_id: str, task_id: str, epoch: int | None = None) -> str:
    """One task attempt as HTML: outcome, transcript with tool calls, per-call figures, checks.

    The transcript comes from the ``messages`` table: user and assistant text, each
    tool call with its commands, stdout, stderr and exit code (from ``tool_calls``,
    long output folded in ``<details>``), the tokens and latency of every LLM call
    (from ``llm_calls``), then every check with its verdict and detail. ``epoch``
    defaults to the first one. Everything from the run is HTML-escaped.

    Parameters
    ----------
    runs : Runs
        The runs holding the attempt, e.g. :func:`evalnb.load`'s result.
    run_id : str
        The attempt's run.
    task_id : str
        The attempt's task.
    epoch : int | None, default None
        The attempt's epoch; None: the task's first epoch in the run.

    Returns
    -------
    str
        The HTML of the attempt (its own style included): a heading with the task and its
        verdict, the transcript, and the checks.

    Raises
    ------
    ValueError
        When run ``run_id`` has no task ``task_id``.

    See Also
    --------
    side_by_side_html : One task of two runs, side by side.
    task_browser : The widget showing it.

    Examples
    --------
    >>> import re
    >>> from evalnb._examples import example_runs
    >>> page = task_html(example_runs(), "hasty", "smoke_jq_fields")
    >>> re.findall("<h.>([A-Za-z_]+)", page), "FAILED" in page
    (['smoke_jq_fields', 'Transcript', 'Checks'], True)
    >>> task_html(example_runs(), "hasty", "smoke_nothing")
    Traceback (most recent call last):
    ...
    ValueError: no task 'smoke_nothing' in run 'hasty'
    """
    rows = runs.tasks.filter(run_id=run_id, task_id=task_id)
    if rows.height == 0:
        raise ValueError(f"no task {task_id!r} in run {run_id!r}")
    if epoch is None:
        epoch = int(rows.get_column("epoch").min())  # type: ignore[arg-type]
    key = {"run_id": run_id, "task_id": task_id, "epoch": epoch}
    task = rows.filter(epoch=epoch).with_columns(PASSED.alias("ok")).row(0, named=True)
    parts = [TASK_STYLE, '<div class="evalnb-task">', _header(task)]
    parts += _transcript(
        runs.messages.filter(**key).sort("message_index", "block_index"),
        runs.tool_calls.filter(**key).sort("call_index"),
        runs.llm_calls.filter(**key).sort("call_number"),
    )
    parts.append(_checks(runs.checks.filter(**key)))
    parts.append("</div>")
    return "\n".join(parts)


def side_by_side_html(runs: Runs, task_id: str, a: str, b: str, epoch: int | None = None) -> str:
    """One task's attempts in runs ``a`` and ``b`` as two transcripts side by side.

    ``epoch`` defaults to each run's first; a run without the task says so in its column.

    Parameters
    ----------
    runs : Runs
        The runs holding both, e.g. :func:`evalnb.load`'s result.
    task_id : str
        The task to show.
    a, b : str
        The runs of the left and right columns.
    epoch : int | None, default None
        The epoch to show in both; None: each run's first.

    Returns
    -------
    str
        The HTML: two flex columns, each a :func:`task_html` (or a note that the run has
        no such task).

    See Also
    --------
    task_html : One attempt.
    comparer : The widget showing it for the tasks of two runs.

    Examples
    --------
    >>> import re
    >>> from evalnb._examples import example_runs
    >>> page = side_by_side_html(example_runs(), "smoke_jq_fields", "careful", "hasty")
    >>> re.findall("<h.>[a-z_]+ <span[^>]*>([A-Z]+)", page)
    ['PASSED', 'FAILED']
    >>> "no task 'smoke_jq_fields' in run 'x'" in side_by_side_html(
    ...     example_runs(), "smoke_jq_fields", "careful", "x"
    ... )
    True
    """
    columns = []
    for run_id in (a, b):
        has = runs.tasks.filter(run_id=run_id, task_id=task_id)
        if epoch is not None:
            has = has.filter(epoch=epoch)
        body = (
            task_html(runs, run_id, task_id, epoch)
            if has.height
            else f"<p>no task {task_id!r} in run {run_id!r}</p>"
        )
        columns.append(f'<div style="flex: 1; min-width: 0">{body}</div>')
    return f'<div style="display: flex; gap: 16px">{"".join(columns)}</div>'


def _cell(value: object) -> str:
    if value is None:
        return ""
    if isinstance(value, float):
        return f"{value:.3g}"
    return html.escape(str(value))


def _header(task: dict[str, Any]) -> str:
    verdict = (
        '<span class="pass">PASSED</span>' if task["ok"] else '<span class="fail">FAILED</span>'
    )
    facts = [
        f"model <b>{html.escape(str(task['model']))}</b>",
        f"run {html.escape(str(task['run_id']))}",
        f"epoch {task['epoch']}",
        f"category {html.escape(str(task['category']))}",
        f"score {_cell(task['score'])}/{_cell(task['max_score'])}",
        f"turns {task['turns']}",
        f"tool calls {task['tool_call_count']}",
        f"natural stop {task['natural_stop']}",
        f"input/output tokens {task['total_input_tokens']}/{task['total_output_tokens']}",
    ]
    error = f"<p class='fail'>error: {html.escape(task['error'])}</p>" if task.get("error") else ""
    return (
        f"<h3>{html.escape(str(task['task_id']))} {verdict}</h3>"
        f"<p class='meta'>{' · '.join(facts)}</p>{error}"
    )


def _transcript(messages: pl.DataFrame, calls: pl.DataFrame, llm: pl.DataFrame) -> list[str]:
    """Messages in order; the n-th assistant message is LLM call n, the k-th tool use call k.

    A tool result is shown only for a tool use without a ``tool_calls`` row (the row
    already shows its stdout, stderr and exit code). Without messages, the tool calls
    are shown alone.
    """
    per_call = {r["call_number"]: r for r in llm.iter_rows(named=True)}
    tool_calls = calls.rows(named=True)
    if messages.height == 0:
        note = "No messages were recorded" + (": the tool calls alone." if tool_calls else ".")
        calls_html = [_tool_call(c["commands"], c) for c in tool_calls]
        return ["<h4>Transcript</h4>", f"<p class='meta'>{note}</p>", *calls_html]
    parts = ["<h4>Transcript</h4>"]
    use_index: dict[str, int] = {}
    turn, last_message = 0, None
    for block in messages.iter_rows(named=True):
        if block["message_index"] != last_message and block["role"] == "assistant":
            turn += 1
            parts.append(_llm_call_line(turn, per_call.get(turn)))
        last_message = block["message_index"]
        if block["type"] == "text":
            who = "user" if block["role"] == "user" else "assistant"
            parts.append(f"<p><b>{who}:</b></p><pre>{html.escape(block['text'] or '')}</pre>")
        elif block["type"] == "tool_use":
            k = use_index.setdefault(block["tool_use_id"], len(use_index))
            parts.append(
                _tool_call(block["commands"], tool_calls[k] if k < len(tool_calls) else None)
            )
        elif use_index.get(block["tool_use_id"], len(tool_calls)) >= len(tool_calls):
            parts.append(f"<p class='meta'>tool result:</p>{_fold(block['text'] or '')}")
    return parts


def _llm_call_line(number: int, call: dict[str, Any] | None) -> str:
    if call is None:
        return f"<p class='meta'>LLM call {number}</p>"
    facts = [
        f"input {_cell(call['input_tokens']) or '?'} tokens",
        f"output {_cell(call['output_tokens']) or '?'} tokens",
        f"latency {_cell(call['latency_ms']) or '?'} ms",
        f"{call['tool_calls_made']} tool call(s)",
    ]
    return f"<p class='meta'>LLM call {number}: {' · '.join(facts)}</p>"


def _tool_call(commands: str | None, call: dict[str, Any] | None) -> str:
    parts = [f"<pre>$ {html.escape(commands or '')}</pre>"]
    failed = False
    if call is not None:
        failed = call["exit_code"] != 0
        duration = f" · {_cell(call['duration_ms'])} ms" if call["duration_ms"] is not None else ""
        parts.append(f"<p class='meta'>exit code {call['exit_code']}{duration}</p>")
        for stream in ("stdout", "stderr"):
            text = call[stream] or ""
            if text:
                cut = " (truncated)" if call[f"{stream}_truncated"] else ""
                parts.append(f"<p class='meta'>{stream}{cut}:</p>{_fold(text)}")
    css = "call failed" if failed else "call"
    return f'<div class="{css}">{"".join(parts)}</div>'


def _fold(text: str) -> str:
    body = f"<pre>{html.escape(text)}</pre>"
    lines = text.count("\n") + 1
    if len(text) <= FOLD_CHARS and lines <= FOLD_LINES:
        return body
    return f"<details><summary>{lines} lines, {len(text)} characters</summary>{body}</details>"


def _checks(checks: pl.DataFrame) -> str:
    if checks.height == 0:
        return "<h4>Checks</h4><p class='meta'>No checks.</p>"
    rows = []
    for c in checks.iter_rows(named=True):
        verdict = {
            True: '<span class="pass">pass</span>',
            False: '<span class="fail">fail</span>',
            None: '<span class="meta">not run</span>',  # the attempt errored before its work
        }[c["passed"]]
        rows.append(
            f"<tr><td>{verdict}</td><td>{html.escape(str(c['layer']))}</td>"
            f"<td><code>{html.escape(c['check'])}</code></td><td>{_cell(c['weight'])}</td>"
            f"<td>{html.escape(c['detail'] or '')}</td></tr>"
        )
    head = "<tr><th>verdict</th><th>layer</th><th>check</th><th>weight</th><th>detail</th></tr>"
    return f"<h4>Checks</h4><table>{head}{''.join(rows)}</table>"
