"""Offline rendering in a real browser: exported HTML opened in headless Chromium, network off.

Every chart must draw (vega's SVG inside each ``.evalnb-chart``), none may say "Error
loading script" or fail, and no page may reference a script or stylesheet on the web.
Needs Debian's ``chromium`` and ``chromium-driver`` (``.ci/run`` installs them) and
selenium (the ``test`` extra); without them the tests skip and say why.
"""

from __future__ import annotations

import re
import shutil
import time
from pathlib import Path

import pytest

from evalnb._present import charts
from tests.test_charts import make_runs

pytestmark = pytest.mark.filterwarnings("ignore:no price for model")

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
DRIVER = shutil.which("chromedriver")
webdriver = pytest.importorskip("selenium.webdriver", reason="selenium is not installed")
if CHROMIUM is None or DRIVER is None:
    pytest.skip(
        "no Chromium here: apt-get install -y chromium chromium-driver", allow_module_level=True
    )

ON_THE_WEB = re.compile(r"<(?:script|link)[^>]+(?:src|href)=[\"']?(?:https?:)?//", re.I)


@pytest.fixture(scope="module")
def browser():
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for arg in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"):
        options.add_argument(arg)
    options.add_argument("--proxy-server=http://127.0.0.1:9")  # nothing leaves the machine
    options.add_argument("--proxy-bypass-list=<-loopback>")
    driver = webdriver.Chrome(options=options, service=webdriver.ChromeService(DRIVER))
    driver.execute_cdp_cmd("Network.enable", {})
    driver.execute_cdp_cmd(
        "Network.emulateNetworkConditions",
        {"offline": True, "latency": 0, "downloadThroughput": -1, "uploadThroughput": -1},
    )
    yield driver
    driver.quit()


def drawn(browser, page: Path, timeout: float = 60) -> dict[str, int]:
    """Open ``page``, wait until every chart drew or failed; count charts, drawn and failed."""
    browser.get(page.resolve().as_uri())
    count = """return {
        charts: document.querySelectorAll('.evalnb-chart').length,
        drawn: document.querySelectorAll('.evalnb-chart svg.marks').length,
        failed: document.querySelectorAll('.evalnb-chart-error').length,
        text: document.body.innerText};"""
    deadline = time.monotonic() + timeout
    while True:
        state = browser.execute_script(count)
        if state["drawn"] + state["failed"] >= state["charts"] or time.monotonic() > deadline:
            return state
        time.sleep(0.25)


def assert_all_drawn(state: dict, expected: int) -> None:
    assert state["charts"] == expected
    assert state["failed"] == 0, state["text"][:2000]
    assert state["drawn"] == expected
    assert "Error loading script" not in state["text"]


def test_saved_chart_html_draws_with_the_network_off(browser, tmp_path):
    runs = make_runs()
    for name in ("category_heatmap", "tool_success", "trend"):
        page = charts.save(charts.CHARTS[name](runs), tmp_path / f"{name}.html")
        assert not ON_THE_WEB.search(page.read_text())
        assert_all_drawn(drawn(browser, page), 1)


@pytest.mark.slow
def test_the_demo_notebooks_exported_as_html_draw_every_chart_offline(browser, demo):
    done, out = demo  # the notebooks `evalnb demo` executed on its runs and saved as HTML
    assert done.returncode == 0, done.stderr[-2000:]
    pages = sorted((out / "notebooks").glob("*.html"))
    assert len(pages) == 7
    for page in pages:
        text = page.read_text()
        assert not ON_THE_WEB.search(text), page.name
        expected = text.count('class="evalnb-chart"')
        assert expected >= (5 if page.stem.startswith("01") else 0)
        assert_all_drawn(drawn(browser, page), expected)


def test_report_html_draws_every_chart_offline_from_one_inlined_bundle(browser, tmp_path):
    from evalnb._present.report_html import write_report_html

    page = write_report_html(make_runs(), tmp_path)
    text = page.read_text()
    assert not ON_THE_WEB.search(text)
    assert text.count('class="evalnb-vega-bundle"') == 1
    assert_all_drawn(drawn(browser, page), len(charts.CHARTS))


FIND_CELL = """
const [spec, wanted, done] = arguments;
const el = document.createElement("div");
el.id = "evalnb-probe";
document.body.prepend(el);
vegaEmbed(el, spec, {renderer: "svg", actions: false}).then((api) => {
  window.__probe = api;
  const hit = [];
  (function walk(node) {
    for (const item of node.items || []) {
      const d = item.datum || {};
      if (item.mark && item.mark.marktype === "rect" && item.mark.interactive !== false
          && Object.entries(wanted).every(([k, v]) => d[k] === v)) hit.push(item);
      walk(item);
    }
  })(api.view.scenegraph().root);
  const [ox, oy] = api.view.origin();
  const box = el.querySelector("svg").getBoundingClientRect();
  const b = hit[0].bounds;
  done({found: hit.length, x: ox + (b.x1 + b.x2) / 2 - box.width / 2,
        y: oy + (b.y1 + b.y2) / 2 - box.height / 2});
});
"""
SELECTION = f"""return JSON.parse(JSON.stringify({{
  value: __probe.view.signal("{charts.PICK}"),
  store: __probe.view.data("{charts.PICK}_store")}}))"""


def test_a_real_click_on_a_heatmap_cell_lists_its_tasks_in_the_drill_down(browser, tmp_path):
    """The selection a click makes in Chromium, given to the widget as JupyterChart's JS does."""
    import altair as alt
    from selenium.webdriver.common.action_chains import ActionChains

    from evalnb._present import widgets
    from tests.test_widgets import attempts_by_filter, click, pooled_runs

    runs = pooled_runs()
    chart = charts.category_heatmap(runs)
    page = charts.save(chart, tmp_path / "heatmap.html")
    assert_all_drawn(drawn(browser, page), 1)
    with alt.theme.enable(charts.THEME):
        spec = chart.to_dict()
    browser.set_script_timeout(30)
    cell = browser.execute_async_script(
        FIND_CELL, spec, {"run_label": "m · 2 runs", "category": "files"}
    )
    assert cell["found"] == 1
    svg = browser.find_element("css selector", "#evalnb-probe svg")
    ActionChains(browser).move_to_element_with_offset(
        svg, round(cell["x"]), round(cell["y"])
    ).click().perform()
    deadline = time.monotonic() + 10
    while not (made := browser.execute_script(SELECTION))["store"]:
        assert time.monotonic() < deadline, "the click selected nothing"
        time.sleep(0.1)
    assert made["value"]["vlPoint"]["or"] == [{"run_label": "m · 2 runs", "category": "files"}]
    box = widgets.drill_down(runs, "category_heatmap", static=False)
    clickable, _, attempts, view = box.children
    click(clickable, made["value"], made["store"])
    listed = [(*value, label.endswith("(pass)")) for label, value in attempts.options]
    assert sorted(listed) == attempts_by_filter(runs, ["r1", "r2"], "files")
    assert "FAILED" in view.value
