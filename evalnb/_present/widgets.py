"""ipywidgets helpers for exploring runs in Jupyter, each with a static HTML fallback.

- :func:`picker`: run, model, category and chart dropdowns refreshing a chart and a task table.
- :func:`task_browser`: pick a run and a task to read its transcript and check verdicts.
- :func:`comparer`: pick two runs to see their paired per-task differences.
- :func:`drill_down`: a chart to click (a heatmap cell, a bar) listing the tasks behind
  the click, failures first, and opening the chosen one's transcript.
- :func:`task_html`: one task attempt as HTML (used by the browser and by reports).

With ``static=None`` (the default) the live widgets are built only when a widget
frontend can show them: inside a Jupyter kernel that was not started by nbclient
(nbclient, and so nbmake and papermill, give their kernels an in-memory history
file, which a Jupyter server does not). Otherwise, or with ``static=True``, each
helper returns :class:`IPython.display.HTML` showing its initial selection.

Examples
--------
>>> from evalnb._examples import example_runs
>>> type(task_browser(example_runs())).__name__  # no widget frontend under doctest
'HTML'
"""

from __future__ import annotations

import html
import re
from typing import Any, cast

import altair as alt
import ipywidgets as w
import polars as pl
import vl_convert as vlc
from IPython.display import HTML, clear_output, display

from evalnb._analysis.compare import compare
from evalnb._analysis.regression import task_diff
from evalnb._analysis.runs import Runs
from evalnb._analysis.verdicts import PASSED
from evalnb._present import charts, groups
from evalnb._present.tables import csv_link, table_html
from evalnb._present.tables import show as show
from evalnb._present.transcripts import TASK_STYLE
from evalnb._present.transcripts import side_by_side_html as side_by_side_html
from evalnb._present.transcripts import task_html as task_html
from evalnb._store.tables import KEYS, TABLES

ALL = ""
"""The dropdown value meaning "all" (ipywidgets shows a None value as a blank dropdown)."""
DRILL_CHARTS = ("category_heatmap", "rates_by_model", "natural_stop")
"""The charts with a :data:`~evalnb._present.charts.PICK` selection: click for the tasks."""
PAGE_ROWS = 25
"""The explorer's task table shows this many attempts per page."""
SAME_RUN = "A and B are the same run: pick another run for A or for B."
"""What the comparer says when A and B are set to the same run (it never moves either)."""
_WIDE = {"layout": {"width": "max-content"}, "style": {"description_width": "initial"}}
"""Dropdowns as wide as their longest label: no label is cut."""


def widget_frontend() -> bool:
    """True when running in a Jupyter kernel that a widget-capable frontend can talk to.

    That is an IPython ``ZMQInteractiveShell`` whose history file is not in memory:
    nbclient (and so nbmake and papermill) gives its kernels an in-memory history file,
    which a Jupyter server does not.

    Returns
    -------
    bool
        Whether the widgets' ``static=None`` builds the live widgets.

    Examples
    --------
    >>> widget_frontend()  # plain Python, as under doctest
    False
    """
    try:
        from IPython import get_ipython
    except ImportError:  # pragma: no cover - IPython is a dependency
        return False
    shell = get_ipython()
    if shell is None or type(shell).__name__ != "ZMQInteractiveShell":
        return False
    return str(shell.history_manager.hist_file) != ":memory:"


