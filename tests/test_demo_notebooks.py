"""`evalnb demo` executes its notebooks on shared kernels: each notebook still starts clean."""

from __future__ import annotations

import asyncio
import json
import os
import re
from concurrent.futures import Future
from pathlib import Path

import nbformat
import pytest

from evalnb._demo import execute_notebooks

pytestmark = pytest.mark.slow

SHOW_STATE = """\
import os, sys
print("leftovers:", sorted(k for k in globals() if k.startswith("mine_")))
print("cwd:", os.getcwd())
"""


def notebook(path: Path, name: str) -> Path:
    """A notebook that prints what an earlier notebook left behind, then leaves something."""
    cells = [
        nbformat.v4.new_code_cell(SHOW_STATE),
        # one write: print's separate writes of "0", " " and "3" can reach the notebook as
        # separate outputs when the kernel flushes between them (seen on a loaded machine)
        nbformat.v4.new_code_cell(
            f"mine_{name} = sys.stdout.write(f'{{len(Out)}} {{len(In)}}\\n')"
        ),
    ]
    path.mkdir(parents=True, exist_ok=True)
    nbformat.write(nbformat.v4.new_notebook(cells=cells), path / f"{name}.ipynb")
    return path / f"{name}.ipynb"


def test_notebooks_sharing_one_kernel_each_start_empty_in_their_own_folder(tmp_path, monkeypatch):
    monkeypatch.setattr(os, "cpu_count", lambda: 1)  # one kernel runs all three, in turn
    paths = [
        notebook(tmp_path / "a", "first"),
        notebook(tmp_path / "b", "second"),
        notebook(tmp_path / "a", "third"),
    ]
    out = execute_notebooks(tmp_path, tmp_path / "html", paths)
    for path in paths:
        html = (out / f"{path.stem}.html").read_text()
        assert "leftovers: []" in html, path.stem  # nothing of the notebook before
        assert f"cwd: {path.parent}" in html, path.stem
        prompts = re.findall(r"In\xa0?(?:&nbsp;)?\[(\d+)\]", html)
        assert prompts == ["1", "2"], path.stem  # counts start again at 1
        assert "<pre>0 3\n</pre>" in html, path.stem  # In and Out hold this notebook only


def test_notebooks_run_nothing_when_the_start_signal_fails(tmp_path):
    start: Future[None] = Future()
    start.cancel()  # what `evalnb demo` does when making the runs failed
    paths = [notebook(tmp_path, "never")]
    with pytest.raises(asyncio.CancelledError):
        execute_notebooks(tmp_path, tmp_path / "html", paths, start=start)
    assert not (tmp_path / "html").exists()


def test_a_failing_notebook_is_named_and_the_others_still_run(tmp_path, monkeypatch):
    monkeypatch.setattr(os, "cpu_count", lambda: 1)
    broken = tmp_path / "broken.ipynb"
    cell = nbformat.v4.new_code_cell("raise ValueError('no runs here')")
    nbformat.write(nbformat.v4.new_notebook(cells=[cell]), broken)
    after = notebook(tmp_path, "after")
    with pytest.raises(RuntimeError, match=r"1 notebook\(s\) failed: broken\.ipynb: .*no runs"):
        execute_notebooks(tmp_path, tmp_path / "html", [broken, after])
    assert (tmp_path / "html" / "after.html").exists()
    assert not (tmp_path / "html" / "broken.html").exists()


def test_the_demo_imports_what_its_threads_share_before_they_start(demo):
    # Two threads importing IPython's modules at once can see each other's half-made
    # modules (a circular-import error, seen once on a fresh install), so the demo
    # imports them on the main thread before its threads start.
    done, out = demo
    assert done.returncode == 0, done.stderr[-2000:]
    [line] = [line for line in done.stdout.splitlines() if line.startswith("OFF-MAIN")]
    assert json.loads(line.removeprefix("OFF-MAIN ")) == []
    assert len(list((out / "charts").glob("*.png"))) == len(list((out / "charts").glob("*.svg")))
    assert (out / "report.html").exists() and len(list((out / "notebooks").glob("*.html"))) == 7


def test_the_demos_report_html_stays_a_file_to_mail(demo):
    done, out = demo
    assert done.returncode == 0, done.stderr[-2000:]
    page = (out / "report.html").read_text(encoding="utf-8")
    assert len(page.encode()) < 5_000_000  # 5 MB, transcripts and charts included
    assert "Transcripts of failed attempts" in page
