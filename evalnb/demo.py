"""``evalnb demo``: the whole pipeline offline, from the built-in suite to charts and notebooks.

1. runs ``data/tasks/bash.jsonl`` with the reference agent and the simulated
   personas (``sim/careful``, ``sim/hasty``, ``sim/flailing``) into ``runs/demo/``;
2. writes ``reports/demo/``: ``report.md``, ``report.json``, ``comparison.md``,
   every chart as PNG and SVG under ``charts/``, and the executed notebooks as HTML
   under ``notebooks/``.

The simulated agents are synthetic: their results show what the analysis looks like
on realistic data, not how any real model performs.

Example:
    >>> DEMO_MODELS[0]
    'reference'
"""

from __future__ import annotations

import asyncio
import glob
import os
import shutil
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DATASET = ROOT / "data" / "tasks" / "bash.jsonl"
DEMO_MODELS = ["reference", "sim/careful", "sim/hasty", "sim/flailing"]
DEMO_SEED = 7


def demo_run_ids() -> list[str]:
    """Fixed run ids so the demo folder is stable: ``reference``, ``sim-careful``, ...

    Example:
        >>> demo_run_ids()
        ['reference', 'sim-careful', 'sim-hasty', 'sim-flailing']
    """
    return [m.replace("/", "-") for m in DEMO_MODELS]


def make_demo_runs(
    out: str | Path = ROOT / "runs" / "demo", *, progress: bool = True
) -> list[Path]:
    """Run the demo models on the built-in suite into ``out`` (replacing earlier demo runs)."""
    from evalnb.cases import load_cases
    from evalnb.datasets import dataset_sha256
    from evalnb.runner import run_cases

    out = Path(out)
    if out.exists():
        shutil.rmtree(out)
    return asyncio.run(
        run_cases(
            load_cases(DATASET),
            DEMO_MODELS,
            out,
            concurrency=8,
            dataset=DATASET.relative_to(ROOT),
            dataset_sha256=dataset_sha256(DATASET),
            seed=DEMO_SEED,
            run_ids=demo_run_ids(),
            progress=progress,
        )
    )


def ensure_demo_runs(pattern: str) -> str:
    """Make the demo runs when ``pattern`` (a notebook's ``RUNS``) matches nothing.

    Only a pattern inside a ``runs/demo`` folder is filled in; anything else is left
    alone, so a typo in a path to real results is not papered over. Returns
    ``pattern`` so a notebook can write ``runs = en.load(en.ensure_demo_runs(RUNS))``.

    Example:
        >>> ensure_demo_runs("/nonexistent/results/*.json")
        '/nonexistent/results/*.json'
    """
    if glob.glob(pattern) or Path(pattern).parent.name != "demo":
        return pattern
    make_demo_runs(Path(pattern).parent, progress=False)
    return pattern


def run_demo(
    runs_dir: str | Path = ROOT / "runs" / "demo",
    reports_dir: str | Path = ROOT / "reports" / "demo",
    *,
    notebooks: bool = True,
) -> dict[str, Path]:
    """Run the demo end to end and return what it wrote."""
    from evalnb.charts import all_charts, save
    from evalnb.load import load
    from evalnb.report import terminal_report, write_report

    started = time.perf_counter()
    runs_dir, reports_dir = Path(runs_dir), Path(reports_dir)
    paths = make_demo_runs(runs_dir)
    runs = load(*paths)
    print(terminal_report(runs))
    if reports_dir.exists():
        shutil.rmtree(reports_dir)
    written = write_report(runs, reports_dir)
    charts = reports_dir / "charts"
    for name, chart in all_charts(runs).items():
        for suffix in ("png", "svg"):
            save(chart, charts / f"{name}.{suffix}")
    written["charts"] = charts
    if notebooks:
        written["notebooks"] = execute_notebooks(runs_dir, reports_dir / "notebooks")
    elapsed = time.perf_counter() - started
    print(f"\ndemo finished in {elapsed:.0f} s (simulated agents are synthetic)")
    for name, path in written.items():
        print(f"  {name:<14} {path}")
    return written


def execute_notebooks(runs_dir: Path, out: Path) -> Path:
    """Execute every notebook in ``notebooks/`` on ``runs_dir`` and save each as HTML."""
    import nbformat
    from nbclient import NotebookClient
    from nbconvert import HTMLExporter

    from evalnb.redact import redact

    out.mkdir(parents=True, exist_ok=True)
    exporter = HTMLExporter()
    previous = os.environ.get("EVALNB_RUNS")
    os.environ["EVALNB_RUNS"] = str(runs_dir.resolve() / "*")  # the kernel inherits it
    try:
        for path in sorted((ROOT / "notebooks").glob("*.ipynb")):
            nb = nbformat.read(path, as_version=4)
            where = {"metadata": {"path": str(path.parent)}}
            NotebookClient(nb, timeout=120, resources=where).execute()
            html, _ = exporter.from_notebook_node(nb)
            (out / f"{path.stem}.html").write_text(redact(html), encoding="utf-8")
    finally:
        if previous is None:
            os.environ.pop("EVALNB_RUNS", None)
        else:
            os.environ["EVALNB_RUNS"] = previous
    return out
