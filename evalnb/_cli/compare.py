"""``evalnb compare RUN_A RUN_B``: a paired comparison of two runs on their shared tasks,
the tasks that flipped, and (``--fail-on-regression``) a gate for CI.

Exit codes: 0, or 1 with ``--fail-on-regression`` when B is significantly worse than A
on a metric named (:func:`evalnb._analysis.regression.regression_gate`), 2 on bad input.
The gate counts an errored attempt as a failed one (so ``--fail-on-regression`` implies
``--include-errored``, and the comparison printed is the one the gate tested); without the
gate, errored attempts are left out of the comparison and counted, unless
``--include-errored``.
"""

from __future__ import annotations

import argparse
import json
from typing import Any

from evalnb import _display as fmt
from evalnb._cli.args import probability


def register(sub: Any) -> None:
    """Add ``compare`` to the subcommand parsers."""
    cmp = sub.add_parser(
        "compare",
        help="paired comparison of two runs on their shared tasks (exact tests for few tasks)",
    )
    cmp.add_argument("run_a", metavar="RUN_A", help="run folder or result file of run A")
    cmp.add_argument("run_b", metavar="RUN_B", help="run folder or result file of run B")
    cmp.add_argument(
        "--include-errored",
        action="store_true",
        help="count errored attempts as failed (default: leave them out and count them; "
        "implied by --fail-on-regression)",
    )
    cmp.add_argument("--json", action="store_true", help="the figures as one JSON object")
    cmp.add_argument(
        "--fail-on-regression",
        action="store_true",
        help="exit 1 when B is significantly worse than A (Holm-adjusted) on a --metric",
    )
    cmp.add_argument(
        "--alpha",
        type=probability,
        default=None,
        help="significance level of --fail-on-regression (default 0.05)",
    )
    cmp.add_argument(
        "--metric",
        default=None,
        metavar="NAME,...",
        help="metrics --fail-on-regression watches: pass_rate (default), weighted_rate",
    )
    cmp.set_defaults(func=_cmd_compare)


def _cmd_compare(args: argparse.Namespace) -> int:
    from evalnb._analysis.compare import compare
    from evalnb._analysis.load import load
    from evalnb._analysis.regression import regression_gate, task_diff
    from evalnb._analysis.runs import Runs
    from evalnb.errors import InputError

    if not args.fail_on_regression and (args.alpha is not None or args.metric is not None):
        raise InputError("--alpha/--metric", None, None, "only with --fail-on-regression")
    runs_a, runs_b = (load(path) for path in (args.run_a, args.run_b))
    for path, runs in ((args.run_a, runs_a), (args.run_b, runs_b)):
        if runs.runs.height != 1:
            raise InputError(path, None, "run", f"expected one run, found {runs.runs.height}")
    id_a = runs_a.runs.get_column("run_id").item()
    id_b = runs_b.runs.get_column("run_id").item()
    if id_a == id_b:
        raise InputError(
            args.run_b, None, "run_id", f"the same run as RUN_A ({id_a}): nothing to compare"
        )
    both = Runs.concat([runs_a, runs_b])
    try:
        result = compare(
            both, id_a, id_b, include_errored=args.include_errored or args.fail_on_regression
        )
    except ValueError as exc:
        raise InputError(args.run_b, None, "task_id", str(exc)) from None
    gate = None
    if args.fail_on_regression:
        metrics = (args.metric or "pass_rate").split(",")
        try:
            gate = regression_gate(result, [m.strip() for m in metrics], args.alpha or 0.05)
        except ValueError as exc:
            raise InputError("--metric", None, None, str(exc)) from None
        errored = _errored_attempts(both, result, (id_a, id_b))
    flips = task_diff(both, id_a, id_b)
    regressed = gate is not None and bool(gate.get_column("regressed").any())
    if args.json:
        doc = result.as_frame().row(0, named=True) | {"flipped": flips.to_dicts()}
        if gate is not None:
            doc |= {
                "regression": gate.to_dicts(),
                "regressed": regressed,
                "errored_counted_failed_a": errored[0],
                "errored_counted_failed_b": errored[1],
            }
        print(json.dumps(doc, default=str, ensure_ascii=False))
    else:
        print(result)
        print("\n" + _flips_text(flips))
        if gate is not None:
            print("\n" + _gate_text(gate, args.alpha or 0.05, errored))
    return 1 if regressed else 0


def _flips_text(flips: Any) -> str:
    """The flipped tasks, pass→fail first, with the checks that failed on each side."""
    counts = flips.get_column("flip").value_counts()
    tally = dict(counts.iter_rows())
    head = (
        f"Tasks that flipped from A to B: {tally.get('pass→fail', 0)} pass→fail, "
        f"{tally.get('fail→pass', 0)} fail→pass"
    )
    lines = [head]
    for r in flips.iter_rows(named=True):
        lines.append(
            f"  {r['flip']}  {_one_line(r['task_id'])}  A {r['passed_a']}/{r['attempts_a']} "
            f"passed, B {r['passed_b']}/{r['attempts_b']}"
        )
        for side in ("a", "b"):
            if r[f"failed_checks_{side}"]:
                failed = ", ".join(map(_one_line, r[f"failed_checks_{side}"]))
                lines.append(f"      {side.upper()} failed: {failed}")
    return "\n".join(lines)


NAME_LIMIT = 120
"""The flips text cuts a check name (or ``error: ...``) longer than this, marking it ``…``."""


def _one_line(name: str) -> str:
    """``name`` on one line: line breaks and tabs as visible escapes, cut at NAME_LIMIT."""
    flat = name.replace("\r", "\\r").replace("\n", "\\n").replace("\t", "\\t")
    return flat if len(flat) <= NAME_LIMIT else flat[: NAME_LIMIT - 1] + "…"


def _errored_attempts(runs: Any, result: Any, run_ids: tuple[str, str]) -> tuple[int, int]:
    """Errored attempts of each run on the tasks compared (the gate counts them as failed)."""
    import polars as pl

    compared = result.per_task.get_column("task_id").implode()
    counts = dict(
        runs.scan("tasks")
        .filter(pl.col("error").is_not_null() & pl.col("task_id").is_in(compared))
        .group_by("run_id")
        .len()
        .collect()
        .iter_rows()
    )
    return counts.get(run_ids[0], 0), counts.get(run_ids[1], 0)


def _gate_text(gate: Any, alpha: float, errored: tuple[int, int]) -> str:
    """One line per metric watched, the errored attempts counted as failed, the verdict."""
    lines = [f"Regression gate (B significantly worse than A at Holm-adjusted p <= {alpha}):"]
    for r in gate.iter_rows(named=True):
        verdict = "REGRESSED" if r["regressed"] else "ok"
        diff = fmt.MISSING if r["diff"] is None else f"{r['diff']:+.3f}"
        p_holm = fmt.p_value(r["p_holm"])
        lines.append(f"  {r['metric']}: A - B {diff}, Holm p {p_holm}: {verdict}")
    if any(errored):
        lines.append(f"  errored attempts counted as failed: {errored[0]} in A, {errored[1]} in B")
    failed = gate.get_column("regressed").any()
    lines.append("FAIL: B regressed" if failed else "PASS: no significant regression")
    return "\n".join(lines)
