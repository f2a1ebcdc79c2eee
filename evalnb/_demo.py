"""``evalnb demo``: the whole pipeline offline, from the built-in suite to charts and notebooks.

1. runs the built-in ``bash`` suite with the reference agent and the simulated
   personas (``sim/careful``, ``sim/hasty``, ``sim/flailing``), :data:`DEMO_EPOCHS`
   attempts per task, into ``./runs/demo/``;
2. writes ``./reports/demo/``: ``report.md``, ``report.json``, ``comparison.md``,
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
import importlib.util
import os
import shutil
import time
from collections.abc import Coroutine
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Any, TypeVar

from evalnb._formats.scenario import load_scenario
from evalnb._formats.tasks import dataset_sha256
from evalnb._resources import data_path, dataset_path, notebooks_path
from evalnb._runtime.cases import load_cases
from evalnb._runtime.runner import run_cases
from evalnb._runtime.scenario_case import load_scenario_cases

T = TypeVar("T")

DEMO_MODELS = ["reference", "sim/careful", "sim/hasty", "sim/flailing"]
DEMO_SEED = 7
DEMO_EPOCHS = 3
"""Attempts per task in the demo suite: enough for pass@k, pass^k and flaky tasks."""
DEMO_RUNS = Path("runs") / "demo"
DEMO_REPORTS = Path("reports") / "demo"
GUIDANCE_VERSIONS = ("v1", "v2")
KERNEL_WARM_UP = "import evalnb._present.charts, evalnb._present.story, evalnb._present.tables"
"""What a notebook kernel imports while it waits to start (the heaviest of the packaged
notebooks' imports: evalnb's charts, and with them altair)."""
OFFLINE_TEMPLATE = "evalnb-offline.html.j2"
_OFFLINE_BLOCKS = """{%- extends 'lab/index.html.j2' -%}
{%- block html_head_js_requirejs -%}{%- endblock html_head_js_requirejs -%}
{%- block html_head_js_mathjax -%}{%- endblock html_head_js_mathjax -%}
{%- block html_head_js_mermaidjs -%}{%- endblock html_head_js_mermaidjs -%}
{%- block jupyter_widgets -%}{%- endblock jupyter_widgets -%}
"""


def demo_run_ids() -> list[str]:
    """Fixed run ids so the demo folder is stable: ``reference``, ``sim-careful``, ...

    Example:
        >>> demo_run_ids()
        ['reference', 'sim-careful', 'sim-hasty', 'sim-flailing']
    """
    return [m.replace("/", "-") for m in DEMO_MODELS]


def make_demo_runs(out: str | Path = DEMO_RUNS, *, progress: bool = True) -> list[Path]:
    """Run the demo models on the built-in suite into ``out`` (replacing earlier demo runs),
    and the guidance runs (:func:`guidance_runs`), all at once in one event loop."""
    out = Path(out)
    if out.exists():
        shutil.rmtree(out)
    dataset = dataset_path("bash")
    suite = run_cases(
        load_cases(dataset),
        DEMO_MODELS,
        out,
        concurrency=8,
        epochs=DEMO_EPOCHS,
        dataset="bash",
        dataset_sha256=dataset_sha256(dataset),
        seed=DEMO_SEED,
        run_ids=demo_run_ids(),
        progress=progress,
    )
    # the guidance runs show no progress bars: theirs would draw over the suite's
    return _run_sync(_all_paths(suite, *guidance_runs(out, progress=False)))


async def _all_paths(*runs: Coroutine[Any, Any, list[Path]]) -> list[Path]:
    return [path for paths in await asyncio.gather(*runs) for path in paths]


def guidance_runs(out: Path, *, progress: bool = False) -> list[Coroutine[Any, Any, list[Path]]]:
    """The runs of the notes scenarios under guidance v1 and v2 (one run each, not started),
    played by the scripted demo agent.

    The agent is scripted per version (``data/demo/guidance/``): it imitates an agent
    that copies v1's wrong examples and recovers, and one that follows v2. Scenarios
    that need an LLM judge are left out (the demo is offline). Each scenario file is read
    once for both versions.
    """
    scenarios = dataset_path("notes")
    files = [
        f for f in sorted(scenarios.glob("*.yaml")) if not load_scenario(f).evaluation.judge_enabled
    ]
    versions = {v: data_path("tools", "notes", f"AGENTS.{v}.md") for v in GUIDANCE_VERSIONS}
    cases = [c for f in files for c in load_scenario_cases(f, versions)]
    runs = []
    for version in GUIDANCE_VERSIONS:
        agent = data_path("demo", "guidance", f"notes-agent.{version}.yaml")
        runs.append(
            run_cases(
                [c for c in cases if c.guidance == version],
                [f"scripted:{agent}"],
                out,
                dataset="notes",
                dataset_sha256=dataset_sha256(scenarios),
                guidance=version,
                run_ids=[f"guidance-{version}"],
                progress=progress,
            )
        )
    return runs


def ensure_demo_runs(pattern: str) -> str:
    """Make the demo runs when ``pattern`` (a notebook's ``RUNS``) matches nothing.

    Only a pattern inside a ``demo`` folder is filled in; anything else is left
    alone, so a typo in a path to real results is not papered over. Notebooks run
    side by side (nbmake with ``-n 2``) take turns through a lock file beside the
    folder, so the runs are made once. It works inside a running event loop (a
    Jupyter kernel) too.

    Parameters
    ----------
    pattern : str
        A glob of run folders or result files, as :func:`evalnb.load` takes; the demo
        runs are made in its folder when that folder is named ``demo`` and the pattern
        matches nothing.

    Returns
    -------
    str
        ``pattern`` itself, so a notebook can write
        ``runs = en.load(en.ensure_demo_runs(RUNS))``.

    See Also
    --------
    load : Loads the runs the pattern matches.

    Examples
    --------
    A pattern that already matches is returned as it is, and nothing runs, even in a
    ``demo`` folder:

    >>> import tempfile
    >>> from pathlib import Path
    >>> demo = Path(tempfile.mkdtemp()) / "demo"
    >>> (demo / "my-run").mkdir(parents=True)
    >>> pattern = str(demo / "*")
    >>> ensure_demo_runs(pattern) == pattern, [p.name for p in demo.iterdir()]
    (True, ['my-run'])

    So is a pattern outside a ``demo`` folder, even when it matches nothing:

    >>> ensure_demo_runs("/nonexistent/results/*.json")
    '/nonexistent/results/*.json'
    """
    folder = Path(pattern).parent
    if glob.glob(pattern) or folder.name != "demo":
        return pattern
    from filelock import FileLock

    folder.parent.mkdir(parents=True, exist_ok=True)
    with FileLock(folder.parent / ".demo.lock"):
        if not glob.glob(pattern):  # another process may have made them meanwhile
            make_demo_runs(folder, progress=False)
    return pattern


def _run_sync(coro: Coroutine[Any, Any, T]) -> T:
    """Run a coroutine to completion, in a worker thread when a loop already runs here."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(coro)
    with ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(asyncio.run, coro).result()


def run_demo(
    runs_dir: str | Path = DEMO_RUNS,
    reports_dir: str | Path = DEMO_REPORTS,
    *,
    notebooks: bool = True,
) -> dict[str, Path]:
    """Run the demo end to end and return what it wrote.

    Chart export and the notebooks need the ``export`` and ``notebooks`` extras; on a
    base install they are skipped and the summary says which pip command adds them.
    """
    from evalnb._analysis.load import load
    from evalnb._present.report import write_report

    started = time.perf_counter()
    runs_dir, reports_dir = Path(runs_dir), Path(reports_dir)
    skipped = []
    execute = notebooks and importlib.util.find_spec("nbclient") is not None
    if notebooks and not execute:
        skipped.append("notebooks (pip install 'evalnb[notebooks]')")
    charts = importlib.util.find_spec("vl_convert") is not None
    if not charts:
        skipped.append("charts (pip install 'evalnb[export]')")
    _import_for_threads(charts=charts, notebooks=execute)
    with ThreadPoolExecutor(max_workers=2) as background:
        # while the runs are made, the notebook kernels start and the vega bundle is
        # prepared in threads (making the runs mostly waits for commands)
        made: Future[None] = Future()
        executed = (
            background.submit(
                execute_notebooks,
                runs_dir,
                reports_dir / "notebooks",
                kernels=max(1, (os.cpu_count() or 2) - 1),  # this process draws the charts
                start=made,
            )
            if execute
            else None
        )
        drawing = background.submit(_prepare_charts) if charts else None
        try:
            paths = make_demo_runs(runs_dir)
            runs = load(*paths)
            if reports_dir.exists():
                shutil.rmtree(reports_dir)
            if drawing is not None:  # the vega bundle is ready before the kernels need it
                drawing.result()
        except BaseException:
            made.cancel()  # the kernels run nothing and shut down
            raise
        made.set_result(None)
        # the charts are drawn (vl-convert, off the GIL) while the reports are written
        if charts:
            from evalnb._present.charts import save_all

            specs = _chart_specs(runs)
            saved = background.submit(save_all, specs, reports_dir / "charts")
        written = write_report(runs, reports_dir)
        print(written["comparison.md"].read_text(encoding="utf-8"))
        if charts:
            from evalnb._present.report_html import write_report_html

            saved.result()
            written["charts"] = reports_dir / "charts"
            written["report.html"] = write_report_html(runs, reports_dir, specs)
        if executed is not None:
            written["notebooks"] = executed.result()
    elapsed = time.perf_counter() - started
    print(f"\ndemo finished in {elapsed:.0f} s (simulated agents are synthetic)")
    for name, path in written.items():
        print(f"  {name:<14} {path}")
    for part in skipped:
        print(f"  skipped        {part}")
    return written


def _import_for_threads(*, charts: bool, notebooks: bool) -> None:
    """Import here, before any thread starts, what the demo's threads use. Two threads
    importing modules that share dependencies at the same time can each see the other's
    half-initialised module (IPython: altair imports it, and so does the runner's
    progress bar), which fails with a circular-import error."""
    names = ["evalnb._runtime.runner"]
    if charts:
        names += ["vl_convert", "evalnb._present.charts", "evalnb._present.offline"]
        names += ["evalnb._present.report_html"]
    if notebooks:
        names += ["jinja2", "jupyter_client.manager", "nbclient", "nbconvert", "nbformat"]
        names += ["evalnb._redact", "IPython.lib.lexers"]  # the last: HTML's code highlighting
    for name in names:
        importlib.import_module(name)


def _prepare_charts() -> None:
    """Build (or read) the vega bundle the kernels need."""
    from evalnb._present.offline import prepare_bundle

    prepare_bundle()


def _chart_specs(runs: Any) -> dict[str, dict[str, Any]]:
    """Every chart's spec, built (and validated) once under the evalnb theme."""
    import altair as alt

    from evalnb._present.charts import THEME, all_charts

    with alt.theme.enable(THEME):
        return {name: chart.to_dict() for name, chart in all_charts(runs).items()}


def execute_notebooks(
    runs_dir: Path,
    out: Path,
    notebooks: list[Path] | None = None,
    *,
    kernels: int | None = None,
    start: Future[None] | None = None,
) -> Path:
    """Execute the notebooks (default: the packaged ones) on ``runs_dir``; save HTML.

    The notebooks run in parallel on ``kernels`` Python kernels (default: as many as there
    are cores; at most one per notebook). A kernel runs one notebook after another, its
    namespace reset before each (IPython's ``reset(new_session=True)``: no variable or
    output of the last notebook is left, execution counts start at 1 again, and the
    working directory is the notebook's folder), so the imports (evalnb, polars, altair)
    are made once per kernel, not once per notebook. ``start``, when given, is waited for
    after the kernels have started and imported :data:`KERNEL_WARM_UP`, before the first
    cell runs (``evalnb demo`` starts them while it makes the runs); when it fails,
    nothing runs. A kernel is stopped once its last notebook is saved (killed: it has
    nothing left to save). A notebook that fails is not saved and does not stop the
    others; once all have run, a RuntimeError names every one that failed.

    The HTML goes through :func:`evalnb._redact.redact`, so a key a cell printed
    is not written out. It loads nothing from the network: nbconvert's lab template
    without its require.js, MathJax, mermaid and widget-manager scripts (all from CDNs),
    and charts drawn by the notebooks' offline renderer (:mod:`evalnb._present.offline`).
    """
    paths = notebooks or sorted(notebooks_path().glob("*.ipynb"))
    env = {**os.environ, "EVALNB_RUNS": str(runs_dir.resolve() / "*")}  # read by the notebooks
    todo = list(paths)
    failed: dict[str, str] = {}
    count = min(kernels or os.cpu_count() or 2, len(todo))
    _run_sync(_all_done(*(_kernel(todo, out, env, start, failed) for _ in range(count))))
    if failed:
        raise RuntimeError(
            f"{len(failed)} notebook(s) failed: "
            + "; ".join(f"{name}: {error}" for name, error in sorted(failed.items()))
        )
    return out


async def _all_done(*workers: Coroutine[Any, Any, None]) -> None:
    await asyncio.gather(*workers)


async def _kernel(
    todo: list[Path],
    out: Path,
    env: dict[str, str],
    start: Future[None] | None,
    failed: dict[str, str],
) -> None:
    """One kernel: take the next notebook from ``todo`` until none is left; a notebook
    that fails goes into ``failed`` (its name: the error's last line)."""
    from jupyter_client.manager import AsyncKernelManager
    from nbclient.exceptions import CellExecutionError

    km = AsyncKernelManager(kernel_name="python3")
    quiet = "--IPKernelApp.log_level=ERROR"  # not the kernel's start-up notices
    history = "--HistoryManager.hist_file=:memory:"  # as nbclient starts kernels
    kc = None
    try:
        await km.start_kernel(extra_arguments=[quiet, history], env=env, cwd=str(todo[0].parent))
        kc = km.client()
        kc.start_channels()
        await kc.wait_for_ready(timeout=60)
        kc.allow_stdin = False
        if start is not None:
            await _silently(kc, KERNEL_WARM_UP)
            await asyncio.wrap_future(start)
        out.mkdir(parents=True, exist_ok=True)
        exporter = _html_exporter()
        while todo:
            path = todo.pop(0)
            await _reset(kc, path.parent)
            try:
                nb = await _execute_notebook(path, km, kc)
            except CellExecutionError as exc:
                failed[path.name] = str(exc).strip().splitlines()[-1]
                continue
            html, _ = await asyncio.to_thread(exporter.from_notebook_node, nb)
            await asyncio.to_thread(_write_redacted, out / f"{path.stem}.html", html)
    finally:
        if kc is not None:
            kc.stop_channels()
        if km.has_kernel:
            await km.shutdown_kernel(now=True)


async def _reset(kc: Any, folder: Path) -> None:
    """Give the kernel a fresh namespace and session, working in ``folder``."""
    chdir = f"__import__('os').chdir({str(folder)!r})"
    await _silently(kc, f"{chdir}; get_ipython().reset(new_session=True)")


async def _silently(kc: Any, code: str) -> None:
    """Run ``code`` in the kernel outside the notebook: no output, history or count."""
    reply = await kc.execute_interactive(
        code, silent=True, store_history=False, timeout=120, output_hook=lambda msg: None
    )
    if reply["content"]["status"] != "ok":
        content = reply["content"]
        raise RuntimeError(f"the kernel failed on {code!r}: {content.get('evalue', content)}")


async def _execute_notebook(path: Path, km: Any, kc: Any) -> Any:
    """Execute one notebook on a running kernel; return the executed notebook."""
    import nbformat
    from nbclient import NotebookClient

    nb = nbformat.read(path, as_version=4)
    client = NotebookClient(nb, km=km, timeout=120)  # the kernel is in path's folder
    client.kc = kc
    return await client.async_execute()


def _html_exporter() -> Any:
    """nbconvert's HTML exporter with the offline template (:data:`OFFLINE_TEMPLATE`)."""
    from jinja2 import DictLoader
    from nbconvert import HTMLExporter

    exporter = HTMLExporter(extra_loaders=[DictLoader({OFFLINE_TEMPLATE: _OFFLINE_BLOCKS})])
    exporter.template_file = OFFLINE_TEMPLATE
    return exporter


def _write_redacted(path: Path, html: str) -> None:
    from evalnb._redact import redact

    path.write_text(redact(html), encoding="utf-8")
