"""Tables for people: every row and every character, rates as percentages with intervals.

polars prints 10 rows and cuts strings at about 30 characters, which hides error
texts, friction messages and diagnosis evidence. :func:`show` renders a DataFrame as
an HTML table with up to :data:`MAX_ROWS` rows and full, wrapped texts, its figures
rendered by :mod:`evalnb._display`:

- a rate column ``x`` with ``x_lo`` and ``x_hi`` beside it becomes one column
  "62.5% [40.1–80.2%]" (the interval columns are folded in; an interval reaching
  below zero, as a difference's can, reads "-12.0% [-30.0% to 5.0%]");
- except ``alpha`` (Krippendorff's, from -1 to 1, not a rate), which reads as a number
  with its interval: "0.62 [0.4 to 0.8]";
- columns named ``*_rate`` or ``*_share`` are percentages;
- ``*_ms`` columns are durations: "850 ms", "12.3 s" or "4.2 min"; ``*_usd`` columns
  costs: "$1.50";
- a missing value reads "–"; other floats keep 3 significant digits; lists are joined
  with "; ".

Example:
    >>> frame = pl.DataFrame({"pass_rate": [0.5], "pass_rate_lo": [0.2], "pass_rate_hi": [0.8],
    ...                       "avg_duration_ms": [252_000.0]})
    >>> formatted(frame).row(0)
    ('50.0% [20.0–80.0%]', '4.2 min')
    >>> formatted(pl.DataFrame({"diff": [-0.12], "diff_lo": [-0.3], "diff_hi": [0.05]})).item()
    '-12.0% [-30.0% to 5.0%]'
"""

from __future__ import annotations

import base64
import html
from typing import Any

import polars as pl

from evalnb import _display as fmt

MAX_ROWS = 500
"""A table shows at most this many rows (and says how many it left out)."""

STYLE = """<style>
table.evalnb-table {border-collapse: collapse; font-size: 12px; margin: 6px 0}
table.evalnb-table td, table.evalnb-table th {border: 1px solid #ddd; padding: 3px 6px;
  text-align: left; vertical-align: top; white-space: pre-wrap; word-break: break-word;
  max-width: 640px}
table.evalnb-table th {white-space: normal; word-break: normal; overflow-wrap: normal}
</style>"""
"""Cells wrap anywhere (long texts); headers wrap only between words (:func:`header`)."""


def header(column: str) -> str:
    """A column name for people: words, not snake_case, so it wraps between words.

    Example:
        >>> header("tool_call_success_rate")
        'tool call success rate'
    """
    return column.replace("_", " ")


def formatted(frame: pl.DataFrame) -> pl.DataFrame:
    """``frame`` with every column as display text (see the module docstring for the rules).

    Example:
        >>> formatted(pl.DataFrame({"error_rate": [0.25], "n": [3]})).row(0)
        ('25.0%', '3')
    """
    folded = {c for c in frame.columns if c.endswith(("_lo", "_hi")) and c[:-3] in frame.columns}
    out = {}
    for column in frame.columns:
        if column in folded:
            continue
        values = frame.get_column(column).to_list()
        if f"{column}_lo" in folded and f"{column}_hi" in folded:
            los, his = frame.get_column(f"{column}_lo"), frame.get_column(f"{column}_hi")
            interval = fmt.number_interval if column == "alpha" else fmt.rate_interval
            out[column] = [interval(v, lo, hi) for v, lo, hi in zip(values, los, his, strict=True)]
        elif column.endswith(("_rate", "_share")):
            out[column] = [fmt.rate(v) for v in values]
        elif column.endswith("_ms"):
            out[column] = [fmt.duration(v) for v in values]
        elif column.endswith("_usd"):
            out[column] = [fmt.cost(v) for v in values]
        else:
            out[column] = [_text(v) for v in values]
    return pl.DataFrame(out, schema=dict.fromkeys(out, pl.Utf8))


def csv_link(frame: pl.DataFrame, filename: str = "table.csv") -> str:
    """A link that downloads ``frame`` (every row, raw values) as CSV; works offline.

    Nested columns (lists) are joined with "; ". The CSV travels inside the link (a
    base64 ``data:`` URL), so the page needs no server.

    Parameters
    ----------
    frame : polars.DataFrame
        The rows to download, all of them.
    filename : str, default "table.csv"
        The name the browser saves the file under.

    Returns
    -------
    str
        An HTML ``<a download>`` element saying how many rows it holds.

    See Also
    --------
    table_html : The table itself, optionally with this link above it.

    Examples
    --------
    >>> import base64
    >>> from evalnb._examples import example_runs
    >>> tasks = example_runs().tasks.select("run_id", "task_id", "epoch", "passed", "tags")
    >>> link = csv_link(tasks.sort("run_id", "task_id", "epoch"), "tasks.csv")
    >>> link.split('">')[1]
    'download CSV (12 rows)</a>'
    >>> data = link.split("base64,")[1].split('"')[0]
    >>> for line in base64.b64decode(data).decode().splitlines()[:2]:
    ...     print(line)
    run_id,task_id,epoch,passed,tags
    careful,smoke_count_words,1,true,easy; wc
    """
    flat = frame.with_columns(
        pl.col(c).cast(pl.List(pl.Utf8)).list.join("; ")
        for c, dtype in frame.schema.items()
        if isinstance(dtype, pl.List)
    )
    data = base64.b64encode(flat.write_csv().encode("utf-8")).decode("ascii")
    return (
        f'<a download="{html.escape(filename)}" href="data:text/csv;base64,{data}">'
        f"download CSV ({frame.height} rows)</a>"
    )