def picker(runs: Runs, *, static: bool | None = None) -> Any:
    """Run, model, category and chart dropdowns that refresh a chart and a task table.

    The charts of :data:`DRILL_CHARTS` come as a :func:`drill_down`: click a cell or a
    bar for its tasks and their transcripts.
    The task table (failures first) shows :data:`PAGE_ROWS` attempts a page, with
    buttons to page through them and a CSV link holding every row. Static: the default
    chart (the category heatmap) as SVG and the task table's first page, for all runs.

    Parameters
    ----------
    runs : Runs
        The runs to explore, e.g. :func:`evalnb.load`'s result.
    static : bool | None, default None
        True: the static HTML; False: the live widgets; None: the live widgets only where
        a widget frontend can show them (:func:`widget_frontend`), else the static HTML.

    Returns
    -------
    ipywidgets.VBox | IPython.display.HTML
        The live widgets (dropdowns, chart, task table and paging buttons), or the static
        HTML.

    See Also
    --------
    drill_down : One chart to click, alone.
    task_browser : One attempt's transcript.

    Examples
    --------
    >>> from evalnb._examples import example_runs
    >>> page = picker(example_runs(), static=True)
    >>> type(page).__name__, "<svg" in page.data, page.data.count("<tr>")  # header + 12 attempts
    ('HTML', True, 13)
    """
    if not _live(static):
        chart = charts.category_heatmap(runs)
        return HTML(_svg(chart) + _task_table(_task_rows(runs)))
    run_dd = w.Dropdown(
        description="run", options=_choices(charts.labels(runs), "run_label"), **_WIDE
    )
    model_dd = w.Dropdown(
        description="model",
        options=[("all", ALL), *((m, m) for m in _unique(runs.runs, "model"))],
        **_WIDE,
    )
    category_dd = w.Dropdown(
        description="category",
        options=[("all", ALL), *((c, c) for c in _unique(runs.tasks, "category"))],
        **_WIDE,
    )
    chart_dd = w.Dropdown(
        description="chart", options=list(charts.CHARTS), value="category_heatmap", **_WIDE
    )
    chart_out, chart_area, table = w.Output(), w.VBox(), w.HTML()
    earlier, later = w.Button(description="◀ earlier rows"), w.Button(description="later rows ▶")
    rows: dict[str, Any] = {"frame": pl.DataFrame(), "page": 0}

    def turn(step: int) -> None:
        pages = max(1, -(-rows["frame"].height // PAGE_ROWS))
        rows["page"] = min(max(0, rows["page"] + step), pages - 1)
        table.value = _task_table(rows["frame"], rows["page"])
        earlier.disabled, later.disabled = rows["page"] == 0, rows["page"] == pages - 1

    earlier.on_click(lambda _: turn(-1))
    later.on_click(lambda _: turn(1))

    def refresh(_: object = None) -> None:
        part = subset(runs, run_dd.value or None, model_dd.value or None, category_dd.value or None)
        rows["frame"], rows["page"] = _task_rows(part), 0
        turn(0)
        with chart_out:
            clear_output(wait=True)
        if chart_dd.value in DRILL_CHARTS:
            chart_area.children = [drill_down(part, chart_dd.value, static=False)]
            return
        chart_area.children = [chart_out]
        with chart_out:
            display(charts.CHARTS[chart_dd.value](part))

    for dd in (run_dd, model_dd, category_dd, chart_dd):
        dd.observe(refresh, names="value")
    refresh()
    pages = w.HBox([earlier, later])
    controls = [w.HBox([run_dd, model_dd]), w.HBox([category_dd, chart_dd])]
    return w.VBox([*controls, chart_area, table, pages])


def task_browser(
    runs: Runs,
    run_id: str | None = None,
    task_id: str | None = None,
    *,
    static: bool | None = None,
) -> Any:
    """Pick a run and a task to read its transcript, per-call figures and checks.

    Starts at ``run_id`` / ``task_id``, else at the first failed task (or the first
    task). Static: that task's :func:`task_html`.

    Parameters
    ----------
    runs : Runs
        The runs to explore, e.g. :func:`evalnb.load`'s result.
    run_id : str | None, default None
        The run to start at; None: the first failed task's run (or the first run).
    task_id : str | None, default None
        The task to start at; None: the first failed task (or the first task).
    static : bool | None, default None
        True: the static HTML; False: the live widgets; None: the live widgets only where
        a widget frontend can show them (:func:`widget_frontend`), else the static HTML.

    Returns
    -------
    ipywidgets.VBox | IPython.display.HTML
        The live widgets (run and task dropdowns, a failures-only toggle, a next button, a
        transcript search, and the attempt), or the static HTML of the starting attempt
        (a message when the runs hold no task).

    Raises
    ------
    ValueError
        When ``run_id`` / ``task_id`` name no task of ``runs``.

    See Also
    --------
    task_html : The attempt's HTML.
    attempt_choices : The task dropdown's choices.

    Examples
    --------
    >>> import re
    >>> from evalnb._examples import example_runs
    >>> page = task_browser(example_runs(), static=True)  # the first failed task
    >>> re.findall("<h.>([A-Za-z_]+)", page.data)
    ['smoke_count_words', 'Transcript', 'Checks']
    >>> task_browser(example_runs(), "hasty", "smoke_nothing", static=True)
    Traceback (most recent call last):
    ...
    ValueError: no task 'smoke_nothing' in run 'hasty'
    """
    start = _first_task(runs, run_id, task_id)
    if start is None:
        return HTML("<p>No tasks in these runs.</p>")
    if not _live(static):
        return HTML(task_html(runs, *start))
    run_dd = w.Dropdown(
        description="run",
        options=_choices(charts.labels(runs), "run_label", everything=False),
        **_WIDE,
    )
    run_dd.value = start[0]
    task_dd = w.Dropdown(description="attempt", **_WIDE)
    failures = w.Checkbox(description="failures only", value=False, indent=False)
    search = w.Text(description="search", placeholder="text in the transcript", **_WIDE)
    next_btn = w.Button(description="next failure", icon="forward")
    view = w.HTML()

    def show(_: object = None) -> None:
        view.value = (
            task_html(runs, run_dd.value, *task_dd.value)
            if task_dd.value is not None
            else "<p>No attempt matches.</p>"
        )

    def refill(_: object = None) -> None:
        current = task_dd.value
        task_dd.options = attempt_choices(
            runs, run_dd.value, failures_only=failures.value, search=search.value or None
        )
        known = [t for _, t in task_dd.options]
        task_dd.value = current if current in known else (known[0] if known else None)
        show()

    def next_failure(_: object = None) -> None:
        failed = [t for label, t in task_dd.options if label.endswith("(fail)")]
        later = [t for t in failed if task_dd.value is None or t > task_dd.value]
        if failed:
            task_dd.value = (later or failed)[0]  # wraps round to the first failure

    task_dd.options = attempt_choices(runs, start[0])
    task_dd.value = (start[1], start[2])
    for control in (run_dd, failures, search):
        control.observe(refill, names="value")
    task_dd.observe(show, names="value")
    next_btn.on_click(next_failure)
    show()
    return w.VBox([w.HBox([run_dd, task_dd]), w.HBox([failures, next_btn, search]), view])


def drill_down(runs: Runs, chart: str = "category_heatmap", *, static: bool | None = None) -> Any:
    """A chart to click: the tasks behind the clicked heatmap cell or bar, then a transcript.

    ``chart`` is one of :data:`DRILL_CHARTS`. It is drawn as an ``altair.JupyterChart``
    (offline: its JavaScript from vl-convert's bundle), whose ``selections`` trait holds
    the click (:data:`~evalnb._present.charts.PICK`: a model group and, for the heatmap, a
    category; shift-click adds more). The list below it gives every attempt behind the
    click (:func:`picked_attempts`), failures first; the first is opened and any other
    opens on choice. Static: the chart as SVG.

    Parameters
    ----------
    runs : Runs
        The runs to explore, e.g. :func:`evalnb.load`'s result.
    chart : str, default "category_heatmap"
        The chart's name in :data:`~evalnb._present.charts.CHARTS`, one of
        :data:`DRILL_CHARTS`.
    static : bool | None, default None
        True: the static HTML; False: the live widgets; None: the live widgets only where
        a widget frontend can show them (:func:`widget_frontend`), else the static HTML.

    Returns
    -------
    ipywidgets.VBox | IPython.display.HTML
        The live chart with the attempts list and the opened attempt below it, or the
        static HTML of the chart as SVG.

    Raises
    ------
    ValueError
        When ``chart`` is not one of :data:`DRILL_CHARTS`.

    See Also
    --------
    picked_attempts : The attempts behind a click.

    Examples
    --------
    >>> from evalnb._examples import example_runs
    >>> page = drill_down(example_runs(), "rates_by_model", static=True)
    >>> type(page).__name__, "<svg" in page.data
    ('HTML', True)
    >>> drill_down(example_runs(), "trend")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: no drill-down for chart 'trend'; choose from ['category_heatmap', ...]
    """
    if chart not in DRILL_CHARTS:
        raise ValueError(f"no drill-down for chart {chart!r}; choose from {list(DRILL_CHARTS)}")
    made = charts.CHARTS[chart](runs)
    if not _live(static):
        return HTML(_svg(made))
    alt.JupyterChart.enable_offline()
    with alt.theme.enable(charts.THEME):
        clickable = alt.JupyterChart(
            cast(alt.TopLevelSpec, made), embed_options={"renderer": "svg", "actions": False}
        )
    attempts = w.Select(description="tasks", rows=8, layout={"width": "max-content"})
    attempts.style.description_width = "initial"
    note, view = w.HTML("<p>Click a cell or a bar to list its tasks.</p>"), w.HTML()

    def open_attempt(_: object = None) -> None:
        view.value = task_html(runs, *attempts.value) if attempts.value is not None else ""

    def on_pick(_: object = None) -> None:
        points = getattr(clickable.selections, charts.PICK).value
        rows = picked_attempts(runs, points)
        failed = rows.height - int(rows.get_column("passed").sum())
        picked = "; ".join(
            " · ".join(str(point[k]) for k in ("run_label", "category") if k in point)
            for point in points
        )
        note.value = (
            f"<p><b>{html.escape(picked)}</b>: {rows.height} attempts, {failed} failed</p>"
            if points
            else "<p>Click a cell or a bar to list its tasks.</p>"
        )
        attempts.options = [
            (
                f"{t} · {r} · epoch {e} ({'pass' if ok else 'fail'})",
                (r, t, e),
            )
            for r, t, e, ok in rows.select("run_id", "task_id", "epoch", "passed").rows()
        ]
        attempts.value = attempts.options[0][1] if attempts.options else None
        open_attempt()

    clickable.selections.observe(on_pick, names=charts.PICK)
    attempts.observe(open_attempt, names="value")
    return w.VBox([clickable, note, attempts, view])


def picked_attempts(runs: Runs, points: list[dict[str, Any]]) -> pl.DataFrame:
    """The task attempts behind clicked chart points, failures first.

    Each point names a model group (``run_label``, a :func:`evalnb._present.groups.group_labels`
    group, as the charts draw them) and, from the heatmap, a ``category``. The attempts
    are those of every run of the group (in that category), one row per run, task and
    epoch, with ``passed``; sorted failures first, then by task, run and epoch.

    Parameters
    ----------
    runs : Runs
        The runs to explore, e.g. :func:`evalnb.load`'s result.
    points : list[dict[str, Any]]
        The clicked points, as a ``JupyterChart``'s selection holds them: each with a
        ``run_label`` and, from the heatmap, a ``category``.

    Returns
    -------
    polars.DataFrame
        Columns ``run_id``, ``run_label``, ``task_id``, ``epoch``, ``category`` and
        ``passed``: one row per attempt.

    Examples
    --------
    >>> from evalnb._examples import example_runs
    >>> clicked = [{"run_label": "sim/hasty (simulated)", "category": "json_processing"}]
    >>> picked_attempts(example_runs(), clicked).select("run_id", "task_id", "epoch", "passed")
    shape: (2, 4)
    ┌────────┬─────────────────┬───────┬────────┐
    │ run_id ┆ task_id         ┆ epoch ┆ passed │
    │ ---    ┆ ---             ┆ ---   ┆ ---    │
    │ str    ┆ str             ┆ i64   ┆ bool   │
    ╞════════╪═════════════════╪═══════╪════════╡
    │ hasty  ┆ smoke_jq_fields ┆ 1     ┆ false  │
    │ hasty  ┆ smoke_jq_fields ┆ 2     ┆ false  │
    └────────┴─────────────────┴───────┴────────┘
    """
    label = groups.group_labels(runs).select("run_id", pl.col("group").alias("run_label"))
    wanted = (
        pl.DataFrame(points) if points else pl.DataFrame({"run_label": []}, {"run_label": pl.Utf8})
    )
    on = [c for c in ("run_label", "category") if c in wanted.columns]
    return (
        runs.tasks.join(label, on="run_id")
        .join(wanted.select(on).unique(), on=on, how="semi")
        .with_columns(PASSED.alias("passed"))
        .select("run_id", "run_label", "task_id", "epoch", "category", "passed")
        .sort("passed", "task_id", "run_id", "epoch")
    )


def comparer(
    runs: Runs, a: str | None = None, b: str | None = None, *, static: bool | None = None
) -> Any:
    """Pick two runs to see their paired comparison (:func:`evalnb._analysis.compare.compare`).

    Shows the pass-rate difference with its interval and exact p-value (McNemar, or
    sign-flip with epochs), the weighted-rate difference, each p with its Holm
    adjustment, and the tasks where the two runs disagree. Starts at ``a`` and ``b``
    (run ids or model names), else the first two runs. Set to the same run, A and B
    stay as the reader set them and the comparer says so (:data:`SAME_RUN`). Static:
    that pair.

    Parameters
    ----------
    runs : Runs
        The runs to explore, e.g. :func:`evalnb.load`'s result.
    a : str | None, default None
        Run A to start at: a run id or a model name; None: the first run.
    b : str | None, default None
        Run B to start at: a run id or a model name; None: the second run.
    static : bool | None, default None
        True: the static HTML; False: the live widgets; None: the live widgets only where
        a widget frontend can show them (:func:`widget_frontend`), else the static HTML.

    Returns
    -------
    ipywidgets.VBox | IPython.display.HTML
        The live widgets (A and B dropdowns, the comparison, a task dropdown and the two
        attempts side by side), or the static :func:`comparison_html` of the starting
        pair (a message with fewer than two runs).

    See Also
    --------
    comparison_html : The comparison's HTML.
    side_by_side_html : One task of the two runs.

    Examples
    --------
    >>> import re
    >>> from evalnb._examples import example_runs
    >>> page = comparer(example_runs(), "careful", "hasty", static=True)
    >>> re.search("pass rate +([^ ]+) vs ([^ ]+)", page.data).groups()
    ('100.0%', '50.0%')
    """
    ids = charts.labels(runs).get_column("run_id").to_list()
    if len(ids) < 2:
        return HTML("<p>Comparing needs at least two runs.</p>")
    a, b = a or ids[0], b or ids[1]
    if not _live(static):
        return HTML(comparison_html(runs, a, b))
    options = _choices(charts.labels(runs), "run_label", everything=False)
    a_dd = w.Dropdown(description="A", options=options, value=a if a in ids else ids[0], **_WIDE)
    b_dd = w.Dropdown(description="B", options=options, value=b if b in ids else ids[1], **_WIDE)
    view, pair = w.HTML(), w.HTML()
    task_dd = w.Dropdown(description="task side by side", **_WIDE)

    def show_pair(_: object = None) -> None:
        pair.value = (
            side_by_side_html(runs, task_dd.value, a_dd.value, b_dd.value) if task_dd.value else ""
        )

    def refresh(_: object = None) -> None:
        view.value = comparison_html(runs, a_dd.value, b_dd.value)
        current = task_dd.value
        task_dd.options = shared_tasks(runs, a_dd.value, b_dd.value)
        known = [t for _, t in task_dd.options]
        task_dd.value = current if current in known else (known[0] if known else None)
        show_pair()

    def pick(_: object = None) -> None:
        if a_dd.value == b_dd.value:  # A = B is no comparison; neither is moved behind the back
            view.value, pair.value = f"<p>{SAME_RUN}</p>", ""
            task_dd.options = []
            return
        refresh()

    a_dd.observe(pick, names="value")
    b_dd.observe(pick, names="value")
    task_dd.observe(show_pair, names="value")
    pick()
    return w.VBox([w.HBox([a_dd, b_dd]), view, task_dd, pair])


def shared_tasks(runs: Runs, a: str, b: str) -> list[tuple[str, str]]:
    """Choices of the tasks runs ``a`` and ``b`` both ran, the flipped ones first.

    Flipped as :func:`evalnb._analysis.regression.task_diff` says: pass→fail, then
    fail→pass.

    Parameters
    ----------
    runs : Runs
        The runs to explore, e.g. :func:`evalnb.load`'s result.
    a, b : str
        The two runs' ids.

    Returns
    -------
    list[tuple[str, str]]
        Dropdown choices: (the task id with its change from A to B, the task id).

    Examples
    --------
    >>> from evalnb._examples import example_runs
    >>> choices = shared_tasks(example_runs(), "careful", "hasty")
    >>> choices[0]
    ('smoke_count_words (pass→fail)', 'smoke_count_words')
    >>> tuple(label for label, _ in choices[1:])
    ('smoke_jq_fields (pass→fail)', 'smoke_make_project (same verdict)')
    """
    both = runs.tasks.filter(pl.col("run_id").is_in([a, b]))
    shared = both.group_by("task_id").agg(pl.col("run_id").n_unique().alias("runs"))
    ids = sorted(shared.filter(pl.col("runs") == 2).get_column("task_id").to_list())
    if not ids:
        return []
    flips = dict(task_diff(runs, a, b).select("task_id", "flip").iter_rows())
    flipped = [(f"{t} ({flip})", t) for t, flip in flips.items()]
    return flipped + [(f"{t} (same verdict)", t) for t in ids if t not in flips]


def comparison_html(runs: Runs, a: str, b: str) -> str:
    """The paired comparison of runs ``a`` and ``b`` as HTML, then the tasks that flipped.

    The comparison is :func:`evalnb._analysis.compare.compare`'s; the flipped tasks are
    :func:`evalnb._analysis.regression.task_diff`'s, with the checks that failed.
    A pair that cannot be compared (same run, no shared tasks) gives a message, not an
    error, so a widget can show it.

    Parameters
    ----------
    runs : Runs
        The runs to explore, e.g. :func:`evalnb.load`'s result.
    a, b : str
        The two runs: run ids or model names.

    Returns
    -------
    str
        The HTML: the comparison as text, then the flipped tasks' table with a CSV link;
        or a paragraph saying why the pair cannot be compared.

    See Also
    --------
    comparer : The widget showing it.
    evalnb.compare : The comparison.

    Examples
    --------
    >>> import re
    >>> from evalnb._examples import example_runs
    >>> page = comparison_html(example_runs(), "careful", "hasty")
    >>> re.findall("<h4>([^<]+)", page)
    ['Tasks that flipped from A to B (2): pass→fail first']
    >>> comparison_html(example_runs(), "careful", "careful")
    '<p>Cannot compare: pick two different runs (both are careful).</p>'
    """
    if a == b:
        return f"<p>Cannot compare: pick two different runs (both are {html.escape(a)}).</p>"
    try:
        result = compare(runs, a, b)
    except ValueError as exc:
        return f"<p>Cannot compare: {html.escape(str(exc), quote=False)}</p>"
    flips = task_diff(runs, a, b)
    return "\n".join(
        [
            TASK_STYLE,
            '<div class="evalnb-task">',
            f"<pre>{html.escape(str(result))}</pre>",
            f"<h4>Tasks that flipped from A to B ({flips.height}): pass→fail first</h4>",
            table_html(flips, csv=f"{a}-vs-{b}-flipped.csv"),
            "</div>",
        ]
    )


def subset(
    runs: Runs, run_id: str | None = None, model: str | None = None, category: str | None = None
) -> Runs:
    """The part of ``runs`` with the given run, model and task category (None = all).

    Parameters
    ----------
    runs : Runs
        The runs to explore, e.g. :func:`evalnb.load`'s result.
    run_id : str | None, default None
        Keep this run only; None: every run.
    model : str | None, default None
        Keep this model's runs only; None: every model.
    category : str | None, default None
        Keep the task attempts of this category only (in every table); None: every
        category.

    Returns
    -------
    Runs
        The same tables, filtered; a run left with no attempt of the category is dropped.

    Examples
    --------
    >>> from evalnb._examples import example_runs
    >>> part = subset(example_runs(), model="sim/hasty", category="json_processing")
    >>> part.tasks.select("run_id", "task_id", "epoch", "passed").sort("epoch")
    shape: (2, 4)
    ┌────────┬─────────────────┬───────┬────────┐
    │ run_id ┆ task_id         ┆ epoch ┆ passed │
    │ ---    ┆ ---             ┆ ---   ┆ ---    │
    │ str    ┆ str             ┆ i64   ┆ bool   │
    ╞════════╪═════════════════╪═══════╪════════╡
    │ hasty  ┆ smoke_jq_fields ┆ 1     ┆ false  │
    │ hasty  ┆ smoke_jq_fields ┆ 2     ┆ false  │
    └────────┴─────────────────┴───────┴────────┘
    """
    part = runs
    if run_id is not None:
        part = part.filter(pl.col("run_id") == run_id)
    if model is not None:
        part = part.filter(pl.col("model") == model)
    if category is None:
        return part
    keys = part.tasks.filter(pl.col("category") == category).select(KEYS)
    tables = {
        name: getattr(part, name).join(keys, on=KEYS, how="semi", nulls_equal=True)
        for name in TABLES
        if name != "runs"
    }
    runs_ = part.runs.filter(pl.col("run_id").is_in(keys.get_column("run_id").unique().implode()))
    return Runs(runs=runs_, **tables)


def _live(static: bool | None) -> bool:
    return widget_frontend() if static is None else not static


def _svg(chart: Any) -> str:
    with alt.theme.enable(charts.THEME):
        spec = chart.to_dict()
    return f"<div>{vlc.vegalite_to_svg(spec)}</div>"


def attempt_choices(
    runs: Runs, run_id: str, *, failures_only: bool = False, search: str | None = None
) -> list[tuple[str, tuple[str, int]]]:
    """Dropdown choices of a run's task attempts: one per (task, epoch), labelled by its outcome.

    ``failures_only`` keeps the failed attempts; ``search`` keeps the attempts whose
    transcript (messages, commands, stdout, stderr, check details, error) contains it,
    ignoring case.

    Parameters
    ----------
    runs : Runs
        The runs to explore, e.g. :func:`evalnb.load`'s result.
    run_id : str
        The run whose attempts to list.
    failures_only : bool, default False
        Keep the failed attempts only.
    search : str | None, default None
        Keep the attempts whose transcript contains this text, ignoring case
        (:func:`matching_attempts`); None or empty: every attempt.

    Returns
    -------
    list[tuple[str, tuple[str, int]]]
        Dropdown choices: (``"<task> · epoch <n> (pass|fail)"``, (task id, epoch)), by task
        and epoch; the label names the epoch only when the run has several.

    Examples
    --------
    >>> from evalnb._examples import example_runs
    >>> for label, _ in attempt_choices(example_runs(), "hasty", failures_only=True):
    ...     print(label)
    smoke_count_words · epoch 1 (fail)
    smoke_jq_fields · epoch 1 (fail)
    smoke_jq_fields · epoch 2 (fail)
    >>> attempt_choices(example_runs(), "hasty", search="JQ")[0]
    ('smoke_jq_fields · epoch 1 (fail)', ('smoke_jq_fields', 1))
    """
    frame = runs.tasks.filter(run_id=run_id).with_columns(PASSED.alias("ok"))
    several = frame.get_column("epoch").n_unique() > 1 if frame.height else False
    if failures_only:
        frame = frame.filter(~pl.col("ok"))
    if search:
        frame = frame.join(matching_attempts(runs, search), on=KEYS, how="semi", nulls_equal=True)
    rows = frame.select("task_id", "epoch", "ok").sort("task_id", "epoch").rows()
    return [
        (f"{t}{f' · epoch {e}' if several else ''} ({'pass' if ok else 'fail'})", (t, e))
        for t, e, ok in rows
    ]


def matching_attempts(runs: Runs, text: str) -> pl.DataFrame:
    """The keys (run, task, epoch) of attempts whose transcript contains ``text`` (any case).

    Searched: message text, tool call commands, stdout and stderr, check details, and
    the attempt's error.

    Parameters
    ----------
    runs : Runs
        The runs to explore, e.g. :func:`evalnb.load`'s result.
    text : str
        The text to find, literally (not a regex), ignoring case.

    Returns
    -------
    polars.DataFrame
        Columns ``run_id``, ``model``, ``task_id`` and ``epoch``: one row per matching
        attempt, in no particular order.

    Examples
    --------
    >>> from evalnb._examples import example_runs
    >>> matching_attempts(example_runs(), "wordcount").sort("run_id", "task_id", "epoch")
    shape: (4, 4)
    ┌─────────┬─────────────┬───────────────────┬───────┐
    │ run_id  ┆ model       ┆ task_id           ┆ epoch │
    │ ---     ┆ ---         ┆ ---               ┆ ---   │
    │ str     ┆ str         ┆ str               ┆ i64   │
    ╞═════════╪═════════════╪═══════════════════╪═══════╡
    │ careful ┆ sim/careful ┆ smoke_count_words ┆ 1     │
    │ careful ┆ sim/careful ┆ smoke_count_words ┆ 2     │
    │ hasty   ┆ sim/hasty   ┆ smoke_count_words ┆ 1     │
    │ hasty   ┆ sim/hasty   ┆ smoke_count_words ┆ 2     │
    └─────────┴─────────────┴───────────────────┴───────┘
    """
    pattern = "(?i)" + re.escape(text)
    where = [
        ("messages", ["text"]),
        ("tool_calls", ["commands", "stdout", "stderr"]),
        ("checks", ["detail"]),
        ("tasks", ["error"]),
    ]
    hits = [
        getattr(runs, table)
        .filter(pl.any_horizontal(pl.col(c).str.contains(pattern) for c in columns))
        .select(KEYS)
        for table, columns in where
        if getattr(runs, table).height
    ]
    empty = runs.tasks.select(KEYS).clear()
    found: pl.DataFrame = pl.concat([empty, *hits], how="vertical_relaxed").unique()
    return found


def _unique(frame: pl.DataFrame, column: str) -> list[str]:
    return sorted(frame.get_column(column).drop_nulls().unique().to_list())


def _choices(labels: pl.DataFrame, column: str, everything: bool = True) -> list[tuple[str, str]]:
    pairs = [(label, run_id) for run_id, label in labels.select("run_id", column).iter_rows()]
    return [("all", ALL), *pairs] if everything else pairs


def _first_task(runs: Runs, run_id: str | None, task_id: str | None) -> tuple[str, str, int] | None:
    tasks = runs.tasks.with_columns(PASSED.alias("ok"))
    if run_id is not None:
        tasks = tasks.filter(run_id=run_id)
    if task_id is not None:
        tasks = tasks.filter(task_id=task_id)
    if tasks.height == 0:
        if run_id is not None or task_id is not None:
            raise ValueError(f"no task {task_id!r} in run {run_id!r}")
        return None
    first = tasks.sort("ok", "run_id", "task_id", "epoch").row(0, named=True)
    return first["run_id"], first["task_id"], first["epoch"]


def _task_rows(runs: Runs) -> pl.DataFrame:
    """The picker's task rows: every attempt, failures first."""
    return (
        runs.tasks.with_columns(PASSED.alias("passed"))
        .select(
            "run_id",
            "model",
            "task_id",
            "epoch",
            "category",
            "passed",
            "score",
            "max_score",
            "turns",
            "tool_call_count",
            "error",
        )
        .sort("passed", "run_id", "task_id")
    )


def _task_table(frame: pl.DataFrame, page: int = 0) -> str:
    """Page ``page`` of the task rows (:data:`PAGE_ROWS` a page) as an HTML table, with
    where it is and a CSV link holding every row."""
    first = page * PAGE_ROWS
    shown = frame.slice(first, PAGE_ROWS)
    where = (
        f"attempts {first + 1}–{first + shown.height} of {frame.height}"
        if frame.height
        else "no attempts"
    )
    return f"<p>{csv_link(frame, 'tasks.csv')} · {where}</p>" + table_html(shown)
