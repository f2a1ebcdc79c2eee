"""The cost of recording the tool under test in local mode (issue 14).

For each local confinement mode that works here, two sandboxes on the real ``notes``
executable, one recording it (the wrapper mounted over the executable, or first on
``PATH`` unconfined) and one not, run ``notes list`` in alternation, ``ROUNDS`` times
each; the medians per call and their difference are printed. Alternating the two
keeps a noisy shared machine's drift out of the difference.

Run: ``python -m bench.recording``
"""

from __future__ import annotations

import asyncio
import statistics
import time
import warnings

from evalnb._resources import data_path
from evalnb._runtime.sandbox import local

ROUNDS = 30
COMMAND = "notes list"


def per_call_ms(mode: str, rounds: int = ROUNDS) -> dict[str, float]:
    """Median ms per ``notes list`` call without and with recording, in ``mode``."""
    bin_dir = data_path("tools", "notes", "bin")
    original = local.confinement
    local.confinement = lambda: mode  # type: ignore[assignment]
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # unconfined warns
            boxes = {
                rec: local.LocalSandbox(path_dirs=[bin_dir], record=rec, confine=mode != "none")
                for rec in (None, "notes")
            }
    finally:
        local.confinement = original
    times: dict[str | None, list[float]] = {None: [], "notes": []}
    try:
        for box in boxes.values():
            asyncio.run(box.exec("notes init"))
        for _ in range(rounds):
            for rec, box in boxes.items():
                started = time.perf_counter()
                asyncio.run(box.exec(COMMAND))
                times[rec].append((time.perf_counter() - started) * 1000)
    finally:
        for box in boxes.values():
            box.close()
    plain, recorded = statistics.median(times[None]), statistics.median(times["notes"])
    return {"plain_ms": plain, "recorded_ms": recorded, "added_ms": recorded - plain}


def main() -> None:
    """Print the table."""
    print(f"| mode | `{COMMAND}` not recorded | recorded | added per call |")
    print("|---|---|---|---|")
    for mode in local.MODES:
        if mode != "none" and not local.works(mode):
            continue
        row = per_call_ms(mode)
        print(
            f"| {mode} | {row['plain_ms']:.0f} ms | {row['recorded_ms']:.0f} ms "
            f"| {row['added_ms']:+.0f} ms |"
        )


if __name__ == "__main__":
    main()
