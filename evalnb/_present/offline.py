"""Charts that draw with no network: the vega libraries inlined, never fetched from a CDN.

altair's default notebook output loads vega, vega-lite and vega-embed from a CDN, so
offline (or behind a proxy) every chart shows "Error loading script". Here each chart
is an HTML fragment that carries the JavaScript bundle vl-convert ships (the ``export``
extra), gzip-compressed and base64-encoded (about 0.4 MB). The first chart on a page
unpacks it (the browser's ``DecompressionStream``) and loads it as a module; every
later chart waits for that one load. Each fragment carries the bundle, so a notebook
whose first chart was cleared, or one chart copied out alone, still draws.

- :func:`enable_offline`: make this the altair renderer of the session (notebooks
  call it next to :func:`evalnb._present.charts.enable_theme`).
- :func:`chart_html`: one chart as such a fragment (for reports and widgets).
- :func:`html_page`: a whole self-contained HTML document around fragments.

Example:
    >>> fragment = chart_html({"mark": "point", "data": {"values": [{"x": 1}]}})
    >>> "evalnb-chart" in fragment and "https://" not in fragment
    True
"""

from __future__ import annotations

import base64
import contextlib
import gzip
import hashlib
import html
import json
import os
import uuid
from functools import lru_cache
from importlib.metadata import version
from pathlib import Path
from typing import Any

import altair as alt

from evalnb._extras import require

RENDERER = "evalnb-offline"
_GLOBALS = "window.vegaEmbed = vegaEmbed; window.vega = vega; window.vegaLite = vegaLite;"
"""The bundle's snippet: it exposes vega-embed, vega and vega-lite as globals."""

_LOADER = """
const el = document.getElementById("%(id)s");
const spec = %(spec)s;
async function loadVega() {
  const packed = document.querySelector("script.evalnb-vega-bundle").textContent.trim();
  const bytes = Uint8Array.from(atob(packed), (c) => c.charCodeAt(0));
  const stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream("gzip"));
  const code = await new Response(stream).text();
  const url = URL.createObjectURL(new Blob([code], {type: "text/javascript"}));
  await import(url);
  URL.revokeObjectURL(url);
}
window.__evalnbVega = window.__evalnbVega || (window.vegaEmbed ? Promise.resolve() : loadVega());
window.__evalnbVega
  .then(() => window.vegaEmbed(el, spec, {renderer: "svg", actions: false}))
  .catch((err) => {
    el.textContent = "evalnb could not draw this chart: " + err;
    el.className += " evalnb-chart-error";
  });
"""


@lru_cache(maxsize=1)
def _packed_bundle() -> str:
    """The bundle, gzipped and base64-encoded; built once per vl-convert version and kept
    in the user's cache folder (building it takes seconds, and every notebook kernel,
    report and widget needs it)."""
    require("vl_convert", "export")
    import vl_convert as vlc

    key = hashlib.sha256(f"{version('vl-convert-python')}{_GLOBALS}".encode()).hexdigest()
    cached = _cache_folder() / f"vega-bundle-{key[:16]}.b64"
    with contextlib.suppress(OSError):
        return cached.read_text(encoding="ascii")
    code = vlc.javascript_bundle(_GLOBALS).encode("utf-8")
    packed = base64.b64encode(gzip.compress(code, compresslevel=9, mtime=0)).decode("ascii")
    with contextlib.suppress(OSError):  # a read-only home: build it again next time
        cached.parent.mkdir(parents=True, exist_ok=True)
        tmp = cached.with_name(f".{cached.name}.{os.getpid()}.tmp")
        tmp.write_text(packed, encoding="ascii")
        os.replace(tmp, cached)
    return packed


def prepare_bundle() -> None:
    """Build the vega bundle now (or read it from the cache), so processes started later
    (notebook kernels) find it in the cache instead of each building it."""
    _packed_bundle()


def _cache_folder() -> Path:
    """``$XDG_CACHE_HOME/evalnb`` (default ``~/.cache/evalnb``).

    Example:
        >>> _cache_folder().name
        'evalnb'
    """
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "evalnb"


def spec_of(chart: alt.TopLevelMixin | dict[str, Any]) -> dict[str, Any]:
    """The Vega-Lite spec of an altair chart (built under the theme enabled now), or the spec.

    Example:
        >>> spec_of({"mark": "bar"}), spec_of(alt.Chart().mark_bar())["mark"]["type"]
        ({'mark': 'bar'}, 'bar')
    """
    return chart if isinstance(chart, dict) else chart.to_dict()


def chart_html(chart: alt.TopLevelMixin | dict[str, Any], *, bundle: bool = True) -> str:
    """One chart (an altair chart or a Vega-Lite spec) as an HTML fragment that draws offline.

    The fragment is a ``<div class="evalnb-chart">``, the packed bundle in a
    ``<script type="application/octet-stream">`` and a module script that draws the
    chart with vega-embed (SVG renderer). With ``bundle=False`` the bundle is left out
    and the chart uses the one an earlier fragment of the same page carries (a report
    with many charts carries it once). A chart that fails to draw says so in its div.
    Needs the ``export`` extra (vl-convert), else :class:`~evalnb.errors.SetupError`.

    Example:
        >>> "vegaEmbed" in chart_html({"mark": "bar"})
        True
    """
    spec = json.dumps(spec_of(chart)).replace("</", "<\\/")
    uid = f"evalnb-{uuid.uuid4().hex}"
    packed = (
        f'<script type="application/octet-stream" class="evalnb-vega-bundle">'
        f"{_packed_bundle()}</script>\n"
        if bundle
        else ""
    )
    return (
        f'<div id="{uid}" class="evalnb-chart"></div>\n{packed}'
        f'<script type="module">{_LOADER % {"id": uid, "spec": spec}}</script>'
    )


def html_page(title: str, *parts: str, style: str = "") -> str:
    """A self-contained HTML document: ``title`` and the HTML ``parts`` in order.

    Example:
        >>> html_page("R & D", "<p>hi</p>").startswith("<!DOCTYPE html>")
        True
    """
    body = "\n".join(parts)
    return (
        '<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        f"<title>{html.escape(title)}</title>\n"
        "<style>body {font-family: DejaVu Sans, Helvetica, Arial, sans-serif; margin: 24px;"
        " color: #222} .evalnb-chart {margin: 12px 0 28px}"
        f"{style}</style>\n</head>\n<body>\n{body}\n</body>\n</html>\n"
    )


def renderer(spec: dict[str, Any], **_: Any) -> dict[str, str]:
    """The altair renderer: a chart's spec as an offline HTML fragment (``text/html``).

    Example:
        >>> list(renderer({"mark": "bar"}))
        ['text/html']
    """
    return {"text/html": chart_html(spec)}


def enable_offline() -> None:
    """Draw every altair chart of this session offline (JupyterLab, Notebook, VS Code, exports).

    Registers the ``evalnb-offline`` renderer with altair on first call and makes it the
    active one: each chart then shows as a :func:`chart_html` fragment carrying the
    vega libraries inline, loading nothing from a CDN. Needs the ``export`` extra when a
    chart is drawn.

    Returns
    -------
    None
        The renderer ``evalnb-offline`` becomes altair's active renderer.

    See Also
    --------
    evalnb.charts.enable_theme : Draw every chart of the session in the evalnb theme.

    Examples
    --------
    >>> enable_offline()
    >>> alt.renderers.active
    'evalnb-offline'
    >>> _ = alt.renderers.enable("default")  # back to altair's own
    """
    if RENDERER not in alt.renderers.names():
        alt.renderers.register(RENDERER, renderer)
    alt.renderers.enable(RENDERER)
