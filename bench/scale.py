"""Analysis at scale (issue 18): the lazy path on 1M / 10M / 100M tool-call rows.

For each size, synthetic run folders (bench/scale_data.py) are written to a temporary
folder, then, each in a fresh process (so peak RSS is that of the analysis alone):

- evalnb: ``en.load`` + ``summary``, ``by_category``, ``context_growth(by="run")``
  and ``interaction(by="run")``, each timed;
- DuckDB (from 10M rows, when installed: ``pip install -e '.[bench]'``): the same
  figures in SQL over the same parquet files and columns: summary's totals, cost and
  the task-clustered sums behind its three intervals (the Wilson limits themselves are
  a few array operations per run), by_category's counts and clustered sums, per-run
  context growth and the per-run sums of the stored command counts. The ratio is
  evalnb's whole time (load included) over DuckDB's.

Both read only what a run folder stores in its tasks table: one row per attempt with the
figures summed from its tool and LLM calls and its command counts, written once when the
run ends (see bench/scale_data.py, :func:`evalnb._store.tables.with_call_figures` and
:func:`evalnb._store.command_counts.with_command_counts`); neither reads the call rows.

Before any timing, every parquet file is read once, so that neither engine pays for
the disk (whichever ran first would otherwise read the files cold). Each engine then
runs ``REPEATS`` times, the two alternating, and the run with the median total counts.

The data is deleted after each size, unless ``BENCH_SCALE_DATA`` names a folder to keep
it in (``rows-N`` inside, reused by later runs: 100M rows take minutes to write and
~8 GB). Both scripts also report their CPU seconds (user + system): on a machine shared
with other work, CPU time varies less than wall time.

Run: ``python -m bench.scale [ROWS ...]``.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench import scale_data

SIZES = (1_000_000, 10_000_000, 100_000_000)
REPEATS = 3
LIMIT_SECONDS, LIMIT_GIB = 10.0, 4.0

PEAK = """
# this process's own peak RSS (ru_maxrss would keep the parent's peak from before exec)
def peak_mib():
    with open("/proc/self/status") as status:
        return next(int(l.split()[1]) for l in status if l.startswith("VmHWM")) / 1024
"""

EVALNB = """
import json, resource, sys, time, warnings
warnings.simplefilter("ignore")
import evalnb as en
cpu0 = sum(resource.getrusage(resource.RUSAGE_SELF)[:2])
t0 = time.perf_counter()
cpu = lambda: sum(resource.getrusage(resource.RUSAGE_SELF)[:2])
runs = en.load(sys.argv[1])
out = {"load": time.perf_counter() - t0, "load_cpu": cpu() - cpu0}
steps = [("summary", en.summary), ("by_category", en.by_category),
         ("context_growth", lambda r: en.context_growth(r, by="run")),
         ("interaction", lambda r: en.interaction(r, by="run"))]
for name, fn in steps:
    t, c = time.perf_counter(), cpu()
    fn(runs)
    out[name] = time.perf_counter() - t
    out[f"{name}_cpu"] = cpu() - c
out["total"] = time.perf_counter() - t0
usage = resource.getrusage(resource.RUSAGE_SELF)
out["cpu_s"] = usage.ru_utime + usage.ru_stime - cpu0
out["rss_mib"] = peak_mib()
print(json.dumps(out))
"""

DUCKDB = """
import json, resource, sys, time
import duckdb
root = sys.argv[1]
cpu0 = sum(resource.getrusage(resource.RUSAGE_SELF)[:2])
t0 = time.perf_counter()
con = duckdb.connect()
con.execute("SET enable_progress_bar = false")
con.execute(f'''create view t as select *, (coalesce(passed, false) and error is null)::int
    as pass, coalesce(cache_read_tokens, 0) as cr, coalesce(cache_write_tokens, 0) as cw
    from read_parquet('{root}/*/tasks.parquet')''')
