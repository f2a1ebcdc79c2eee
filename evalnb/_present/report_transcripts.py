"""report.html's transcripts: the tasks that flipped between compared runs, and every failed
attempt, collapsed by default and searchable, so a reader sees why without Jupyter.

- :func:`flipped_section`: per compared pair (the pairs of report.html's comparison
  table), the tasks that flipped from A to B
  (:func:`evalnb._analysis.regression.task_diff`: pass→fail first), each with both runs'
  transcripts side by side.
- :func:`failed_section`: every failed attempt (up to :data:`MAX_FAILED`; the page says
  how many it leaves out), one collapsed ``<details>`` each (failures of a run
  together), under a search box that hides the attempts whose text does not hold what
  is typed (a few lines of inline script; nothing is fetched).

Each transcript is :func:`evalnb._present.transcripts.task_html`; its style is on the page
once (:data:`~evalnb._present.transcripts.TASK_STYLE`).

Example:
    >>> from evalnb._analysis.runs import Runs
    >>> failed_section(Runs.empty())[0]
    '<p>No failed attempts.</p>'
"""

from __future__ import annotations

import html

import polars as pl

from evalnb._analysis.regression import task_diff
from evalnb._analysis.runs import Runs
from evalnb._analysis.verdicts import PASSED
from evalnb._present.transcripts import TASK_STYLE, side_by_side_html, task_html

MAX_FAILED = 500
"""report.html holds at most this many failed attempts' transcripts, so it stays a file to
mail (the demo's 222 of its 720 attempts in 6 runs take 1.1 MB of its 3.4 MB page;
tests/test_demo_notebooks.py keeps the page under 5 MB); report.json and the notebooks
have every one."""

SEARCH = """<p><input type="search" id="evalnb-search" size="60"
 placeholder="search the transcripts: task, model, command, output, check"
 oninput="evalnbSearch(this.value)"> <span id="evalnb-found"></span></p>
<script>
function evalnbSearch(text) {
  const q = text.trim().toLowerCase();
  let shown = 0;
  const all = document.querySelectorAll("details.evalnb-attempt");
  all.forEach(function (d) {
    const hit = !q || d.textContent.toLowerCase().includes(q);
    d.style.display = hit ? "" : "none";
    if (hit) { shown += 1; }
  });
  document.getElementById("evalnb-found").textContent =
    q ? shown + " of " + all.length + " attempts" : "";
}
</script>"""
"""The search box over the transcripts (inline: the page stays offline)."""


def failed_section(runs: Runs) -> list[str]:
    """Every failed attempt's transcript, collapsed, under :data:`SEARCH`.

    Example:
        >>> from evalnb._analysis.runs import Runs
        >>> failed_section(Runs.empty())
        ['<p>No failed attempts.</p>']
    """
    failed = (
        runs.tasks.filter(~PASSED)
        .select("run_id", "model", "task_id", "epoch", "error")
        .sort("run_id", "task_id", "epoch")
    )
    if failed.height == 0:
        return ["<p>No failed attempts.</p>"]
    shown = (
        f"{failed.height} failed attempts"
        if failed.height <= MAX_FAILED
        else f"the first {MAX_FAILED} of {failed.height} failed attempts (all are in report.json)"
    )
    parts = [f"<p>{shown}; each opens on a click.</p>", SEARCH]
    for run_id, model, task_id, epoch, error in failed.head(MAX_FAILED).iter_rows():
        why = f" · error: {error[:120]}" if error else ""
        summary = f"{model} · run {run_id} · {task_id} #{epoch}{why}"
        parts.append(_attempt(summary, task_html(runs, run_id, task_id, epoch)))
    return parts


def flipped_section(runs: Runs, pairs: pl.DataFrame) -> list[str]:
    """The flipped tasks of each pair of ``pairs`` (columns ``a``, ``b``, ``model_a``,
    ``model_b``: the comparison table's), each with both transcripts side by side.

    Example:
        >>> from evalnb._analysis.runs import Runs
        >>> flipped_section(Runs.empty(), pl.DataFrame(schema={c: pl.Utf8 for c in "ab"}))
        ['<p>No compared pairs.</p>']
    """
    shown = pairs.select("a", "b").unique(maintain_order=True)
    if shown.height == 0:
        return ["<p>No compared pairs.</p>"]
    parts = []
    for a, b in shown.iter_rows():
        flips = task_diff(runs, a, b)
        lost = flips.filter(pl.col("flip") == "pass→fail").height
        parts.append(
            f"<h3>A = {html.escape(a)}, B = {html.escape(b)}: {lost} pass→fail, "
            f"{flips.height - lost} fail→pass</h3>"
        )
        for r in flips.iter_rows(named=True):
            failed = "; ".join(r["failed_checks_a"] + r["failed_checks_b"])
            summary = (
                f"{r['flip']} · {r['task_id']} · A {r['passed_a']}/{r['attempts_a']}, "
                f"B {r['passed_b']}/{r['attempts_b']} passed"
                + (f" · failed: {failed}" if failed else "")
            )
            parts.append(_attempt(summary, side_by_side_html(runs, r["task_id"], a, b)))
    return parts


def _attempt(summary: str, body: str) -> str:
    """One collapsed transcript (its style is on the page once)."""
    return (
        f'<details class="evalnb-attempt"><summary>{html.escape(summary)}</summary>'
        f"{body.replace(TASK_STYLE, '')}</details>"
    )
