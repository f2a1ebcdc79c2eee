"""How far LLM judges agree with each other, and with a person's labels.

An attempt is judged more than once in two ways, and both count:

- in one run, by several judges (``evalnb run ... --judge A --judge B``): each judge's
  rating is in the tasks' ``judges`` column (:class:`~evalnb.records.JudgeRating`),
  the first judge's also in ``judge_model``/``judge_score``;
- by re-scoring a run with another judge (``evalnb run ... --model replay:runs/<run>
  --judge OTHER``): the replayed run records its source in ``recorded_from``, and its
  attempts are the source's, by ``task_id`` and ``epoch``.

An attempt's identity is therefore ``(origin, task_id, epoch)``, the origin being the
run a replay was recorded from (the last part of ``recorded_from``) or else the run
itself; each judge (``judge_model``) rates it with its ``judge_score`` (0 to 1, spec
002's weighted score). A judge that failed on an attempt (no score) does not rate it.

Agreement is Krippendorff's alpha at the interval level (the ``krippendorff``
package; 1 is perfect agreement, 0 what chance gives, below 0 systematic
disagreement) over the attempts at least two raters scored, with a 95% percentile
bootstrap interval that resamples those attempts (:data:`DRAWS` draws, seeded).

A person's labels are a CSV with the columns ``task_id``, ``epoch``, ``label``
(``pass``/``fail``, ``true``/``false``, or a number from 0 to 1): each judge's
agreement with them is alpha between the two, matched on ``task_id`` and ``epoch``.

Example:
    >>> from evalnb._analysis.runs import Runs
    >>> judge_agreement(Runs.empty()).columns
    ['raters', 'attempts', 'alpha', 'alpha_lo', 'alpha_hi']
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import polars as pl

from evalnb._analysis.runs import Runs
from evalnb._extras import require
from evalnb.errors import InputError

DRAWS = 1000
"""Bootstrap draws of the interval."""

HUMAN = "human labels"
"""The rater name of a person's labels."""

_SCHEMA = {
    "raters": pl.Utf8,
    "attempts": pl.Int64,
    "alpha": pl.Float64,
    "alpha_lo": pl.Float64,
    "alpha_hi": pl.Float64,
}
_LABELS = {"pass": 1.0, "fail": 0.0, "true": 1.0, "false": 0.0}


def judge_scores(runs: Runs) -> pl.DataFrame:
    """The judged attempts, one row per judge that scored an attempt.

    An attempt is ``(origin, task_id, epoch)``: the origin is the run a replay was
    recorded from, or else the run itself (see the module docstring). A judge that
    failed on an attempt (no score) does not rate it.

    Parameters
    ----------
    runs : Runs
        The runs, from :func:`evalnb.load`.

    Returns
    -------
    polars.DataFrame
        Columns: ``origin``, ``task_id``, ``epoch``, ``judge_model``, ``judge_score``
        (0 to 1); no rows when no attempt was judged.

    Raises
    ------
    TypeError
        If ``runs`` is not a :class:`evalnb.Runs`.

    See Also
    --------
    judge_agreement : How far these judges agree, Krippendorff's alpha.

    Examples
    --------
    Run ``b`` re-scores run ``a``'s attempts (a replay) with another judge, so both
    rate the attempts of origin ``a``:

    >>> import polars as pl
    >>> from evalnb._analysis.runs import Runs
    >>> runs = Runs.empty()
    >>> runs.set_table("runs", pl.DataFrame({"run_id": ["a", "b"], "model": ["m", "m"],
    ...     "recorded_from": [None, "runs/a"]}))
    >>> runs.set_table("tasks", pl.DataFrame({"run_id": ["a", "a", "b", "b"],
    ...     "model": ["m"] * 4, "task_id": ["t1", "t2"] * 2, "epoch": [1] * 4,
    ...     "judge_model": ["j1", "j1", "j2", "j2"], "judge_score": [0.9, 0.2, 0.8, 0.1]}))
    >>> judge_scores(runs)
    shape: (4, 5)
    ┌────────┬─────────┬───────┬─────────────┬─────────────┐
    │ origin ┆ task_id ┆ epoch ┆ judge_model ┆ judge_score │
    │ ---    ┆ ---     ┆ ---   ┆ ---         ┆ ---         │
    │ str    ┆ str     ┆ i64   ┆ str         ┆ f64         │
    ╞════════╪═════════╪═══════╪═════════════╪═════════════╡
    │ a      ┆ t1      ┆ 1     ┆ j1          ┆ 0.9         │
    │ a      ┆ t2      ┆ 1     ┆ j1          ┆ 0.2         │
    │ a      ┆ t1      ┆ 1     ┆ j2          ┆ 0.8         │
    │ a      ┆ t2      ┆ 1     ┆ j2          ┆ 0.1         │
    └────────┴─────────┴───────┴─────────────┴─────────────┘
    """
    origin = pl.coalesce(
        pl.col("recorded_from").str.strip_chars_end("/").str.split("/").list.last(), "run_id"
    )
    origins = runs.runs.select("run_id", origin.alias("origin"))
    keys = ("run_id", "task_id", "epoch")
    tasks = runs.scan("tasks")
    rating = pl.col("judges").struct.field
    ratings = (
        tasks.filter(pl.col("judge_model").is_not_null())  # only judged attempts have ratings
        .select(*keys, "judges")
        .explode("judges")
        .select(*keys, rating("judge_model"), rating("judge_score"))
    )
    scored = pl.col("judge_score").is_not_null() & pl.col("judge_model").is_not_null()
    return (
        pl.concat([tasks.select(*keys, "judge_model", "judge_score"), ratings])
        .filter(scored)
        .collect()
        .join(origins, on="run_id")
        .select("origin", "task_id", "epoch", "judge_model", "judge_score")
        .unique(["origin", "task_id", "epoch", "judge_model"], keep="last", maintain_order=True)
    )