def table_html(frame: pl.DataFrame, max_rows: int = MAX_ROWS, csv: str | None = None) -> str:
    """``frame`` as an HTML table of full, escaped texts, its headers in words (:func:`header`).

    At most ``max_rows`` rows are shown, and a note under the table says how many there
    were. With ``csv`` (a file name), a link above the table downloads every row as CSV.

    Parameters
    ----------
    frame : polars.DataFrame
        The rows to show; values are formatted for reading (durations, costs, lists).
    max_rows : int, default MAX_ROWS
        Show at most this many rows (:data:`MAX_ROWS`).
    csv : str | None, default None
        The file name of a CSV download link (:func:`csv_link`) above the table, holding
        every row; None: no link.

    Returns
    -------
    str
        The HTML: a style, the optional link, the table and, when rows were left out, a
        "showing N of M rows" note.

    Examples
    --------
    >>> import re
    >>> from evalnb._examples import example_runs
    >>> tasks = example_runs().tasks.select("run_id", "task_id", "epoch", "passed")
    >>> page = table_html(tasks, max_rows=5, csv="tasks.csv")
    >>> re.findall("<th>([^<]+)</th>", page), page.count("<tr>")
    (['run id', 'task id', 'epoch', 'passed'], 6)
    >>> re.findall("<p class='meta'>([^<]+)</p>", page), "download CSV (12 rows)" in page
    (['showing 5 of 12 rows'], True)
    """
    shown = formatted(frame.head(max_rows))
    head = "".join(f"<th>{html.escape(header(c))}</th>" for c in shown.columns)
    body = "".join(
        "<tr>" + "".join(f"<td>{html.escape(v)}</td>" for v in row) + "</tr>"
        for row in shown.rows()
    )
    more = (
        f"<p class='meta'>showing {max_rows} of {frame.height} rows</p>"
        if frame.height > max_rows
        else ""
    )
    link = f"<p>{csv_link(frame, csv)}</p>" if csv else ""
    return f'{STYLE}{link}<table class="evalnb-table"><tr>{head}</tr>{body}</table>{more}'


def show(frame: pl.DataFrame, max_rows: int = MAX_ROWS, csv: str | None = "table.csv") -> Any:
    """Display ``frame`` in Jupyter as a readable table, with a CSV download link.

    Every row up to ``max_rows`` and every character is shown, headers in words
    (:func:`header`), figures rendered as the module docstring says (:func:`formatted`).

    Parameters
    ----------
    frame : polars.DataFrame
        Any frame, say one of the analysis functions' results.
    max_rows : int, default MAX_ROWS (500)
        Show at most this many rows, and say how many were left out.
    csv : str or None, default "table.csv"
        The file name of the download link above the table, which downloads every row
        as CSV (raw values, lists joined with "; "); None: no link.

    Returns
    -------
    IPython.display.HTML
        The table, which Jupyter displays; its HTML text is ``.data``.

    See Also
    --------
    formatted : The frame as the text the table shows.

    Examples
    --------
    The cells of the table are the frame's figures as text, rates as percentages:

    >>> import polars as pl
    >>> import evalnb as en
    >>> from evalnb._examples import example_runs
    >>> frame = en.interaction(example_runs(), by="run").select(
    ...     "run_id", "total_commands", "error_rate")
    >>> formatted(frame)
    shape: (2, 3)
    ┌─────────┬────────────────┬────────────┐
    │ run_id  ┆ total_commands ┆ error_rate │
    │ ---     ┆ ---            ┆ ---        │
    │ str     ┆ str            ┆ str        │
    ╞═════════╪════════════════╪════════════╡
    │ careful ┆ 26             ┆ 0.0%       │
    │ hasty   ┆ 23             ┆ 26.1%      │
    └─────────┴────────────────┴────────────┘
    >>> html = show(frame, csv="interaction.csv").data
    >>> "<th>total commands</th>" in html, "download CSV (2 rows)" in html
    (True, True)
    >>> show(frame, max_rows=1, csv=None).data.endswith("showing 1 of 2 rows</p>")
    True
    """
    from IPython.display import HTML

    return HTML(table_html(frame, max_rows, csv))


def _text(value: object) -> str:
    if value is None:
        return fmt.MISSING
    if isinstance(value, float):
        return f"{value:.3g}"
    if isinstance(value, list):
        return "; ".join(_text(v) for v in value)
    return str(value)
