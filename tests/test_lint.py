"""The code stays lint-clean, formatted and type-correct (ruff and mypy, configured in
pyproject.toml)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize(
    "args", [["check", "."], ["format", "--check", "."]], ids=["ruff check", "ruff format"]
)
def test_ruff(args):
    done = subprocess.run(
        [sys.executable, "-m", "ruff", *args], cwd=ROOT, capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stdout + done.stderr


@pytest.mark.slow
def test_mypy_finds_no_type_error_in_the_package():
    done = subprocess.run(
        [sys.executable, "-m", "mypy", "--no-incremental"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stdout[-5000:] + done.stderr
