"""Shared test helpers: paths to the project's data and to the shared real fixtures."""

from __future__ import annotations

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT.parent / "shared" / "fixtures" / "bashkit-eval"


@pytest.fixture
def bashkit_eval_files() -> list[Path]:
    """The three published bashkit-eval result files; skips where ../shared is absent."""
    files = sorted(FIXTURES.glob("*.json"))
    if not files:
        pytest.skip("../shared/fixtures/bashkit-eval is absent")
    return files
