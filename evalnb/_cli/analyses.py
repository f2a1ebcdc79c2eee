"""``evalnb flaky``, ``evalnb context`` and ``evalnb judges``: one analysis table of runs each.

- ``flaky RUNS...``: the tasks whose attempts disagree, per model
  (:func:`evalnb._analysis.flaky.flaky_tasks`), after each run's consistency
  (:func:`evalnb._analysis.flaky.consistency`).
- ``context RUNS...``: per attempt, peak context, the calls where it dropped and the
  tokens re-read (:func:`evalnb._analysis.context.context_peaks`).
- ``judges RUNS... [--labels CSV]``: Krippendorff's alpha of the judges, and of each
  judge with a person's labels (:func:`evalnb._analysis.judge_agreement.judge_agreement`).

``--json`` prints one JSON object per row instead of a table.
"""

from __future__ import annotations

import argparse
import json
from typing import Any


def register(sub: Any) -> None:
    """Add ``flaky``, ``context`` and ``judges`` to the subcommand parsers."""
    helps = {
        "flaky": "tasks whose attempts disagree, per model, and each run's consistency",
        "context": "per attempt: peak context, the calls where it dropped, tokens re-read",
        "judges": "Krippendorff's alpha of the judges (and of each with --labels)",
    }
    for name, text in helps.items():
        cmd = sub.add_parser(name, help=text)
        cmd.add_argument("paths", nargs="+", help="run folders, result JSON files, globs")
        cmd.add_argument("--json", action="store_true", help="one JSON object per row")
        if name == "judges":
            cmd.add_argument("--labels", help="a person's labels: CSV of task_id, epoch, label")
        cmd.set_defaults(func=_cmd_table, table=name)


def _cmd_table(args: argparse.Namespace) -> int:
    import polars as pl

    from evalnb._analysis.context import context_peaks
    from evalnb._analysis.flaky import consistency, flaky_tasks
    from evalnb._analysis.judge_agreement import judge_agreement
    from evalnb._analysis.load import load

    runs = load(*args.paths)
    if args.table == "flaky":
        frames = [consistency(runs), flaky_tasks(runs)]
    elif args.table == "context":
        frames = [context_peaks(runs)]
    else:
        frames = [judge_agreement(runs, args.labels)]
    for frame in frames:
        if args.json:
            for row in frame.to_dicts():
                print(json.dumps(row, default=str, ensure_ascii=False))
        else:
            with pl.Config(tbl_rows=-1, tbl_cols=-1, fmt_str_lengths=80, tbl_width_chars=200):
                print(frame)
    return 0
