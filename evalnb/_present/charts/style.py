"""The evalnb chart theme: white background, readable fonts, one colour palette.

Registered with altair (not enabled) on import: :func:`enable_theme` turns it on for a
session, and :mod:`evalnb._present.charts.files` always draws in it.

Example:
    >>> THEME in alt.theme.names()
    True
"""

from __future__ import annotations

import altair as alt

THEME = "evalnb"
NEUTRAL = ["#555555", "#b0b0b0"]
"""Greys for what is not a model (measures, token kinds): colour always means the model."""
_FONT = "DejaVu Sans, Helvetica, Arial, sans-serif"
_PALETTE = [
    "#4C78A8",
    "#F58518",
    "#54A24B",
    "#B279A2",
    "#E45756",
    "#72B7B2",
    "#9D755D",
    "#EECA3B",
    "#FF9DA6",
    "#BAB0AC",
]


@alt.theme.register(THEME, enable=False)
def theme() -> alt.theme.ThemeConfig:
    """The evalnb theme: white background, readable fonts, one colour palette.

    Registered (not enabled) when this module is imported, so importing evalnb changes
    no global state: :func:`enable_theme` turns it on for a session, :func:`save`
    always uses it.

    Returns
    -------
    altair.theme.ThemeConfig
        The theme's config: ``background``, ``padding`` and ``config`` (fonts, view size,
        title, axis, header and legend styles, and the category colour palette).

    See Also
    --------
    enable_theme : Draw every chart of the session in this theme.

    Examples
    --------
    >>> config = theme()
    >>> palette = config["config"].get("range").get("category")
    >>> config["background"], palette[:2]
    ('white', ['#4C78A8', '#F58518'])
    """
    return {
        "background": "white",
        "padding": 12,
        "config": {
            "font": _FONT,
            "view": {"stroke": None, "continuousWidth": 360, "continuousHeight": 240},
            "title": {
                "fontSize": 15,
                "subtitleFontSize": 11,
                "subtitleColor": "#555",
                "anchor": "start",
                "offset": 10,
            },
            "axis": {
                "labelFontSize": 11,
                "titleFontSize": 12,
                "titleFontWeight": "normal",
                "gridColor": "#e6e6e6",
                "labelLimit": 220,
            },
            "axisQuantitative": {"labelOverlap": "greedy", "tickCount": 4},
            "header": {"labelFontSize": 12, "titleFontSize": 12},
            "legend": {"labelFontSize": 11, "titleFontSize": 12, "labelLimit": 260},
            "range": {"category": _PALETTE},
            "bar": {"color": _PALETTE[0]},
            "line": {"color": _PALETTE[0]},
        },
    }


def enable_theme() -> None:
    """Draw every altair chart of this session in the evalnb theme (opt-in).

    Returns
    -------
    None
        The theme (:func:`theme`) becomes altair's active theme.

    See Also
    --------
    theme : The theme's config.
    enable_offline : Draw every chart of the session with no network.

    Examples
    --------
    >>> from evalnb._examples import example_runs
    >>> from evalnb._present.charts import rates_by_model
    >>> enable_theme()
    >>> alt.theme.active
    'evalnb'
    >>> config = rates_by_model(example_runs()).to_dict()["config"]
    >>> config.get("range").get("category")[0]
    '#4C78A8'
    >>> _ = alt.theme.enable("default")  # back to altair's own
    """
    alt.theme.enable(THEME)
