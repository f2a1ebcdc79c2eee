"""Shared test helpers: paths to the project's data and to the shared real fixtures, the
local sandbox's confinement modes, and folders made once per test session."""

from __future__ import annotations

import compileall
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from filelock import FileLock
from hypothesis import HealthCheck, settings

from evalnb._runtime.sandbox import local
from tests.confinement import CONFINED

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared" / "fixtures"
FIXTURES = SHARED / "bashkit-eval"


def pytest_configure(config: pytest.Config) -> None:
    """Let the test session's processes write bytecode, and byte-compile the checkout's
    ``evalnb`` once, before the xdist workers start.

    The tests start hundreds of Python processes (the workers, the CLI, run workers,
    notebook kernels). Where ``PYTHONDONTWRITEBYTECODE`` is set (it is on the test
    machines), each would compile every module it imports again; the session's processes
    (the workers inherit this one's environment) write bytecode instead, so each module
    installed is compiled once, when first imported, and only if it is. So the test command
    does not byte-compile the environment when it installs it: that compiles every
    installed module, most of which the tests never import (docs/guide/install.md)."""
    if "PYTEST_XDIST_WORKER" not in os.environ:
        os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
        sys.dont_write_bytecode = False
        compileall.compile_dir(ROOT / "evalnb", quiet=1)


def shared_fixture(*parts: str) -> Path:
    """A path under the shared real fixtures (``../shared/fixtures``); skips the test
    where it is absent."""
    path = SHARED.joinpath(*parts)
    if not path.exists():
        pytest.skip(f"../shared/fixtures/{'/'.join(parts)} is absent")
    return path


@pytest.fixture
def bashkit_eval_files() -> list[Path]:
    """The three published bashkit-eval result files; skips where ../shared is absent."""
    files = sorted(FIXTURES.glob("*.json"))
    if not files:
        pytest.skip("../shared/fixtures/bashkit-eval is absent")
    return files


@pytest.fixture(params=CONFINED or [None])
def confined(request, monkeypatch):
    """Each confinement mode that works here in turn (every local sandbox made in the test
    uses it); fails where none works, since the local sandbox could not be confined."""
    if request.param is None:
        pytest.fail("no confinement mode works here: the local sandbox cannot be confined")
    monkeypatch.setattr(local, "confinement", lambda: request.param)
    return request.param


def made_once(factory: pytest.TempPathFactory, name: str, make: Callable[[Path], None]) -> Path:
    """The folder ``name``, filled by ``make`` once per test session and shared by the xdist
    workers: the first worker to ask makes it while the others wait on a lock. A ``make``
    that raised left no mark, so the next worker to ask makes the folder again (and fails
    in its own test the same way)."""
    if "PYTEST_XDIST_WORKER" not in os.environ:  # one process: its own temporary folder
        folder = factory.mktemp(name)
        make(folder)
        return folder
    root = factory.getbasetemp().parent  # this session's, shared by its workers
    folder, done = root / name, root / f"{name}.done"
    with FileLock(root / f"{name}.lock"):
        if not done.exists():
            shutil.rmtree(folder, ignore_errors=True)
            folder.mkdir()
            make(folder)
            done.touch()
    return folder


WATCH_IMPORTS = """
import atexit, json, sys, threading

SHARED = ("IPython", "altair", "jsonschema", "tqdm", "nbconvert", "nbclient", "jupyter_client")
off_main = []


class Watch:
    def find_spec(self, name, path=None, target=None):
        if threading.current_thread() is not threading.main_thread():
            if name.split(".")[0] in SHARED and name not in sys.modules:
                off_main.append(name)
        return None


sys.meta_path.insert(0, Watch())
atexit.register(lambda: print("OFF-MAIN", json.dumps(sorted(set(off_main)))))
from evalnb._cli import main

sys.exit(main(["demo", "--runs", sys.argv[1], "--out", sys.argv[2]]))
"""
"""``evalnb demo`` in a process that notes every import of a module the demo's threads
share made off the main thread (printed as ``OFF-MAIN [...]`` at exit)."""


@pytest.fixture(scope="session")
def demo(tmp_path_factory: pytest.TempPathFactory) -> tuple[subprocess.CompletedProcess[str], Path]:
    """One whole ``evalnb demo`` per test session, watched for imports off the main thread
    (:data:`WATCH_IMPORTS`): the finished process and its output folder (``report.html``,
    ``charts/``, the executed notebooks as HTML under ``notebooks/``)."""

    def make(folder: Path) -> None:
        done = subprocess.run(
            [sys.executable, "-c", WATCH_IMPORTS, str(folder / "runs"), str(folder / "out")],
            capture_output=True,
            text=True,
            timeout=300,
        )
        process = {"returncode": done.returncode, "stdout": done.stdout, "stderr": done.stderr}
        (folder / "process.json").write_text(json.dumps(process))

    folder = made_once(tmp_path_factory, "demo", make)
    process = json.loads((folder / "process.json").read_text())
    return subprocess.CompletedProcess(WATCH_IMPORTS, **process), folder / "out"


# hypothesis: a fast profile for the test command (the same examples every run) and a
# thorough one, chosen by HYPOTHESIS_PROFILE (README "Differential tests")
settings.register_profile(
    "fast",
    max_examples=5,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
settings.register_profile(
    "thorough",
    max_examples=300,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "fast"))
