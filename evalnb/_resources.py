"""Files that ship with the package: prices, the built-in datasets, the notes tool, notebooks.

In the repository they are the top-level ``data/`` and ``notebooks/`` folders; the
wheel carries them inside the package as ``evalnb/data`` and ``evalnb/notebooks``
(hatchling's ``force-include``, see pyproject.toml), found through
:mod:`importlib.resources`, so a wheel installed anywhere works the same as a checkout.
An editable install (``pip install -e .``) puts the checkout's ``evalnb`` on the path
without them, and they are read from the checkout's top level instead. pip installs
packages unzipped, so these are real files and can be handed to the sandbox as paths.

Example:
    >>> data_path("prices.yaml").name
    'prices.yaml'
    >>> dataset_path("smoke").name
    'smoke.jsonl'
"""

from __future__ import annotations

import shutil
from importlib.resources import files
from pathlib import Path

from evalnb.errors import InputError

#: The built-in datasets by name: ``evalnb run smoke --model reference`` works anywhere.
DATASETS = {
    "bash": ("tasks", "bash.jsonl"),
    "smoke": ("tasks", "smoke.jsonl"),
    "notes": ("scenarios",),
}


def _shipped(folder: str) -> Path:
    """``folder`` (``data`` or ``notebooks``) inside the installed package, or, in an
    editable install or a checkout, at the top of the repository."""
    packaged = Path(str(files("evalnb").joinpath(folder)))
    return packaged if packaged.is_dir() else Path(__file__).resolve().parents[1] / folder


def data_path(*parts: str) -> Path:
    """The path of a file or folder under the shipped ``data`` folder.

    Example:
        >>> data_path("tasks", "bash.jsonl").exists()
        True
    """
    return _shipped("data").joinpath(*parts)


def notebooks_path() -> Path:
    """The folder of the shipped analysis notebooks.

    Example:
        >>> sorted(p.name for p in notebooks_path().glob("*.ipynb"))[0]
        '01_overview.ipynb'
    """
    return _shipped("notebooks")


def dataset_path(name: str | Path) -> Path:
    """A dataset argument as a path: an existing path wins, else a built-in name.

    The built-in names are ``bash`` (the 59-task bash suite), ``smoke`` (its quick
    subset) and ``notes`` (the CLI-tool scenarios of the sample ``notes`` tool).
    Anything else comes back unchanged, for the loader to report as missing.

    Example:
        >>> dataset_path("bash").parent.name
        'tasks'
        >>> str(dataset_path("my/tasks.jsonl"))
        'my/tasks.jsonl'
    """
    path = Path(name)
    if path.exists() or str(name) not in DATASETS:
        return path
    return data_path(*DATASETS[str(name)])


def copy_notebooks(dest: str | Path, *, force: bool = False) -> list[Path]:
    """Copy the packaged notebooks into ``dest`` (created) and return the copies.

    An existing notebook is not overwritten unless ``force``: the call raises
    :class:`~evalnb.errors.InputError` naming it, before anything is copied.

    Example:
        >>> import tempfile
        >>> [p.name for p in copy_notebooks(tempfile.mkdtemp())][:1]
        ['01_overview.ipynb']
    """
    dest = Path(dest)
    sources = sorted(notebooks_path().glob("*.ipynb"))
    clashes = [dest / s.name for s in sources if (dest / s.name).exists()]
    if clashes and not force:
        raise InputError(clashes[0], None, None, "exists (use --force to overwrite)")
    dest.mkdir(parents=True, exist_ok=True)
    copies = []
    for source in sources:
        copies.append(dest / source.name)
        shutil.copyfile(source, copies[-1])
    return copies
