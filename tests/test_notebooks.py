"""The analysis notebooks run unchanged on every kind of input a user points them at.

``evalnb demo`` runs each notebook once on the demo runs (tests/conftest.py's ``demo``
fixture, whose process fails when a notebook's cell raises). Here the same notebooks run
once more, all of them one after the other in one kernel, on the other inputs: the
published bashkit-eval results as they are, and one folder holding runs imported
(``evalnb import``'s code) from each fixture format in ``../shared/fixtures``, as a user
would point them there with ``EVALNB_RUNS``. Skipped when the fixtures are absent.
"""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import nbformat
import polars as pl
import pytest
from nbclient import NotebookClient

from evalnb._analysis.load import load
from evalnb._cli.imports import import_format
from evalnb._resources import notebooks_path
from tests.conftest import made_once

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT.parent / "shared" / "fixtures"
NOTEBOOKS = sorted(notebooks_path().glob("*.ipynb"))
PUBLISHED = FIXTURES / "bashkit-eval" / "*.json"
INPUTS = {
    "bashkit-eval": ["bashkit-eval/*.json"],
    "scripting-eval": ["bashkit-scripting-eval/*.json"],
    "mira": ["mira/20260626T043009Z-34f5"],
    "llm-tool-test": ["llm-tool-test/create_smoke"],
    "llm-tool-test-db": ["llm-tool-test/results-llm_test_runs.jsonl"],
    "terminal-bench": ["terminal-bench"],
    "onetool-bench": ["onetool-bench/*.csv"],
    "inspect": ["inspect/*.json", "inspect/*.eval"],
    "harbor": ["atif/xdotli-tbench/*/example_runs/*"],
    "harbor-trial": ["atif/raidar/*/runs/*"],
    "atif": ["atif/harbor-golden/*/*.json"],
    "codex": ["codex/localpush-rollouts/raw/sessions/*.jsonl"],
    "codex-exec-json": ["codex/agentcmd-exec-json/*.jsonl"],
    "gemini-cli": ["gemini-cli/*.json"],
    "swe-agent": ["swe-agent/SWE-agent/trajectories/*/*.traj"],
    "openhands": ["openhands/runtime-trajs/*.json"],
    "otel": ["otel/ms-agent-framework/traces.jsonl", "otel/openinference-fixtures/vercel-v6"],
}


SUITES_APART = ("mira", "terminal-bench", "inspect", "harbor", "harbor-trial")
"""Formats whose runs name their own dataset: each is also analysed alone (see below)."""


pytestmark = pytest.mark.slow


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


