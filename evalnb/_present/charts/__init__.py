"""Altair charts of evaluation runs: one function per question, one theme, export by suffix.

Every chart function takes a :class:`~evalnb._analysis.runs.Runs` and returns an altair chart.
The figures come from :mod:`evalnb._analysis`'s metrics, :mod:`evalnb._analysis.interaction` and
:mod:`evalnb._analysis.diagnostics`; large tables are aggregated in polars before anything
reaches altair, so a chart's data stays a few hundred rows whatever the input size.
Every rate is drawn with its 95% interval. Runs made by an offline persona
(``runs.simulated``) carry "(simulated)" in their label and the chart says so.

This package is ``evalnb.charts``: it exports every chart and :data:`CHARTS`, their
registry; the charts are written in its modules by what they show (:mod:`.rates`,
:mod:`.tools`, :mod:`.tokens`, :mod:`.outcomes`, :mod:`.guidance`, :mod:`.trends`), from
the parts they share (:mod:`.parts`), drawn in one theme (:mod:`.style`) and written to
files by :mod:`.files`.

Examples
--------
>>> from evalnb._examples import example_runs
>>> chart = rates_by_model(example_runs())
>>> type(chart).__name__, chart.to_dict()["title"].get("text")
('LayerChart', 'Pass rate and overall rate by model')
"""

from __future__ import annotations

from collections.abc import Callable

import altair as alt
import polars as pl

from evalnb._analysis.runs import Runs
from evalnb._present.charts.files import save, save_all
from evalnb._present.charts.guidance import guidance_differences, interaction_by_guidance
from evalnb._present.charts.outcomes import task_matrix
from evalnb._present.charts.parts import PICK, labels
from evalnb._present.charts.rates import (
    category_heatmap,
    natural_stop,
    pass_at_k_curves,
    rates_by_model,
)
from evalnb._present.charts.style import THEME, enable_theme, theme
from evalnb._present.charts.tokens import context_growth, context_peaks, token_economics
from evalnb._present.charts.tools import tool_success, turns_and_calls
from evalnb._present.charts.trends import trend
from evalnb._present.offline import enable_offline

CHARTS: dict[str, Callable[[Runs], alt.TopLevelMixin]] = {
    "rates_by_model": rates_by_model,
    "category_heatmap": category_heatmap,
    "tool_success": tool_success,
    "turns_and_calls": turns_and_calls,
    "natural_stop": natural_stop,
    "token_economics": token_economics,
    "context_growth": context_growth,
    "context_peaks": context_peaks,
    "pass_at_k_curves": pass_at_k_curves,
    "task_matrix": task_matrix,
    "interaction_by_guidance": interaction_by_guidance,
    "guidance_differences": guidance_differences,
    "trend": trend,
}
"""Every chart, by name, in the order the report shows them."""


GUIDANCE_CHARTS = ("interaction_by_guidance", "guidance_differences")
"""The charts of guidance versions: drawn only of the runs that used one."""


def all_charts(runs: Runs) -> dict[str, alt.TopLevelMixin]:
    """Every chart of :data:`CHARTS` that applies to ``runs``, by name.

    The :data:`GUIDANCE_CHARTS` are drawn of the runs made with a guidance version only,
    and none when no run used one.

    Parameters
    ----------
    runs : Runs
        The runs to draw, e.g. :func:`evalnb.load`'s result.

    Returns
    -------
    dict[str, altair.TopLevelMixin]
        Each applicable chart by its :data:`CHARTS` name, in the order of :data:`CHARTS`
        (the order the report shows them).

    See Also
    --------
    save_all : Write them all to a folder.

    Examples
    --------
    >>> from evalnb._examples import example_runs, example_guidance_runs
    >>> charts = all_charts(example_runs())  # no guidance version: no guidance charts
    >>> len(charts), list(charts)[:3]
    (11, ['rates_by_model', 'category_heatmap', 'tool_success'])
    >>> tuple(name for name in all_charts(example_guidance_runs()) if name in GUIDANCE_CHARTS)
    ('interaction_by_guidance', 'guidance_differences')
    """
    guided = runs.filter(pl.col("guidance").is_not_null())
    return {
        name: make(guided if name in GUIDANCE_CHARTS else runs)
        for name, make in CHARTS.items()
        if guided.runs.height or name not in GUIDANCE_CHARTS
    }


__all__ = [
    "CHARTS",
    "GUIDANCE_CHARTS",
    "PICK",
    "THEME",
    "all_charts",
    "category_heatmap",
    "context_growth",
    "context_peaks",
    "enable_offline",
    "enable_theme",
    "guidance_differences",
    "interaction_by_guidance",
    "labels",
    "natural_stop",
    "pass_at_k_curves",
    "rates_by_model",
    "save",
    "save_all",
    "task_matrix",
    "theme",
    "token_economics",
    "tool_success",
    "trend",
    "turns_and_calls",
]
