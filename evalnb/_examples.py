"""Small real runs for the docstrings' examples: the frames they print are real figures.

Both are made offline on first use, once per process, in a temporary folder.
"""

from __future__ import annotations

import asyncio
import functools
import tempfile
from pathlib import Path

from evalnb._analysis.load import load
from evalnb._analysis.runs import Runs
from evalnb._resources import dataset_path
from evalnb._runtime.cases import load_cases
from evalnb._runtime.runner import run_cases


@functools.cache
def example_runs() -> Runs:
    """Two simulated models, ``sim/careful`` and ``sim/hasty``, on the 3 smoke tasks, 2
    epochs each, seeded: the runs ``careful`` and ``hasty``.

    Example:
        >>> example_runs().runs.select("run_id", "model", "task_count").sort("run_id")
        shape: (2, 3)
        ┌─────────┬─────────────┬────────────┐
        │ run_id  ┆ model       ┆ task_count │
        │ ---     ┆ ---         ┆ ---        │
        │ str     ┆ str         ┆ i64        │
        ╞═════════╪═════════════╪════════════╡
        │ careful ┆ sim/careful ┆ 6          │
        │ hasty   ┆ sim/hasty   ┆ 6          │
        └─────────┴─────────────┴────────────┘
    """
    out = Path(tempfile.mkdtemp(prefix="evalnb-examples-"))
    run = run_cases(
        load_cases(dataset_path("smoke")),
        ["sim/careful", "sim/hasty"],
        out,
        epochs=2,
        dataset="smoke",
        run_ids=["careful", "hasty"],
        progress=False,
    )
    asyncio.run(run)
    return load(str(out / "*"))


@functools.cache
def example_guidance_runs() -> Runs:
    """The demo's guidance runs: the notes scenarios under ``AGENTS.md`` versions v1 and v2,
    played by the scripted demo agent (runs ``guidance-v1`` and ``guidance-v2``).

    Example:
        >>> sorted(example_guidance_runs().runs.get_column("guidance"))
        ['v1', 'v2']
    """
    from evalnb._demo import guidance_runs

    out = Path(tempfile.mkdtemp(prefix="evalnb-examples-"))

    async def both() -> None:
        await asyncio.gather(*guidance_runs(out))

    asyncio.run(both())
    return load(str(out / "*"))
