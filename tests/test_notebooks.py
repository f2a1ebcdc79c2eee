"""The analysis notebooks run top to bottom, on real published runs and on fresh demo runs."""

from __future__ import annotations

import json
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))
FIXTURES = ROOT.parent / "shared" / "fixtures" / "bashkit-eval"

pytestmark = pytest.mark.slow


def execute(path: Path, runs: str, monkeypatch: pytest.MonkeyPatch) -> nbformat.NotebookNode:
    """Run a notebook in a fresh kernel (which inherits EVALNB_RUNS) from its own folder."""
    monkeypatch.setenv("EVALNB_RUNS", runs)
    nb = nbformat.read(path, as_version=4)
    NotebookClient(nb, timeout=60, resources={"metadata": {"path": str(path.parent)}}).execute()
    return nb


def test_there_are_seven_notebooks_committed_without_outputs():
    assert [p.stem for p in NOTEBOOKS] == [
        "01_overview",
        "02_tool_calls",
        "03_context_growth",
        "04_cross_model",
        "05_guidance",
        "06_trends",
        "07_explore",
    ]
    for path in NOTEBOOKS:
        nb = nbformat.read(path, as_version=4)
        nbformat.validate(nb)
        code = [c for c in nb.cells if c.cell_type == "code"]
        assert all(not c.outputs and c.execution_count is None for c in code), path.name
        assert code[0].metadata.get("tags") == ["parameters"], path.name
        assert 'os.environ.get("EVALNB_RUNS", "runs/demo/*")' in code[0].source


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_notebook_runs_on_the_published_bashkit_eval_results(path, monkeypatch):
    if not list(FIXTURES.glob("*.json")):
        pytest.skip("../shared/fixtures/bashkit-eval is absent")
    nb = execute(path, str(FIXTURES / "*.json"), monkeypatch)
    outputs = [out for cell in nb.cells for out in cell.get("outputs", [])]
    shown = json.dumps([out.get("data", {}) for out in outputs])
    if path.stem == "05_guidance":  # the published runs used no guidance: nothing to compare
        assert "No runs to analyse." in shown and "No runs with a guidance version." in shown
        return
    assert "claude-haiku-4-5" in shown  # the real runs' figures reached the outputs


def test_notebooks_make_the_demo_runs_when_none_exist(tmp_path, monkeypatch):
    pattern = tmp_path / "runs" / "demo" / "*"
    nb = execute(ROOT / "notebooks" / "01_overview.ipynb", str(pattern), monkeypatch)
    shown = json.dumps([o.get("data", {}) for c in nb.cells for o in c.get("outputs", [])])
    assert "sim/careful (simulated)" in shown
    assert (tmp_path / "runs" / "demo" / "reference" / "run.json").exists()


def test_widgets_fall_back_to_static_html_under_nbclient(monkeypatch):
    if not list(FIXTURES.glob("*.json")):
        pytest.skip("../shared/fixtures/bashkit-eval is absent")
    nb = execute(ROOT / "notebooks" / "07_explore.ipynb", str(FIXTURES / "*.json"), monkeypatch)
    outputs = [o for c in nb.cells if "widgets." in c.source for o in c.get("outputs", [])]
    assert len(outputs) == 3
    for out in outputs:
        assert "text/html" in out["data"]
        assert "application/vnd.jupyter.widget-view+json" not in out["data"]