q = lambda s: con.execute(s).fetchall()
# summary: per-run totals (tool calls from the stored counts), cost (one price row per
# model) and the task-clustered sums behind its three intervals, grouped by task once
q('''select run_id, count(*), count(distinct task_id), sum(pass), count(error), sum(score),
     sum(max_score), sum(turns), sum(total_input_tokens), sum(total_output_tokens),
     sum(duration_ms), avg(natural_stop::int),
     sum(((total_input_tokens - cr - cw) * 3 + cr * 0.3 + cw * 3.75
          + total_output_tokens * 15) / 1e6) from t group by run_id''')
q('''with k as (select run_id, task_id, sum(pass) as y, count(*) as m, sum(score) as s,
       sum(max_score) as x, sum(tool_calls_ok) as o,
       sum(tool_calls_ok + tool_calls_error) as n from t group by all)
     select run_id, count(*), sum(y), sum(y * y), sum(y * m), sum(m * m), sum(s), sum(x),
       sum(s * s), sum(s * x), sum(x * x), sum(o), sum(n), sum(o * o), sum(o * n),
       sum(n * n) from k group by run_id''')
# by_category: counts and both clustered sums
q('''with k as (select run_id, category, task_id, sum(pass) as y, count(*) as m,
       sum(score) as s, sum(max_score) as x from t group by all)
     select run_id, category, count(*), sum(m), sum(y), sum(s), sum(x), sum(y * y),
       sum(y * m), sum(m * m), sum(s * s), sum(s * x), sum(x * x) from k group by all''')
# context_growth by run
q('''select run_id, model, count(*), avg((base_context is not null)::int),
     avg(llm_call_count), avg(base_context), avg(context_growth_avg),
     avg(final_cumulative_input), median(base_context), median(context_growth_avg),
     median(final_cumulative_input) from t group by all''')
# interaction by run: the stored command counts
q('''select run_id, count(*), sum((natural_stop and error is null)::int),
     count(natural_stop), sum(total_commands), sum(unique_commands), sum(error_count),
     sum(retry_count), sum(help_invocations), sum(first_try_successes) from t group by all''')
usage = resource.getrusage(resource.RUSAGE_SELF)
out = {"total": time.perf_counter() - t0, "cpu_s": usage.ru_utime + usage.ru_stime - cpu0,
       "rss_mib": peak_mib()}
