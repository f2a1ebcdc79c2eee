"""The notebooks in a real JupyterLab, opened in headless Chromium with no network.

A JupyterLab server on 127.0.0.1 (temporary config, runtime, settings and workspaces
folders) serves copies of notebooks 01 and 07; their kernels read the test session's demo
runs (``EVALNB_RUNS``, made once). Chromium reaches
nothing but 127.0.0.1: every other host name resolves to nothing and every other request
goes to a proxy that does not exist. Each notebook opens in a fresh workspace (so no
restored tab gets in the way), runs all its cells through JupyterLab's own
``notebook:run-all-cells`` command (started, never awaited), and then every chart must
have drawn (vega's SVG in each ``.evalnb-chart``, no "Error loading script"), no cell
may show an error, and in 07 the widgets must be live (widget views in the page, no
"Loading widget"), the drill-down chart included. Every wait is bounded.

Needs Debian's ``chromium`` and ``chromium-driver``, selenium and jupyterlab (the
``test`` extra); without them the test skips and says why.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
import uuid
from collections.abc import Iterator
from typing import Any

import pytest

pytestmark = pytest.mark.slow

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
DRIVER = shutil.which("chromedriver")
webdriver = pytest.importorskip("selenium.webdriver", reason="selenium is not installed")
pytest.importorskip("jupyterlab", reason="jupyterlab is not installed (the test extra has it)")
if CHROMIUM is None or DRIVER is None:
    pytest.skip(
        "no Chromium here: apt-get install -y chromium chromium-driver", allow_module_level=True
    )

NOTEBOOKS = ("01_overview.ipynb", "07_explore.ipynb")

NOTEBOOK_READY = """
const app = window.jupyterapp;
const panel = app && app.shell.currentWidget;
if (!panel || !panel.context || panel.context.path !== arguments[0]) return "no notebook";
const kernel = panel.sessionContext.session && panel.sessionContext.session.kernel;
if (!kernel || kernel.status !== "idle") return "kernel " + (kernel ? kernel.status : "none");
return "ready";
"""

STATE = """
const panel = window.jupyterapp.shell.currentWidget;
const code = panel.content.widgets.filter((c) => c.model.type === "code");
const node = panel.content.node;
const text = node.innerText;
return {
  kernel: panel.sessionContext.session.kernel.status,
  cells: code.length,
  run: code.filter((c) => c.model.executionCount !== null).length,
  busy: node.querySelectorAll(".jp-InputArea-prompt").length
    && [...node.querySelectorAll(".jp-InputArea-prompt")].some((p) => p.innerText.includes("*")),
  errors: [...node.querySelectorAll("[data-mime-type='application/vnd.jupyter.error']")]
    .map((e) => e.innerText.slice(0, 2000)),
  charts: node.querySelectorAll(".evalnb-chart").length,
  drawn: node.querySelectorAll(".evalnb-chart svg.marks").length,
  failed: node.querySelectorAll(".evalnb-chart-error").length,
  widgets: node.querySelectorAll(".jupyter-widgets.widget-container, .widget-dropdown").length,
  widget_charts: node.querySelectorAll(".jupyter-widgets svg.marks, .widget-vbox svg.marks")
    .length,
  loading: text.includes("Loading widget"),
  script_error: text.includes("Error loading script"),
};
"""


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def wait_for(what: str, check: Any, timeout: float) -> Any:
    """Poll ``check()`` (giving ``(done, state)``) until done; fail naming ``what`` and the
    last state after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while True:
        done, state = check()
        if done:
            return state
        if time.monotonic() > deadline:
            pytest.fail(f"timed out after {timeout} s waiting for {what}; last: {state!r}")
        time.sleep(0.25)


