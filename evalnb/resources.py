"""Files that ship inside the package: prices, the built-in datasets, the notes tool, notebooks.

Everything evalnb reads at run time lives under ``evalnb/data`` and
``evalnb/notebooks`` and is found through :mod:`importlib.resources`, so a wheel
installed anywhere works the same as a checkout. pip installs packages unzipped, so
these are real files and can be handed to the sandbox as paths.

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


def data_path(*parts: str) -> Path:
    """The path of a file or folder under the package's ``data`` folder.

    Example:
        >>> data_path("tasks", "bash.jsonl").exists()
        True
    """
    return Path(str(files("evalnb").joinpath("data", *parts)))


def notebooks_path() -> Path:
    """The folder of the packaged analysis notebooks.

    Example:
        >>> sorted(p.name for p in notebooks_path().glob("*.ipynb"))[0]
        '01_overview.ipynb'
    """
    return Path(str(files("evalnb").joinpath("notebooks")))


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
