"""Optional parts of evalnb, each behind a pip extra, imported on first use.

The base install runs evaluations, writes reports and analyses runs. Chart export
(``export``), the notebook and widget stack (``notebooks``), pandas frames
(``pandas``), Inspect AI logs (``inspect``), runs at a URL (``remote``) and judge
agreement (``judges``) are extras;
using one that is not installed raises :class:`~evalnb.errors.SetupError` with the pip
command that adds it, and so does using one whose packages are older than the extra
declares (the lower bounds of pyproject.toml's ``optional-dependencies``, read from
evalnb's installed metadata), as Altair checks ``vl-convert-python``'s version.

Example:
    >>> require("json", "export").__name__
    'json'
    >>> require("no_such_module_xyz", "export")
    Traceback (most recent call last):
    evalnb.errors.SetupError: no_such_module_xyz is not installed: pip install 'evalnb[export]'
"""

from __future__ import annotations

import functools
import importlib
from importlib import metadata
from types import ModuleType

from packaging.requirements import Requirement

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
    """Import ``module``, or raise SetupError naming the extra that installs it.

    The packages of ``extra`` that are installed must also meet the versions it declares
    (:func:`too_old`); one below raises SetupError naming the version needed.
    """
    try:
        imported = importlib.import_module(module)
    except ImportError:
        raise SetupError(f"{module} is not installed: pip install 'evalnb[{extra}]'") from None
    old = too_old(extra)
    if old:
        raise SetupError(f"{'; '.join(old)}: pip install -U 'evalnb[{extra}]'")
    return imported


@functools.cache
def too_old(extra: str) -> list[str]:
    """The installed packages of ``extra`` older than the extra declares, each as
    ``"<name> <version> is installed, evalnb[<extra>] needs <name><specifier>"``.

    The declared versions are evalnb's installed metadata (its ``Requires-Dist``, written
    from pyproject.toml); without it (a checkout on ``sys.path``) nothing is checked.
    Packages of the extra that are not installed are left to their own import.

    Example:
        >>> too_old("judges")
        []
    """
    try:
        declared = metadata.requires("evalnb") or []
    except metadata.PackageNotFoundError:
        return []
    old = []
    for line in declared:
        req = Requirement(line)
        if req.marker is None or not req.marker.evaluate({"extra": extra}):
            continue
        try:
            installed = metadata.version(req.name)
        except metadata.PackageNotFoundError:
            continue
        if not req.specifier.contains(installed, prereleases=True):
            needed = f"{req.name}{req.specifier}"
            old.append(f"{req.name} {installed} is installed, evalnb[{extra}] needs {needed}")
    return old
