"""``evalnb export``: write runs in another tool's format.

``inspect`` (Inspect AI logs, one ``.eval`` per run under ``--out``, default ``logs/``),
``atif`` (a Harbor job of ATIF trajectories per run under ``--out``, default ``atif/``)
and ``otel`` (one OTLP JSON file of spans, ``--out``, default ``spans.json``; with
``--endpoint URL`` the spans are sent to that OTLP/HTTP receiver, and written too only
when ``--out`` is given).
"""

from __future__ import annotations

import argparse
from typing import Any

from evalnb._cli.args import out_folder
from evalnb.errors import InputError

DEFAULT_OUT = {"inspect": "logs", "atif": "atif", "otel": "spans.json"}


def register(sub: Any) -> None:
    """Add ``export`` to the subcommand parsers."""
    exp = sub.add_parser(
        "export", help="write runs as another tool's format (Inspect AI, ATIF, OpenTelemetry)"
    )
    exp.add_argument("format", choices=list(DEFAULT_OUT))
    exp.add_argument("runs", nargs="+", metavar="RUN_DIR", help="evalnb run folders")
    exp.add_argument("--out", help="where to write (default: logs/, atif/ or spans.json by format)")
    exp.add_argument(
        "--endpoint", help="otel: send the spans to this OTLP/HTTP receiver (needs evalnb[otel])"
    )
    exp.set_defaults(func=_cmd_export)


def _cmd_export(args: argparse.Namespace) -> int:
    out = args.out or DEFAULT_OUT[args.format]
    if args.format != "otel":  # the other formats write folders
        try:
            out_folder(out)
        except argparse.ArgumentTypeError as exc:
            raise InputError("--out", None, None, str(exc)) from None
    if args.format == "otel":
        from evalnb._formats.otel_write import send_otel, write_otel

        if args.endpoint:
            print(f"spans sent: {send_otel(args.runs, args.endpoint)} to {args.endpoint}")
        if args.out or not args.endpoint:
            print(f"spans written: {write_otel(args.runs, out)}")
        return 0
    if args.format == "atif":
        from evalnb._formats.atif_write import write_atif

        for run_dir in args.runs:
            print(f"job written: {write_atif(run_dir, out)}")
        return 0
    from evalnb._formats.inspect_write import write_inspect_log

    for run_dir in args.runs:
        print(f"log written: {write_inspect_log(run_dir, out)}")
    return 0
