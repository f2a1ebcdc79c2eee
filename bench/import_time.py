"""``import evalnb`` time, against ``import polars`` (its heaviest dependency) in the same run.

Each figure is the median over fresh interpreters of ``-X importtime``'s cumulative time
for the top-level package. It also lists which heavy parts the import pulled in: only the
analysis layer should load (no runtime, providers, sandboxes, altair or notebook stack).

evalnb is timed with its bytecode compiled first (``compileall`` into the package's
``__pycache__``), as ``pip install`` leaves an installed wheel, and as polars' own wheel
is installed. Without it, a checkout under ``PYTHONDONTWRITEBYTECODE=1`` recompiles
every module on every import, which no installed copy does.

It also times the first ``en.summary`` call in a fresh interpreter, on a run of the
``bash`` suite with 3 epochs (``sim/careful``), whose intervals need Student's t
quantiles: the first call pays for whatever the metrics import on first use (scipy's
``special`` module for the quantiles).

Run: ``python -m bench.import_time``.
"""

from __future__ import annotations

import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

import evalnb

RUNS = 15
HEAVY = (
    "evalnb._runtime",
    "evalnb._present",
    "altair",
    "anthropic",
    "openai",
    "bashkit",
    "IPython",
)


def import_us(module: str) -> tuple[int, set[str]]:
    """(cumulative microseconds of ``import module`` in a fresh interpreter, modules loaded)."""
    err = subprocess.run(
        [sys.executable, "-X", "importtime", "-c", f"import {module}"],
        capture_output=True,
        text=True,
        check=True,
    ).stderr
    rows = [line.removeprefix("import time:").split("|") for line in err.splitlines()]
    loaded = {name.strip() for *_, name in rows}
    cumulative = next(int(cum) for _, cum, name in rows if name.strip() == module)
    return cumulative, loaded


FIRST_SUMMARY = """
import sys, time
import evalnb as en
runs = en.load(sys.argv[1])
wall, cpu = time.perf_counter(), time.process_time()
en.summary(runs)
print(time.perf_counter() - wall, time.process_time() - cpu, "scipy" in sys.modules)
"""


def first_summary(folder: Path) -> tuple[float, float, bool]:
    """(wall s, CPU s, scipy imported) of the first ``en.summary`` in a fresh interpreter."""
    out = subprocess.run(
        [sys.executable, "-c", FIRST_SUMMARY, str(folder)],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    return float(out[0]), float(out[1]), out[2] == "True"


def summary_lines() -> list[str]:
    """The first ``en.summary`` call's cost on a 3-epoch run of the bash suite."""
    with tempfile.TemporaryDirectory() as tmp:
        run = ["run", "bash", "--model", "sim/careful", "--epochs", "3", "--quiet", "--out"]
        subprocess.run(
            [sys.executable, "-m", "evalnb._cli", *run, tmp], capture_output=True, check=True
        )
        [folder] = Path(tmp).iterdir()
        times = [first_summary(folder) for _ in range(RUNS)]
    wall = statistics.median(t[0] for t in times)
    cpu = statistics.median(t[1] for t in times)
    return [
        "",
        f"| first `en.summary` (bash suite, 3 epochs; median of {RUNS} fresh interpreters) "
        "| seconds |",
        "|---|---:|",
        f"| wall | {wall:.3f} |",
        f"| CPU | {cpu:.3f} |",
        "",
        f"scipy imported by it: {'yes' if any(t[2] for t in times) else 'no'}.",
    ]


def lines() -> list[str]:
    """The Markdown table of this benchmark."""
    package = str(Path(evalnb.__file__).parent)
    subprocess.run([sys.executable, "-m", "compileall", "-q", package], check=True)
    evalnb_s = [import_us("evalnb") for _ in range(RUNS)]
    polars_s = [import_us("polars")[0] for _ in range(RUNS)]
    ours = statistics.median(us for us, _ in evalnb_s) / 1e6
    peer = statistics.median(polars_s) / 1e6
    loaded = set().union(*(names for _, names in evalnb_s))
    heavy = sorted(h for h in HEAVY if any(n == h or n.startswith(h + ".") for n in loaded))
    return [
        f"| import (median of {RUNS} fresh interpreters) | seconds |",
        "|---|---:|",
        f"| `import evalnb` (bytecode compiled, as installed) | {ours:.3f} |",
        f"| `import polars` | {peer:.3f} |",
        f"| ratio evalnb / polars | {ours / peer:.2f} |",
        "",
        f"Heavy parts loaded by `import evalnb`: {', '.join(heavy) or 'none'} "
        f"(target: none of {', '.join(HEAVY)}; the target time is under 0.3 s).",
    ]


if __name__ == "__main__":
    print("\n".join(lines() + summary_lines()))
