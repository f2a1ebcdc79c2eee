"""The local sandbox's confinement modes that work on this machine, for the tests."""

from __future__ import annotations

from evalnb._runtime.sandbox import local

CONFINED = [mode for mode in local.MODES[:-1] if local.works(mode)]
"""The confinement modes that work here (bubblewrap, namespaces made with unshare)."""