@pytest.fixture(scope="module")
def imported(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """``all/``: every format's runs together; ``<key>/``: the same runs of one format.
    Made once per session, shared by the xdist workers."""
    if not FIXTURES.is_dir():
        pytest.skip("../shared/fixtures is absent")

    def make(out: Path) -> None:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # partial runs, disagreements: their own tests
            for key, patterns in INPUTS.items():
                paths = [str(p) for pattern in patterns for p in sorted(FIXTURES.glob(pattern))]
                assert paths, key
                import_format(key, paths, out / "all")
                if key in SUITES_APART:
                    import_format(key, paths, out / key)
            claude_code = sorted(str(p) for p in (FIXTURES / "claude-code").glob("*.jsonl"))
            import_format("claude-code", claude_code, out / "all")

    return made_once(tmp_path_factory, "imported", make)


def test_every_format_is_in_the_folder(imported):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        sources = set(load(imported / "all" / "*").runs.get_column("source").drop_nulls())
    expected = {
        "bashkit-eval",
        "bashkit-scripting-eval",
        "bashkit-mira",
        "llm-tool-test",
        "terminal-bench",
        "onetool-bench",
        "inspect",
        "claude-code",
        "harbor",
        "atif",
        "codex",
        "gemini-cli",
        "swe-agent",
        "openhands",
        "otel",
    }
    assert expected <= {s.split(":")[0] for s in sources}, sources


@pytest.fixture(scope="module")
def executed(imported: Path, tmp_path_factory: pytest.TempPathFactory) -> nbformat.NotebookNode:
    """Every notebook's cells, unchanged and in order, one notebook after the other in one
    kernel (each notebook starts from its own imports and RUNS, so none leans on another),
    once per input: the published results, every format's runs together, then each
    format whose runs name their own dataset alone (most notebooks analyse one suite, the
    dataset with the most runs), ``EVALNB_RUNS`` set between passes as a user would. Each
    cell's metadata names its notebook and its pass. Executed once per session, shared
    by the xdist workers (the tests using it would otherwise each execute it on their
    own worker)."""
    if not list(PUBLISHED.parent.glob(PUBLISHED.name)):
        pytest.skip("../shared/fixtures/bashkit-eval is absent")

    def make(folder: Path) -> None:
        passes = {"published": str(PUBLISHED)}
        passes |= {name: str(imported / name / "*") for name in ("all", *SUITES_APART)}
        together = nbformat.v4.new_notebook()
        for name, runs in passes.items():
            setting = f"import os\nos.environ['EVALNB_RUNS'] = {runs!r}"
            together.cells.append(nbformat.v4.new_code_cell(setting, metadata={"notebook": None}))
            for path in NOTEBOOKS:
                for cell in nbformat.read(path, as_version=4).cells:
                    if cell.cell_type == "code":
                        cell.metadata["notebook"] = path.stem
                        cell.metadata["runs"] = name
                        cell.id = f"{name}-{len(together.cells)}"  # each pass's copy its own
                        together.cells.append(cell)
        client = NotebookClient(
            together, timeout=60, resources={"metadata": {"path": str(NOTEBOOKS[0].parent)}}
        )
        client.execute()  # a cell that raises fails the tests, naming the cell
        nbformat.write(together, folder / "together.ipynb")

    folder = made_once(tmp_path_factory, "executed", make)
    return nbformat.read(folder / "together.ipynb", as_version=4)


def shown(cells: list[nbformat.NotebookNode]) -> str:
    """What the cells displayed, as JSON text."""
    return json.dumps([o.get("data", {}) for c in cells for o in c.get("outputs", [])])


def cells_of(executed: nbformat.NotebookNode, notebook: str, runs: str) -> list:
    """The executed cells of one notebook in one pass."""
    meta = [(c, c.metadata) for c in executed.cells]
    return [c for c, m in meta if m.get("notebook") == notebook and m.get("runs") == runs]


def test_every_notebook_runs_on_every_input(executed):
    ran = {(c.metadata.get("runs"), c.metadata["notebook"]) for c in executed.cells}
    assert len(ran) == len(NOTEBOOKS) * (2 + len(SUITES_APART)) + 1
    assert all(c.execution_count for c in executed.cells)


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_notebook_shows_the_published_bashkit_eval_results(executed, path):
    text = shown(cells_of(executed, path.stem, "published"))
    if path.stem == "05_guidance":  # the published runs used no guidance: nothing to compare
        assert "No runs to analyse." in text and "No runs with a guidance version." in text
        return
    assert "claude-haiku-4-5" in text  # the real runs' figures reached the outputs


def test_widgets_fall_back_to_static_html_under_nbclient(executed):
    cells = [c for c in cells_of(executed, "07_explore", "published") if "widgets." in c.source]
    outputs = [o for c in cells for o in c.get("outputs", [])]
    assert len(outputs) == 3
    for out in outputs:
        assert "text/html" in out["data"]
        assert "application/vnd.jupyter.widget-view+json" not in out["data"]


def test_the_overview_of_the_imported_runs_shows_every_model_of_its_suite(executed, imported):
    # the overview analyses one suite: the runs without guidance of the dataset with the
    # most runs (then the most tasks); recounted here from the runs table
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        table = load(imported / "all" / "*").runs.filter(pl.col("guidance").is_null())
    counts = [
        (-len(group), -group.get_column("task_count").sum(), dataset or "")
        for (dataset,), group in table.group_by("dataset")
    ]
    _, _, dataset = min(counts)
    suite = table.filter(pl.col("dataset").fill_null("") == dataset)
    text = shown(cells_of(executed, "01_overview", "all"))
    missing = [m for m in suite.get_column("model").unique().to_list() if m not in text]
    assert not missing, f"models of the suite absent from the overview: {missing}"
