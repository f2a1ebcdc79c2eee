"""Using an extra that is missing, or installed older than evalnb declares, raises
SetupError with the pip command that fixes it."""

from __future__ import annotations

from importlib import metadata

import pytest

from evalnb import _extras as extras
from evalnb.errors import SetupError


@pytest.fixture
def fresh():
    """The extras' versions looked up again (they are cached per extra)."""
    extras.too_old.cache_clear()
    yield
    extras.too_old.cache_clear()


def test_a_missing_extra_names_the_pip_command():
    with pytest.raises(
        SetupError, match=r"not_a_module is not installed: pip install 'evalnb\[judges\]'"
    ):
        extras.require("not_a_module", "judges")


def test_the_installed_extras_meet_their_declared_versions(fresh):
    assert {extra: extras.too_old(extra) for extra in extras.EXTRAS if extras.too_old(extra)} == {}


def test_an_extra_older_than_declared_names_the_version_needed(fresh, monkeypatch):
    real = metadata.version
    monkeypatch.setattr(
        extras.metadata,
        "version",
        lambda name: "0.5" if name == "krippendorff" else real(name),
    )
    needed = (
        r"krippendorff 0\.5 is installed, evalnb\[judges\] needs krippendorff>=0\.8: "
        r"pip install -U 'evalnb\[judges\]'"
    )
    with pytest.raises(SetupError, match=needed):
        extras.require("krippendorff", "judges")
    assert extras.require("json", "export").__name__ == "json"  # other extras are not held up
