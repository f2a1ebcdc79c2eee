"""A wheel built from the checkout works in a fresh virtual environment, from an empty folder;
an editable install (the test command's) reads the checkout's ``data/`` and ``notebooks/``.

This is the new user's path: a wheel built from the checkout, installed with the base
dependencies only (no extras), far from the repository. Everything the program reads at
run time must come from inside the installed package, and every output must land in the
current folder. uv (the test extra's) builds and installs it: the same wheel and
dependencies as ``pip wheel .`` and ``pip install``, in about a third of the time.
"""

from __future__ import annotations

import json
import os
import subprocess
import venv
from importlib import metadata
from pathlib import Path

import pytest
from uv import find_uv_bin

from evalnb._cli import main
from evalnb._resources import data_path, notebooks_path
from tests.conftest import made_once

ROOT = Path(__file__).resolve().parents[1]

pytestmark = pytest.mark.slow

SESSION = """
import evalnb as en
runs = en.load("runs/demo/*")
summary = en.summary(runs)
assert summary.height == 6, summary
assert set(summary.get_column("run_id")) >= {"reference", "sim-careful", "guidance-v1"}
assert en.by_category(runs).height > 0
chart = en.charts.rates_by_model(runs)
assert chart.to_dict()["title"]["text"]
try:
    en.widgets
except en.SetupError as exc:
    assert "pip install 'evalnb[notebooks]'" in str(exc), exc
else:
    raise AssertionError("widgets loaded without the notebooks extra")
print("session ok")
"""


def run(cmd: list[str], cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """Run one step; a failure shows the step's whole output."""
    done = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, (
        f"{' '.join(cmd)} exited {done.returncode}\n{done.stdout}\n{done.stderr}"
    )
    return done


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, dict[str, str]]:
    """(the fresh venv's bin folder, an empty working folder, the environment to run in);
    the venv is made once per test session, the working folder once per worker."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("EVALNB_", "VIRTUAL_ENV"))}
    env["PYTHONPATH"] = ""

    def install(base: Path) -> None:
        uv, wheels = find_uv_bin(), base / "dist"
        run([uv, "build", "-q", "--wheel", "-o", str(wheels), str(ROOT)], base, env)
        [wheel] = wheels.glob("evalnb-*.whl")
        venv.create(base / "venv")  # uv installs into it: no pip of its own to set up
        python = str(base / "venv" / "bin" / "python")
        run(
            [uv, "pip", "install", "-q", "--python", python, str(wheel)],
            base,
            env,
        )

    bin_dir = made_once(tmp_path_factory, "wheel", install) / "venv" / "bin"
    work = tmp_path_factory.mktemp("work")
    env["PATH"] = f"{bin_dir}{os.pathsep}{env.get('PATH', '')}"
    return bin_dir, work, env


@pytest.fixture(scope="module")
def demo_done(installed, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """(the folder ``evalnb demo`` ran in from the installed wheel, what it printed): once
    per test session, shared by the workers."""
    bin_dir, _, env = installed

    def demo(folder: Path) -> None:
        done = run([str(bin_dir / "evalnb"), "demo"], folder, env)
        (folder / "stdout.txt").write_text(done.stdout)

    folder = made_once(tmp_path_factory, "wheel-demo", demo)
    return folder, (folder / "stdout.txt").read_text()


def test_the_installed_package_is_the_wheel_not_the_checkout(installed):
    bin_dir, work, env = installed
    where = run([str(bin_dir / "python"), "-c", "import evalnb; print(evalnb.__file__)"], work, env)
    assert str(ROOT) not in where.stdout
    assert "site-packages" in where.stdout


def test_demo_runs_and_writes_into_the_current_folder(demo_done):
    folder, stdout = demo_done
    assert (folder / "runs" / "demo" / "reference" / "run.json").exists()
    assert (folder / "reports" / "demo" / "report.md").exists()
    # the base install has no chart export or notebook stack: the demo says so
    assert "pip install 'evalnb[export]'" in stdout
    assert "pip install 'evalnb[notebooks]'" in stdout


def test_run_summary_and_validate_work_on_the_packaged_smoke_set(installed):
    bin_dir, work, env = installed
    evalnb = str(bin_dir / "evalnb")
    done = run(
        [evalnb, "run", "smoke", "--model", "reference", "--out", "smoke-runs", "--quiet"],
        work,
        env,
    )
    [folder] = (work / "smoke-runs").iterdir()
    assert f"run written: smoke-runs/{folder.name}" in done.stdout
    summary = run([evalnb, "summary", str(folder), "--json"], work, env)
    assert '"total_passed": 3' in summary.stdout
    checked = run([evalnb, "validate", "smoke"], work, env)
    assert "every task passes the three rules" in checked.stdout


def test_a_python_session_over_the_api(installed, demo_done):
    bin_dir, _, env = installed
    done = run([str(bin_dir / "python"), "-c", SESSION], demo_done[0], env)
    assert "session ok" in done.stdout


def test_notebooks_are_copied_out_of_the_package(installed):
    bin_dir, work, env = installed
    run([str(bin_dir / "evalnb"), "notebooks", "nbs"], work, env)
    assert len(list((work / "nbs").glob("*.ipynb"))) == 7


def test_an_editable_install_reads_the_data_and_notebooks_of_the_checkout(tmp_path):
    direct_url = json.loads(metadata.distribution("evalnb").read_text("direct_url.json") or "{}")
    if not direct_url.get("dir_info", {}).get("editable"):
        pytest.skip("evalnb is not installed editable here")
    assert data_path("tasks", "smoke.jsonl") == ROOT / "data" / "tasks" / "smoke.jsonl"
    assert notebooks_path() == ROOT / "notebooks"
    assert main(["notebooks", str(tmp_path / "nbs")]) == 0
    assert len(list((tmp_path / "nbs").glob("*.ipynb"))) == 7
