"""``load()``: any supported input, as one :class:`~evalnb.analysis.runs.Runs`.

Each path (or glob) may be:

- an evalnb run folder (it has ``run.json``),
- a bashkit mira run folder (``meta.json`` + ``report.json``),
- a bashkit-eval result JSON (top-level ``provider``, ``model``, ``results``, ...),
- a ``report.json`` written by :func:`evalnb.present.report.write_report`,
- any other folder: stands for the run folders, mira folders and ``*.json`` files
  directly inside it.

A pattern that matches nothing, a folder with nothing loadable and a file of an
unknown format raise :class:`~evalnb.errors.InputError`. The same file reached
twice (say by two overlapping globs) is read once. Two different inputs holding
the same ``run_id`` raise InputError (field ``run_id``): that nearly always means
one run reached by two routes (a run folder and the report.json that contains it,
or a result file and its imported folder), and keeping both would count every task
twice.

Example:
    >>> load("/nonexistent/*.json")
    Traceback (most recent call last):
    ...
    evalnb.errors.InputError: /nonexistent/*.json: no file or folder matches
"""

from __future__ import annotations

import glob
from pathlib import Path
from typing import Literal, overload

import polars as pl

from evalnb.analysis.report_file import REPORT_FORMAT, runs_from_report
from evalnb.analysis.runs import PandasRuns, Runs, read_run_folder
from evalnb.errors import InputError
from evalnb.formats.bashkit_eval import read_bashkit_eval, read_json
from evalnb.formats.mira import is_mira_folder, read_mira
from evalnb.store import is_run_folder
from evalnb.store.tables import tables_from_records


@overload
def load(*paths_or_globs: str | Path, backend: Literal["polars"] = "polars") -> Runs: ...
@overload
def load(*paths_or_globs: str | Path, backend: Literal["pandas"]) -> PandasRuns: ...
def load(
    *paths_or_globs: str | Path, backend: Literal["polars", "pandas"] = "polars"
) -> Runs | PandasRuns:
    """Load run folders, bashkit-eval files, mira folders and report.json files together.

    Example:
        >>> import tempfile
        >>> from evalnb.records import RunMeta
        >>> from evalnb.store import RunStore
        >>> root = tempfile.mkdtemp()
        >>> _ = RunStore.create(root, RunMeta(run_id="r1", provider="p", model="m"))
        >>> load(root).runs.get_column("run_id").to_list()
        ['r1']
    """
    if backend not in ("polars", "pandas"):
        raise ValueError(f"backend must be 'polars' or 'pandas', not {backend!r}")
    parts: list[Runs] = []
    origin: dict[str, Path] = {}
    for path in expand_inputs(*paths_or_globs):
        part = read_input(path)
        for run_id in part.runs.get_column("run_id").to_list():
            if run_id in origin:
                msg = f"run {run_id!r} is also in {origin[run_id]}; load only one of them"
                raise InputError(path, None, "run_id", msg)
            origin[run_id] = path
        parts.append(part)
    runs = Runs.concat(parts)
    return runs.to_pandas() if backend == "pandas" else runs


def expand_inputs(*paths_or_globs: str | Path) -> list[Path]:
    """Expand globs and plain folders into the inputs to read, each once, in order.

    Example:
        >>> import tempfile, pathlib
        >>> root = pathlib.Path(tempfile.mkdtemp())
        >>> _ = (root / "b.json").write_text("{}"); _ = (root / "a.json").write_text("{}")
        >>> [p.name for p in expand_inputs(root, root / "a.json")]
        ['a.json', 'b.json']
    """
    out: dict[Path, None] = {}
    for item in paths_or_globs:
        matches = sorted(glob.glob(str(item))) or ([str(item)] if Path(item).exists() else [])
        if not matches:
            raise InputError(item, None, None, "no file or folder matches")
        for match in map(Path, matches):
            if match.is_dir() and not _is_run(match):
                inside = sorted(p for p in match.iterdir() if _is_run(p) or p.suffix == ".json")
                if not inside:
                    msg = "no run folders, mira folders or .json files in this folder"
                    raise InputError(match, None, None, msg)
                out.update(dict.fromkeys(p.resolve() for p in inside))
            else:
                out[match.resolve()] = None
    return list(out)


def read_input(path: str | Path) -> Runs:
    """Read one input (run folder, mira folder, bashkit-eval JSON or report.json).

    Example:
        >>> read_input("/")
        Traceback (most recent call last):
        ...
        evalnb.errors.InputError: /: not a run folder or mira folder
    """
    path = Path(path)
    if path.is_dir():
        if is_run_folder(path):
            return read_run_folder(path)
        if is_mira_folder(path):
            return mira_runs(path)
        raise InputError(path, None, None, "not a run folder or mira folder")
    _, doc = read_json(path)
    keys = set(doc) if isinstance(doc, dict) else set()
    if isinstance(doc, dict) and doc.get("format") == REPORT_FORMAT:
        return runs_from_report(path, doc)
    if {"provider", "model", "results"} <= keys:
        meta, records = read_bashkit_eval(path)
        return Runs.concat([Runs(**tables_from_records(meta, records))])
    if {"results", "summary"} <= keys:
        msg = "looks like a mira report.json: load its folder (with meta.json) instead"
        raise InputError(path, None, None, msg)
    raise InputError(
        path,
        None,
        None,
        "unknown format: expected a bashkit-eval result file or an evalnb report.json",
    )


def _is_run(path: Path) -> bool:
    return is_run_folder(path) or is_mira_folder(path)


def mira_runs(path: str | Path) -> Runs:
    """The tidy tables of one mira run folder (see the module docstring for the extras).

    Example:
        >>> mira_runs("no-such-folder")
        Traceback (most recent call last):
        ...
        evalnb.errors.InputError: no-such-folder/meta.json: file not found
    """
    meta, records = read_mira(path)
    tables = tables_from_records(meta, records)
    tasks = tables["tasks"]
    if records:
        tasks = tasks.with_columns(
            pl.when(pl.col("checks_available"))
            .then(pl.col("passed"))
            .otherwise((pl.col("score") == pl.col("max_score")) & pl.col("error").is_null())
            .alias("passed")
        )
    tables["tasks"] = tasks
    tables["runs"] = tables["runs"].with_columns(
        pl.lit(meta.settings.checks_available).alias("checks_available")
    )
    return Runs.concat([Runs(**tables)])
