"""Loading Inspect AI logs: evalnb (tidy tables + summary) against Inspect's own data frames.

Makes one agentic log with Inspect's ``mockllm`` and a bash tool over bashkit
(``tests/inspect_logs.py``: 8 samples with model, tool and score events, errors and a
limit), replicates its samples under new ids into ``.eval`` logs of 1,000 samples each,
then times on the same logs, side by side:

- evalnb: ``en.summary(en.load(*logs))``: reading every log (the header through
  inspect_ai's reader, each sample's JSON through evalnb's own models of the fields it
  maps) and building the runs, tasks, llm_calls, tool_calls, checks and messages
  tables, then the per-run summary,
- Inspect: ``samples_df(logs)`` + ``events_df(logs)`` with their default columns,

for N = 1,000 and 10,000 samples, and prints the ratio (evalnb / Inspect). Needs the
``inspect`` extra.

Like with like: both sides read every sample of every log in full once (``events_df``
reads the full samples; ``samples_df`` reads the per-sample summaries the log also
holds), and both are timed after one untimed warm-up on the 8-sample seed log, so
neither side's one-time imports are counted (Inspect's ``inspect_ai.analysis`` module
is imported before timing either way). The outputs are not the same: Inspect gives one
row per sample (id, epoch, input, target, scores, token totals, error, limit) and one
per event with three columns (event id, kind, span); evalnb gives more (per-call
tokens and stop reasons, each tool call's command, output and exit code, checks,
messages) and the summary. So the ratio, if anything, flatters Inspect.

Run: ``python -m bench.inspect_load`` (``--sizes 1000`` for a quick run)
"""

from __future__ import annotations

import argparse
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

import polars as pl

import evalnb as en
from evalnb._analysis.runs import Runs

T = TypeVar("T")

PER_LOG = 1_000


def make_logs(n: int, out: Path) -> list[Path]:
    """``n`` samples in ``.eval`` logs of up to ``PER_LOG`` samples, copied from one real run."""
    from inspect_ai.log import read_eval_log, write_eval_log

    from tests.inspect_logs import agentic_log

    seed = read_eval_log(agentic_log(out / "seed").location)
    base = seed.samples or []
    paths = []
    for start in range(0, n, PER_LOG):
        count = min(PER_LOG, n - start)
        samples = [
            base[i % len(base)].model_copy(update={"id": f"{base[i % len(base)].id}-{i}"})
            for i in range(start, start + count)
        ]
        log = seed.model_copy(update={"samples": samples})
        path = out / f"part-{start // PER_LOG:03d}.eval"
        log.eval = log.eval.model_copy(update={"eval_id": f"bench{start // PER_LOG:03d}"})
        write_eval_log(log, str(path))
        paths.append(path)
    return paths


def _timed(fn: Callable[[], T]) -> tuple[float, T]:
    started = time.perf_counter()
    result = fn()
    return time.perf_counter() - started, result


def _evalnb(logs: list[Path]) -> pl.DataFrame:
    """What evalnb does with the logs: every tidy table, then the per-run summary."""
    runs = en.load(*logs)
    assert isinstance(runs, Runs)
    return en.summary(runs)


def measure(n: int) -> dict[str, float]:
    """Seconds for evalnb and for Inspect on the same ``n`` samples, and their ratio."""
    from inspect_ai.analysis import events_df, samples_df

    with tempfile.TemporaryDirectory() as tmp:
        logs = make_logs(n, Path(tmp))
        names = [str(p) for p in logs]
        seed = sorted((Path(tmp) / "seed").glob("*.eval"))
        _evalnb(seed)  # warm-up, untimed: first-use imports on both sides
        samples_df([str(p) for p in seed], quiet=True)
        events_df([str(p) for p in seed], quiet=True)
        ours, summary = _timed(lambda: _evalnb(logs))
        theirs, _ = _timed(lambda: (samples_df(names, quiet=True), events_df(names, quiet=True)))
    return {
        "samples": float(summary["total_tasks"].sum()),
        "tool_calls": float(summary["total_tool_calls"].sum()),
        "evalnb_s": ours,
        "inspect_s": theirs,
        "ratio": ours / theirs,
    }


def main() -> None:
    """Print one Markdown table row per size."""
    parser = argparse.ArgumentParser(prog="python -m bench.inspect_load")
    parser.add_argument("--sizes", type=int, nargs="+", default=[1_000, 10_000])
    sizes = parser.parse_args().sizes
    print("| samples | tool calls | evalnb load + summary | samples_df + events_df | ratio |")
    print("|---|---|---|---|---|")
    for n in sizes:
        m = measure(n)
        print(
            f"| {m['samples']:,.0f} | {m['tool_calls']:,.0f} | {m['evalnb_s']:.2f} s "
            f"| {m['inspect_s']:.2f} s | {m['ratio']:.2f}x |"
        )


if __name__ == "__main__":
    main()
