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


@pytest.mark.slow
def test_notebooks_in_a_real_jupyterlab_draw_charts_and_live_widgets_offline(tmp_path):
    """JupyterLab serves on 127.0.0.1; the browser can reach nothing else (a dead proxy)."""
    pytest.importorskip("jupyterlab", reason="jupyterlab is not installed")
    import socket
    import subprocess
    import sys

    from evalnb.demo import ensure_demo_runs
    from evalnb.resources import notebooks_path

    runs_dir = tmp_path / "runs" / "demo"
    ensure_demo_runs(str(runs_dir / "*"))
    for name in ("01_overview.ipynb", "07_explore.ipynb"):
        shutil.copy(notebooks_path() / name, tmp_path / name)
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    env = {**__import__("os").environ, "EVALNB_RUNS": str(runs_dir / "*")}
    server = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "jupyterlab",
            "--no-browser",
            "--allow-root",
            "--expose-app-in-browser",
            "--LabApp.extension_manager=readonly",
            f"--LabApp.workspaces_dir={tmp_path / 'workspaces'}",  # not shared with other labs
            f"--LabApp.user_settings_dir={tmp_path / 'settings'}",
            f"--ServerApp.port={port}",
            "--ServerApp.ip=127.0.0.1",
            "--IdentityProvider.token=evalnb",
            f"--ServerApp.root_dir={tmp_path}",
            "--LabApp.news_url=None",
            "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate",
        ],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=(tmp_path / "jupyterlab.log").open("w"),
    )
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for arg in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"):
        options.add_argument(arg)
    options.add_argument("--proxy-server=http://127.0.0.1:9")  # loopback only
    options.add_argument("--window-size=1400,5000")
    driver = webdriver.Chrome(options=options, service=webdriver.ChromeService(DRIVER))
    try:
        _wait_for_port(port)
        for name, charts_expected, widgets_expected in (
            ("01_overview.ipynb", 5, False),
            ("07_explore.ipynb", 0, True),
        ):
            driver.get(f"http://127.0.0.1:{port}/lab/tree/{name}?token=evalnb")
            _until(
                driver,
                "return !!(window.jupyterapp && window.jupyterapp.shell"
                " && document.querySelector('.jp-Notebook .jp-Cell'))",
                90,
            )
            _until(
                driver,
                "return window.jupyterapp.shell.currentWidget"
                " && window.jupyterapp.shell.currentWidget.sessionContext"
                " && window.jupyterapp.shell.currentWidget.sessionContext.session"
                " && !!window.jupyterapp.shell.currentWidget.sessionContext.session.kernel",
                90,
            )
            driver.execute_script("window.jupyterapp.commands.execute('notebook:run-all-cells')")
            state_js = """
                const nb = document.querySelector('.jp-Notebook');
                const prompts = [...nb.querySelectorAll('.jp-InputPrompt')].map(p => p.innerText);
                return {
                  busy: prompts.some(p => p.includes('*')) || !prompts.some(p => /\\d/.test(p)),
                  charts: nb.querySelectorAll('.evalnb-chart').length,
                  drawn: nb.querySelectorAll('.evalnb-chart svg.marks').length,
                  failed: nb.querySelectorAll('.evalnb-chart-error').length,
                  errors: nb.querySelectorAll('[data-mime-type="application/vnd.jupyter.stderr"]'
                    + ', .jp-OutputArea-output[data-mime-type*="error"]').length,
                  dropdowns: nb.querySelectorAll('.widget-dropdown select').length,
                  text: nb.innerText};"""
            deadline = time.monotonic() + 600  # two cores shared: loading takes a while
            while True:
                state = driver.execute_script(state_js)
                done = not state["busy"] and state["drawn"] + state["failed"] >= state["charts"]
                if (done and state["charts"] >= charts_expected) or time.monotonic() > deadline:
                    break
                time.sleep(1)
            if state["busy"]:
                driver.save_screenshot(str(tmp_path / f"{name}.png"))
            assert not state["busy"], f"{name} did not finish (see {tmp_path})"
            assert "Traceback" not in state["text"]
            assert state["failed"] == 0 and "Error loading script" not in state["text"]
            assert state["charts"] >= charts_expected and state["drawn"] == state["charts"]
            if widgets_expected:  # picker 4, task browser 2, comparer 3 (+ its task list)
                _until(
                    driver,
                    "return document.querySelectorAll("
                    "'.jp-Notebook .widget-dropdown select').length >= 9",
                    120,
                )
                state = driver.execute_script(state_js)
                assert "Loading widget" not in state["text"]
    finally:
        driver.quit()
        server.terminate()
        server.wait(timeout=30)


def _until(driver, script: str, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while not driver.execute_script(script):
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for: {script}")
        time.sleep(0.5)


def _wait_for_port(port: int, timeout: float = 60) -> None:
    import socket

    deadline = time.monotonic() + timeout
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return
        except OSError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.5)