def judge_agreement(runs: Runs, labels: str | Path | None = None) -> pl.DataFrame:
    """Krippendorff's alpha of the judges, and of each judge with a person's labels.

    One row ``raters`` = the judges (comma separated) when two or more judges scored
    some attempts in common, then, with ``labels`` (a CSV, see the module docstring),
    one row per judge, ``"human labels, <judge>"``. Needs the ``judges`` extra.

    Parameters
    ----------
    runs : Runs
        The runs, from :func:`evalnb.load`: the judged runs and their replays.
    labels : str or Path or None, default None
        A person's labels: a CSV with the columns ``task_id``, ``epoch`` and ``label``
        (``pass``/``fail``, ``true``/``false``, or a number from 0 to 1). None: the
        judges' agreement only.

    Returns
    -------
    polars.DataFrame
        Columns: ``raters``, ``attempts`` (rated by at least two of the raters),
        ``alpha`` and its bootstrap ``alpha_lo``/``alpha_hi`` (null with fewer than two
        such attempts); no rows with fewer than two judges and no labels.

    Raises
    ------
    InputError
        If ``labels`` is not a readable CSV, lacks a column or holds a label that is
        none of the above, or if a judge scored the same task and epoch in several runs
        (labels name no run: load the runs of one model only).
    SetupError
        If the ``judges`` extra (the ``krippendorff`` package) is not installed.
    TypeError
        If an argument is not of its annotated type.

    See Also
    --------
    judge_scores : The ratings it compares, one row per attempt and judge.

    Examples
    --------
    Two judges, the second re-scoring the first's run (a replay), agree closely:

    >>> import polars as pl
    >>> from evalnb._analysis.runs import Runs
    >>> runs = Runs.empty()
    >>> runs.set_table("runs", pl.DataFrame({"run_id": ["a", "b"], "model": ["m", "m"],
    ...     "recorded_from": [None, "runs/a"]}))
    >>> runs.set_table("tasks", pl.DataFrame({"run_id": ["a"] * 3 + ["b"] * 3,
    ...     "model": ["m"] * 6, "task_id": ["t1", "t2", "t3"] * 2, "epoch": [1] * 6,
    ...     "judge_model": ["j1"] * 3 + ["j2"] * 3,
    ...     "judge_score": [0.9, 0.2, 0.6, 0.8, 0.1, 0.7]}))
    >>> # D_o = 0.06 / 6, D_e = 2 * 6 * 0.535 / 30, alpha = 1 - D_o / D_e
    >>> judge_agreement(runs).select("raters", "attempts", pl.col("alpha").round(3))
    shape: (1, 3)
    ┌────────┬──────────┬───────┐
    │ raters ┆ attempts ┆ alpha │
    │ ---    ┆ ---      ┆ ---   │
    │ str    ┆ i64      ┆ f64   │
    ╞════════╪══════════╪═══════╡
    │ j1, j2 ┆ 3        ┆ 0.953 │
    └────────┴──────────┴───────┘
    """
    scores = judge_scores(runs)
    wide = scores.pivot(
        on="judge_model", index=["origin", "task_id", "epoch"], values="judge_score"
    ).sort("origin", "task_id", "epoch")
    judges = sorted(set(scores.get_column("judge_model")))
    rows = []
    if len(judges) >= 2:
        rows.append(_alpha(", ".join(judges), wide.select(judges).to_numpy()))
    if labels is not None:
        human = read_labels(labels)
        for judge in judges:
            mine = scores.filter(judge_model=judge)
            twice = mine.filter(pl.struct("task_id", "epoch").is_duplicated())
            if twice.height:
                task_id, epoch = twice.select("task_id", "epoch").row(0)
                raise InputError(
                    labels,
                    None,
                    "task_id",
                    f"judge {judge} scored {task_id} epoch {epoch} in several runs: "
                    "labels name no run; load the runs of one model only",
                )
            pair = human.join(mine, on=["task_id", "epoch"], how="full", coalesce=True)
            rows.append(_alpha(f"{HUMAN}, {judge}", pair.select("label", "judge_score").to_numpy()))
    return pl.DataFrame(rows, schema=_SCHEMA)