print(json.dumps(out))
"""


def _run(code: str, folder: str | Path) -> dict[str, float]:
    """Run a measuring script (it may call ``peak_mib()``) in a fresh process: its JSON,
    with ``folder`` (a path or URL) as its argument."""
    argv = [sys.executable, "-c", PEAK + code, str(folder)]
    done = subprocess.run(argv, capture_output=True, text=True)
    if done.returncode:
        raise RuntimeError(done.stderr)
    return json.loads([line for line in done.stdout.splitlines() if line.startswith("{")][-1])


def has_duckdb() -> bool:
    """True when the bench extra (DuckDB) is installed."""
    try:
        import duckdb  # noqa: F401
    except ImportError:
        return False
    return True


def measure(rows: int, root: Path, *, keep: bool = False) -> dict[str, object]:
    """Write ~rows tool-call rows under root (or reuse them when ``keep``), measure evalnb
    (and DuckDB from 10M rows on), then delete them unless ``keep``."""
    folder = root / f"rows-{rows}"
    done = root / f"rows-{rows}.json"  # the data is complete (outside: load reads *.json)
    started = time.perf_counter()
    if keep and done.exists():
        kept = json.loads(done.read_text())["rows"]
        if not isinstance(kept, list):  # written before the tasks stored their counts
            raise SystemExit(f"{folder}: kept data predates stored counts; delete it and rerun")
        written, counting = kept
    else:
        shutil.rmtree(folder, ignore_errors=True)
        written, counting = scale_data.write_store(rows, folder)
        done.write_text(json.dumps({"rows": [written, counting]}))
    write_s = time.perf_counter() - started
    files = sorted(folder.rglob("*.parquet"))
    for file in files:  # into the page cache, for both engines alike
        with file.open("rb") as f:
            while f.read(1 << 24):
                pass
    engines = {"evalnb": EVALNB}
    if rows >= 10_000_000 and has_duckdb():
        engines["duckdb"] = DUCKDB
    timings: dict[str, list[dict[str, float]]] = {name: [] for name in engines}
    for _ in range(REPEATS):
        for name, code in engines.items():
            timings[name].append(_run(code, folder))
    result: dict[str, object] = {
        "rows": written,
        "write_s": write_s,
        "counting_s": counting,
        "disk_mib": sum(file.stat().st_size for file in files) / 2**20,
    }
    for name, runs in timings.items():
        result[name] = sorted(runs, key=lambda run: run["total"])[len(runs) // 2]
    if not keep:
        shutil.rmtree(folder)
    return result


def section(sizes: tuple[int, ...] = SIZES) -> list[str]:
    """Markdown lines for bench/RESULTS.md."""
    lines = [
        "| tool-call rows | parquet (MiB) | load | summary | by_category | context_growth "
        "| interaction | total (s) | CPU (s) | peak RSS (MiB) |",
        "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    notes = []
    kept = os.environ.get("BENCH_SCALE_DATA")
    with tempfile.TemporaryDirectory() as tmp:
        for rows in sizes:
            r = measure(rows, Path(kept or tmp), keep=bool(kept))
            e = r["evalnb"]
            assert isinstance(e, dict)
            lines.append(
                f"| {r['rows']:,} | {r['disk_mib']:.0f} | {e['load']:.2f} | {e['summary']:.2f} "
                f"| {e['by_category']:.2f} | {e['context_growth']:.2f} | {e['interaction']:.2f} "
                f"| {e['total']:.2f} | {e['cpu_s']:.2f} | {e['rss_mib']:.0f} |"
            )
            counting = r["counting_s"]
            assert isinstance(counting, float)
            notes.append(
                f"- {r['rows']:,} rows: storing the command counts when the run folders were "
                f"written took {counting:.1f} s ({counting / float(r['rows']) * 1e6:.2f} us per "
                "tool call), once per run (in finalize), not per analysis"
            )
            if "duckdb" in r:
                d = r["duckdb"]
                assert isinstance(d, dict)
                ours, ours_cpu = e["total"], e["cpu_s"]
                notes.append(
                    f"- {r['rows']:,} rows, all five steps (median of {REPEATS} fresh processes "
                    "each, alternating, files in the page cache): "
                    f"evalnb {ours:.2f} s ({ours_cpu:.2f} s CPU), "
                    f"DuckDB (the same figures in SQL) {d['total']:.2f} s "
                    f"({d['cpu_s']:.2f} s CPU): **{ours / d['total']:.2f}x DuckDB** "
                    f"({ours_cpu / d['cpu_s']:.2f}x in CPU; goal <= 2x). Peak RSS "
                    f"{e['rss_mib']:.0f} MiB (evalnb) vs {d['rss_mib']:.0f} MiB"
                )
            if rows >= 100_000_000:
                notes.append(
                    f"- {r['rows']:,} rows, load and all four: {e['total']:.2f} s = "
                    f"**{e['total'] / LIMIT_SECONDS:.2f}x the {LIMIT_SECONDS:.0f} s limit**, "
                    f"peak RSS {e['rss_mib'] / 1024:.2f} GiB = "
                    f"**{e['rss_mib'] / 1024 / LIMIT_GIB:.2f}x the {LIMIT_GIB:.0f} GiB limit**"
                )
    return [*lines, "", *notes]


if __name__ == "__main__":
    wanted = tuple(int(float(a)) for a in sys.argv[1:]) or SIZES
    print("\n".join(section(wanted)))
