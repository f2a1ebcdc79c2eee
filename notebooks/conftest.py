"""nbmake runs these notebooks in parallel; make the demo runs they read once, up front.

Each notebook calls ``en.ensure_demo_runs("../runs/demo/*")``, which builds the demo
runs when none exist. Under ``pytest -n 2`` two notebooks starting together would
both build them into the same folder, so every pytest process builds them here
first, one at a time (a file lock), and the notebooks then find them in place.
"""

from __future__ import annotations

import fcntl
import tempfile
from pathlib import Path

import pytest

from evalnb.demo import ensure_demo_runs

DEMO = Path(__file__).resolve().parents[1] / "runs" / "demo"


def pytest_sessionstart(session: pytest.Session) -> None:
    """Build ``runs/demo`` if missing, holding a lock so parallel workers wait for it."""
    lock = Path(tempfile.gettempdir()) / "evalnb-demo-runs.lock"
    with lock.open("w") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        ensure_demo_runs(str(DEMO / "*"))
