"""The lowest versions evalnb declares are the ones CI tests: `.ci/lowest-versions.txt` pins
every dependency of pyproject.toml (base and every extra) to its lower bound, and `.ci/run`
runs the tests a second time in a virtual environment installed under those pins."""

from __future__ import annotations

import tomllib
from pathlib import Path

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

ROOT = Path(__file__).resolve().parents[1]


def declared() -> dict[str, str]:
    """Each third-party requirement of pyproject.toml, by name: its `>=` lower bound."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    lines = list(project["dependencies"])
    for extra in project["optional-dependencies"].values():
        lines += [line for line in extra if not line.startswith("evalnb")]
    bounds = {}
    for line in lines:
        req = Requirement(line)
        lower = [spec.version for spec in req.specifier if spec.operator == ">="]
        assert len(lower) == 1, f"{line}: every dependency declares one lower bound (>=)"
        bounds[canonicalize_name(req.name)] = lower[0]
    return bounds


def pinned() -> dict[str, str]:
    """The pins of .ci/lowest-versions.txt, by name."""
    pins = {}
    for line in (ROOT / ".ci" / "lowest-versions.txt").read_text().splitlines():
        if line.strip() and not line.startswith("#"):
            req = Requirement(line)
            (spec,) = req.specifier
            assert spec.operator == "==", line
            pins[canonicalize_name(req.name)] = spec.version
    return pins


def test_every_declared_dependency_is_pinned_to_its_lower_bound():
    assert pinned() == declared()


def test_ci_installs_the_lowest_versions_and_runs_the_tests_there():
    script = (ROOT / ".ci" / "run").read_text()
    assert "-c .ci/lowest-versions.txt" in script
    assert "--doctest-modules evalnb tests" in script.split("lowest-versions.txt", 1)[1]
