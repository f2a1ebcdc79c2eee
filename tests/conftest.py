"""Shared test helpers: paths to the project's data and to the shared real fixtures, and
the local sandbox's confinement modes."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

from evalnb._runtime.sandbox import local
from tests.confinement import CONFINED

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared" / "fixtures"
FIXTURES = SHARED / "bashkit-eval"


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
