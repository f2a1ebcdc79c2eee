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

from evalnb.present import charts
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
def test_the_demo_notebooks_exported_as_html_draw_every_chart_offline(browser, tmp_path):
    from evalnb.demo import ensure_demo_runs, execute_notebooks
    from evalnb.resources import notebooks_path

    runs_dir = tmp_path / "runs" / "demo"
    ensure_demo_runs(str(runs_dir / "*"))
    chosen = [notebooks_path() / name for name in ("01_overview.ipynb", "07_explore.ipynb")]
    out = execute_notebooks(runs_dir, tmp_path / "html", chosen)
    for page in sorted(out.glob("*.html")):
        text = page.read_text()
        assert not ON_THE_WEB.search(text), page.name
        expected = text.count('class="evalnb-chart"')
        assert expected >= (5 if page.stem.startswith("01") else 0)
        assert_all_drawn(drawn(browser, page), expected)


def test_report_html_draws_every_chart_offline_from_one_inlined_bundle(browser, tmp_path):
    from evalnb.present.report_html import write_report_html

    page = write_report_html(make_runs(), tmp_path)
    text = page.read_text()
    assert not ON_THE_WEB.search(text)
    assert text.count('class="evalnb-vega-bundle"') == 1
    assert_all_drawn(drawn(browser, page), len(charts.CHARTS))
