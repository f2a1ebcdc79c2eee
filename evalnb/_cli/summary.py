"""``evalnb summary`` and ``evalnb report``: spec 000 figures of runs and result files."""

from __future__ import annotations

import argparse
import importlib.util
import json
from typing import Any

from evalnb._cli.args import add_reader_options, k_list, out_folder, reader_options

DATASET_HELP = (
    "the dataset the imported runs ran (built-in name or tasks file): "
    "runs lacking some of its tasks are marked partial"
)


def register(sub: Any) -> None:
    """Add ``summary`` and ``report`` to the subcommand parsers."""
    summ = sub.add_parser("summary", help="spec 000 summary of runs and result files")
    summ.add_argument("paths", nargs="+", help="run folders, result JSON files, globs")
    summ.add_argument("--json", action="store_true", help="one JSON object per run")
    summ.add_argument("--prices", help="token price table (default: the packaged prices)")
    summ.add_argument("--dataset", help=DATASET_HELP)
    summ.add_argument(
        "--k",
        type=k_list,
        default=[],
        metavar="K,...",
        help="add pass@k and pass^k (with 95%% intervals) for each k, e.g. --k 1,3",
    )
    summ.add_later(add_reader_options)
    summ.set_defaults(func=_cmd_summary)

    rep = sub.add_parser(
        "report", help="write report.md, report.json, comparison.md and report.html"
    )
    rep.add_argument("paths", nargs="+", help="run folders, result JSON files, globs")
    rep.add_argument(
        "--out", type=out_folder, default="reports/latest", help="folder (default reports/latest)"
    )
    rep.add_argument("--prices", help="token price table (default: the packaged prices)")
    rep.add_argument("--dataset", help=DATASET_HELP)
    rep.add_argument(
        "--labels",
        metavar="CSV",
        help="a person's labels (task_id, epoch, label): report.html adds each judge's "
        "agreement with them",
    )
    rep.add_later(add_reader_options)
    rep.set_defaults(func=_cmd_report)


def _cmd_summary(args: argparse.Namespace) -> int:
    from evalnb._analysis.cost import load_prices
    from evalnb._analysis.load import load
    from evalnb._present.report import pass_at_k_lines, summary_records, terminal_report

    prices = load_prices(args.prices)
    runs = load(*args.paths, dataset=args.dataset, options=reader_options(args))
    if args.json:
        for record in summary_records(runs, prices, k=args.k):
            print(json.dumps(record, default=str))
    else:
        print(terminal_report(runs, prices))
        if args.k:
            print("\n" + pass_at_k_lines(runs, args.k))
    return 0


def _cmd_report(args: argparse.Namespace) -> int:
    from evalnb._analysis.cost import load_prices
    from evalnb._analysis.load import load
    from evalnb._present.report import write_report

    prices = load_prices(args.prices)
    runs = load(*args.paths, dataset=args.dataset, options=reader_options(args))
    page = None  # first, so that bad --labels leave no report half-written
    if importlib.util.find_spec("vl_convert"):
        from evalnb._present.report_html import write_report_html

        page = write_report_html(runs, args.out, labels=args.labels)
    else:
        dropped = " (and with it --labels)" if args.labels else ""
        print(f"report.html skipped{dropped}: pip install 'evalnb[export]'")
    written = write_report(runs, args.out, prices)
    if page is not None:
        written["report.html"] = page
    for name, path in written.items():
        print(f"{name:<14} {path}")
    return 0
