"""Charts written to files: PNG, SVG, PDF or self-contained HTML, offline.

Example:
    >>> from evalnb._analysis.runs import Runs
    >>> from evalnb._present.charts import rates_by_model
    >>> save(rates_by_model(Runs.empty()), "chart.gif")
    Traceback (most recent call last):
    ...
    ValueError: chart.gif: unknown chart format '.gif' (use .png .svg .pdf .html)
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import altair as alt

from evalnb._extras import require
from evalnb._present.charts.style import THEME
from evalnb._present.offline import chart_html, html_page, spec_of


def save(chart: alt.TopLevelMixin, path: str | Path) -> Path:
    """Write a chart to ``path``: PNG, SVG, PDF or self-contained HTML, chosen by suffix.

    Rendering is offline (vl-convert, the ``export`` extra); an HTML file carries the
    vega libraries inline (:func:`evalnb._present.offline.chart_html`) and loads nothing
    from the network. Parent folders are created. The chart is drawn in the evalnb theme
    (:func:`theme`); a PNG at twice the chart's size.

    Parameters
    ----------
    chart : altair.TopLevelMixin
        The chart to write, e.g. one of this package's chart functions' results.
    path : str | pathlib.Path
        The file to write; its suffix (``.png``, ``.svg``, ``.pdf`` or ``.html``, in any
        case) picks the format.

    Returns
    -------
    pathlib.Path
        ``path``, as a :class:`~pathlib.Path`.

    Raises
    ------
    ValueError
        When the suffix is none of ``.png``, ``.svg``, ``.pdf`` and ``.html``.
    SetupError
        When vl-convert (the ``export`` extra) is not installed; the message gives the pip
        command.

    See Also
    --------
    save_all : Every chart of a mapping to a folder, SVG and PNG, drawn once each.

    Examples
    --------
    >>> import tempfile
    >>> from evalnb._examples import example_runs
    >>> from evalnb._present.charts import rates_by_model
    >>> chart = rates_by_model(example_runs())
    >>> out = save(chart, Path(tempfile.mkdtemp()) / "a" / "rates.svg")
    >>> out.name, "<svg" in out.read_text()
    ('rates.svg', True)
    >>> save(chart, "chart.gif")
    Traceback (most recent call last):
    ...
    ValueError: chart.gif: unknown chart format '.gif' (use .png .svg .pdf .html)
    """
    path = Path(path)
    fmt = path.suffix.lower().lstrip(".")
    if fmt not in {"png", "svg", "pdf", "html"}:
        raise ValueError(f"{path}: unknown chart format {path.suffix!r} (use .png .svg .pdf .html)")
    require("vl_convert", "export")
    path.parent.mkdir(parents=True, exist_ok=True)
    with alt.theme.enable(THEME):
        if fmt == "html":
            spec = chart.to_dict()
            title = spec.get("title", {})
            name = title.get("text", path.stem) if isinstance(title, dict) else str(title)
            path.write_text(html_page(str(name), chart_html(spec)), encoding="utf-8")
        elif fmt == "png":
            chart.save(path, format="png", scale_factor=2)
        else:
            chart.save(path, format="svg" if fmt == "svg" else "pdf")
    return path


def save_all(
    charts: Mapping[str, alt.TopLevelMixin | dict[str, Any]], folder: str | Path
) -> dict[str, Path]:
    """Write every chart to ``folder`` as ``<name>.svg`` and ``<name>.png`` (2x).

    A chart is an altair chart or its spec (``to_dict()``, drawn as it is). Each chart is
    drawn once: its spec is built and validated once, rendered to SVG by
    vega (vl-convert), and the PNG rasterised from that SVG, the way :func:`save`'s PNG
    is made, without running vega a second time. The charts are drawn on as many threads
    as there are cores (vl-convert releases the GIL). Needs the ``export`` extra.

    Parameters
    ----------
    charts : Mapping[str, altair.TopLevelMixin | dict[str, Any]]
        The charts by name, e.g. :func:`all_charts`' result; a name becomes the files' stem.
    folder : str | pathlib.Path
        The folder to write to; created (with its parents) if missing.

    Returns
    -------
    dict[str, pathlib.Path]
        The SVG file of each chart, by name, in the order of ``charts``.

    Raises
    ------
    SetupError
        When vl-convert (the ``export`` extra) is not installed.

    See Also
    --------
    save : One chart to one file, its format chosen by suffix.

    Examples
    --------
    >>> import tempfile
    >>> from evalnb._examples import example_runs
    >>> from evalnb._present.charts import rates_by_model
    >>> done = save_all({"rates": rates_by_model(example_runs())}, tempfile.mkdtemp())
    >>> done["rates"].name
    'rates.svg'
    >>> sorted(p.name for p in done["rates"].parent.iterdir())
    ['rates.png', 'rates.svg']
    """
    require("vl_convert", "export")
    import vl_convert as vlc
    from altair.utils._importers import vl_version_for_vl_convert

    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    with alt.theme.enable(THEME):
        specs = {name: spec_of(chart) for name, chart in charts.items()}
    vl_version = vl_version_for_vl_convert()

    def draw(name: str) -> Path:
        svg = vlc.vegalite_to_svg(specs[name], vl_version=vl_version)
        (folder / f"{name}.png").write_bytes(vlc.svg_to_png(svg, scale=2))
        (folder / f"{name}.svg").write_text(svg, encoding="utf-8")
        return folder / f"{name}.svg"

    with ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as pool:
        return dict(zip(specs, pool.map(draw, specs), strict=True))
