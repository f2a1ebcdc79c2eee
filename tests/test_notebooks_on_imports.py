"""The packaged notebooks run unchanged on runs imported from every foreign format.

One folder holds runs imported (``evalnb import``'s code) from each fixture format in
``../shared/fixtures``; every notebook runs top to bottom on it, as a user would point
it there with ``EVALNB_RUNS``. Skipped when the fixtures are absent.
"""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import nbformat
import polars as pl
import pytest
from nbclient import NotebookClient

from evalnb.analysis.load import load
from evalnb.cli.imports import import_format
from evalnb.resources import notebooks_path

FIXTURES = Path(__file__).parents[2] / "shared" / "fixtures"
NOTEBOOKS = sorted(notebooks_path().glob("*.ipynb"))
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


@pytest.fixture(scope="module")
def imported(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """``all/``: every format's runs together; ``<key>/``: the same runs of one format."""
    if not FIXTURES.is_dir():
        pytest.skip("../shared/fixtures is absent")
    out = tmp_path_factory.mktemp("imported")
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
    return out


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


def test_every_notebook_runs_unchanged_on_every_imported_format(imported, monkeypatch):
    # the notebooks' cells, unchanged and in order, one notebook after the other in one
    # kernel (each notebook starts from its own imports and RUNS, so none leans on another;
    # one kernel keeps the test well under a minute). Most notebooks analyse one suite, the
    # dataset with the most runs, so the formats whose runs name their own dataset are
    # run again alone, EVALNB_RUNS set between passes as a user would.
    monkeypatch.setenv("EVALNB_RUNS", str(imported / "all" / "*"))
    together = nbformat.v4.new_notebook()
    for folder in ("all", *SUITES_APART):
        setting = f"import os\nos.environ['EVALNB_RUNS'] = {str(imported / folder / '*')!r}"
        together.cells.append(nbformat.v4.new_code_cell(setting, metadata={"notebook": None}))
        for path in NOTEBOOKS:
            for cell in nbformat.read(path, as_version=4).cells:
                if cell.cell_type == "code":
                    cell.metadata["notebook"] = path.stem
                    cell.metadata["runs"] = folder
                    together.cells.append(cell)
    client = NotebookClient(
        together, timeout=60, resources={"metadata": {"path": str(NOTEBOOKS[0].parent)}}
    )
    client.execute()  # a cell that raises fails the test, naming the cell
    ran = {(c.metadata.get("runs"), c.metadata["notebook"]) for c in together.cells}
    assert len(ran) == len(NOTEBOOKS) * (1 + len(SUITES_APART)) + 1
    assert all(c.execution_count for c in together.cells)
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
    overview = [
        c
        for c in together.cells
        if c.metadata["notebook"] == "01_overview" and c.metadata["runs"] == "all"
    ]
    shown = json.dumps([o.get("data", {}) for c in overview for o in c.get("outputs", [])])
    missing = [m for m in suite.get_column("model").unique().to_list() if m not in shown]
    assert not missing, f"models of the suite absent from the overview: {missing}"
