"""Optional parts of evalnb, each behind a pip extra, imported on first use.

The base install runs evaluations, writes reports and analyses runs. Chart export
(``export``), the notebook and widget stack (``notebooks``), pandas frames
(``pandas``), Inspect AI logs (``inspect``), runs at a URL (``remote``) and judge
agreement (``judges``) are extras;
using one that is not installed raises :class:`~evalnb.errors.SetupError` with the pip
command that adds it.

Example:
    >>> require("json", "export").__name__
    'json'
    >>> require("no_such_module_xyz", "export")
    Traceback (most recent call last):
    evalnb.errors.SetupError: no_such_module_xyz is not installed: pip install 'evalnb[export]'
"""

from __future__ import annotations

import importlib
from types import ModuleType

from evalnb.errors import SetupError

#: What each extra is for, as the error message says it.
EXTRAS = {
    "export": "chart export (PNG, SVG, PDF, HTML)",
    "notebooks": "notebooks and widgets",
    "pandas": "pandas frames",
    "inspect": "reading and writing Inspect AI logs",
    "remote": "reading runs from a URL (object storage, HTTP) through fsspec",
    "judges": "judge agreement (Krippendorff's alpha)",
}


def require(module: str, extra: str) -> ModuleType:
    """Import ``module``, or raise SetupError naming the extra that installs it."""
    try:
        return importlib.import_module(module)
    except ImportError:
        raise SetupError(f"{module} is not installed: pip install 'evalnb[{extra}]'") from None