def _alpha(raters: str, matrix: np.ndarray) -> dict[str, object]:
    """Alpha and its bootstrap interval of ``matrix`` (one row per attempt, one column
    per rater, NaN where a rater did not score it): the attempts two raters scored."""
    krippendorff = require("krippendorff", "judges")
    matrix = np.asarray(matrix, dtype=float)
    pairable = matrix[(~np.isnan(matrix)).sum(axis=1) >= 2]
    out: dict[str, object] = {"raters": raters, "attempts": len(pairable)}
    if len(pairable) < 2 or np.unique(pairable[~np.isnan(pairable)]).size < 2:
        return out | {"alpha": None, "alpha_lo": None, "alpha_hi": None}

    def alpha(units: np.ndarray) -> float:
        return float(krippendorff.alpha(reliability_data=units.T, level_of_measurement="interval"))

    draws = np.random.default_rng(0).integers(0, len(pairable), (DRAWS, len(pairable)))
    boot = []
    for rows in draws:
        sample = pairable[rows]
        if np.unique(sample[~np.isnan(sample)]).size >= 2:  # alpha needs two values
            boot.append(alpha(sample))
    lo, hi = np.percentile(boot, [2.5, 97.5]) if boot else (None, None)
    return out | {"alpha": alpha(pairable), "alpha_lo": lo, "alpha_hi": hi}


def read_labels(path: str | Path) -> pl.DataFrame:
    """A person's labels: ``task_id``, ``epoch``, ``label`` (as a number from 0 to 1).

    A missing column, an epoch that is not a whole number or a label that is none of
    ``pass``, ``fail``, ``true``, ``false`` or a number from 0 to 1 raises InputError
    naming the file, the line and the field; so does a ``(task_id, epoch)`` given twice.

    Example:
        >>> import tempfile, pathlib
        >>> p = pathlib.Path(tempfile.mkdtemp()) / "labels.csv"
        >>> _ = p.write_text("task_id,epoch,label\\nt1,1,pass\\nt2,1,0.5\\n")
        >>> read_labels(p).get_column("label").to_list()
        [1.0, 0.5]
        >>> _ = p.write_text("task_id,epoch,label\\nt1,1,maybe\\n")
        >>> read_labels(p)
        Traceback (most recent call last):
        ...
        evalnb.errors.InputError: ...labels.csv:2: label: 'maybe' is not pass, fail, ...
    """
    try:
        raw = pl.read_csv(path, infer_schema=False)
    except (OSError, pl.exceptions.PolarsError) as exc:
        raise InputError(path, None, None, f"not a readable CSV: {exc}") from None
    missing = [c for c in ("task_id", "epoch", "label") if c not in raw.columns]
    if missing:
        raise InputError(path, 1, missing[0], "missing column (need task_id, epoch, label)")
    rows = []
    seen: set[tuple[str, int]] = set()
    for line, (task_id, epoch, label) in enumerate(
        raw.select("task_id", "epoch", "label").iter_rows(), start=2
    ):
        if not (epoch or "").strip().isdigit():
            raise InputError(path, line, "epoch", f"{epoch!r} is not a whole number")
        value = _label(label)
        if value is None:
            raise InputError(
                path,
                line,
                "label",
                f"{label!r} is not pass, fail, true, false or a number from 0 to 1",
            )
        key = (task_id, int(epoch))
        if key in seen:
            raise InputError(path, line, "task_id", f"{task_id} epoch {epoch} is labelled twice")
        seen.add(key)
        rows.append((task_id, int(epoch), value))
    return pl.DataFrame(
        rows, schema={"task_id": pl.Utf8, "epoch": pl.Int64, "label": pl.Float64}, orient="row"
    )


def _label(text: str | None) -> float | None:
    """A label as a number from 0 to 1, or None when it is not one."""
    word = (text or "").strip().lower()
    if word in _LABELS:
        return _LABELS[word]
    try:
        value = float(word)
    except ValueError:
        return None
    return value if 0 <= value <= 1 else None