@pytest.fixture(scope="module")
def lab(tmp_path_factory) -> Iterator[str]:
    """A JupyterLab on 127.0.0.1 serving notebooks 01 and 07, on the session's demo runs
    (``EVALNB_RUNS``, which its kernels inherit): its URL."""
    from evalnb._demo import ensure_demo_runs
    from evalnb._resources import notebooks_path

    root = tmp_path_factory.mktemp("lab")
    for name in NOTEBOOKS:
        shutil.copy(notebooks_path() / name, root / name)
    port, token = free_port(), uuid.uuid4().hex
    env = {
        **os.environ,
        "JUPYTER_CONFIG_DIR": str(root / ".jupyter"),
        "JUPYTER_RUNTIME_DIR": str(root / ".runtime"),
        "IPYTHONDIR": str(root / ".ipython"),
    }
    log = (root / "lab.log").open("wb")
    server = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "jupyterlab",
            "--no-browser",
            "--ServerApp.ip=127.0.0.1",
            f"--ServerApp.port={port}",
            "--ServerApp.port_retries=0",
            f"--IdentityProvider.token={token}",
            f"--ServerApp.root_dir={root}",
            "--LabApp.expose_app_in_browser=True",
            f"--LabApp.workspaces_dir={root / '.workspaces'}",
            f"--LabApp.user_settings_dir={root / '.settings'}",
            "--LabApp.news_url=",
            "--LabApp.extension_manager=readonly",
            "--allow-root",  # CI containers run as root
        ],
        cwd=root,
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    url = f"http://127.0.0.1:{port}"

    def up() -> tuple[bool, str]:
        if server.poll() is not None:
            pytest.fail(f"JupyterLab exited: {(root / 'lab.log').read_text()[-3000:]}")
        try:
            with urllib.request.urlopen(f"{url}/api/status?token={token}", timeout=2) as r:
                return r.status == 200, f"HTTP {r.status}"
        except OSError as exc:
            return False, str(exc)

    try:
        ensure_demo_runs(os.environ["EVALNB_RUNS"])  # while the server starts
        wait_for("JupyterLab to answer", up, 120)
        yield f"{url}|{token}"
    finally:
        server.terminate()
        try:
            server.wait(15)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait(5)
        log.close()


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for arg in (
        "--headless=new",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-dev-shm-usage",
        "--window-size=1400,1000",
        "--proxy-server=http://127.0.0.1:9",  # anything not on loopback goes nowhere
        "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1",
    ):
        options.add_argument(arg)
    driver = webdriver.Chrome(options=options, service=webdriver.ChromeService(DRIVER))
    driver.set_script_timeout(10)
    yield driver
    driver.quit()


@pytest.mark.parametrize("name", NOTEBOOKS)
def test_the_notebook_runs_in_jupyterlab_and_draws_offline(lab, browser, name):
    url, token = lab.split("|")
    workspace = uuid.uuid4().hex  # fresh: nothing restored, this notebook is the current tab
    browser.get(f"{url}/lab/workspaces/{workspace}/tree/{name}?reset&token={token}")

    def ready() -> tuple[bool, str]:
        state = browser.execute_script(NOTEBOOK_READY, name)
        return state == "ready", state

    wait_for("the notebook and its kernel", ready, 120)
    # Started, never awaited: the promise resolves only when every cell ran.
    browser.execute_script(
        "window.jupyterapp.commands.execute('notebook:run-all-cells'); return true;"
    )

    def finished() -> tuple[bool, dict]:
        state = browser.execute_script(STATE)
        done = (
            state["run"] == state["cells"]
            and not state["busy"]
            and state["kernel"] == "idle"
            and state["drawn"] + state["failed"] >= state["charts"]
            and (name.startswith("01") or (state["widget_charts"] and not state["loading"]))
        )
        return done or bool(state["errors"]), state

    state = wait_for("every cell to run and every chart to draw", finished, 240)
    assert state["errors"] == []
    assert not state["script_error"] and state["failed"] == 0
    assert state["drawn"] == state["charts"]
    if name.startswith("01"):
        assert state["charts"] >= 5
    else:
        assert state["widgets"] >= 3 and not state["loading"]
        assert state["widget_charts"] >= 1  # the picker's clickable heatmap drew
    reached = browser.execute_script(
        "return performance.getEntriesByType('resource').map((e) => e.name)"
        ".filter((u) => !/^(https?:\\/\\/127\\.0\\.0\\.1[:/]|data:|blob:)/.test(u));"
    )
    assert reached == [], "the page fetched something from the web"
