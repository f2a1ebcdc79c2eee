"""Scoring time per attempt on the notes scenario suite (issues 25 and 26).

``evalnb run notes --model scripted:AGENT --epochs 3`` at concurrency 1, in a fresh
process (the notes scenarios have no ``solution`` for the reference model to run, so a
scripted agent runs the same 12 ``notes`` commands in each, some failing), with
``ScenarioCase.score`` timed: per attempt the wall time of its scoring (its gates,
``no_transcript_errors`` and the interaction score among them; no judge is given) and its
CPU seconds, this process's plus those of its
``multiprocessing`` children (an older evalnb matched every regex in a scorer process
that lives on between attempts; its CPU is read from ``/proc``). The whole run's wall
and CPU seconds (children included) are printed beside them.

Given the source tree of another evalnb (``git archive main | tar -x -C /tmp/old``),
the same run is measured with it too, alternating, 3 rounds each, medians kept, so
both are measured under the same load.

Run: ``python -m bench.scoring [OLD_TREE]``
"""

from __future__ import annotations

import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROUNDS = 3
EPOCHS = 3
AGENT = """turns:
  - commands: ['notes --help', 'notes init', 'notes ad "standup" --tag work']
  - commands: ['notes add "standup at 9" --tag work', 'notes add "lunch"', 'notes list']
  - commands: ['notes show n9', 'notes show n1', 'notes list --format json']
  - commands: ['notes tag n2 food', 'notes search standup', 'notes list --tag work | wc -l']
  - text: done
"""


def _children_cpu() -> float:
    """CPU seconds of this process's live multiprocessing children (from /proc)."""
    import multiprocessing

    ticks = os.sysconf("SC_CLK_TCK")
    total = 0.0
    for child in multiprocessing.active_children():
        try:
            fields = Path(f"/proc/{child.pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        total += (int(fields[11]) + int(fields[12])) / ticks  # utime, stime
    return total


def measure() -> dict[str, float]:
    """One run in this process: per-attempt scoring medians and the run's totals."""
    from evalnb._cli import main
    from evalnb._runtime.scenario_case import ScenarioCase

    walls: list[float] = []
    cpus: list[float] = []
    score = ScenarioCase.score

    async def timed(self, *args, **kwargs):  # type: ignore[no-untyped-def]
        wall, cpu = time.perf_counter(), time.process_time() + _children_cpu()
        try:
            return await score(self, *args, **kwargs)
        finally:
            walls.append(time.perf_counter() - wall)
            cpus.append(time.process_time() + _children_cpu() - cpu)

    ScenarioCase.score = timed  # type: ignore[method-assign]
    with tempfile.TemporaryDirectory() as out:
        agent = Path(out) / "agent.yaml"
        agent.write_text(AGENT)
        runs = Path(out) / "runs"
        argv = ["run", "notes", "--model", f"scripted:{agent}", "--epochs", str(EPOCHS)]
        started = time.perf_counter()
        code = main([*argv, "--concurrency", "1", "--out", str(runs), "--quiet"])
        run_wall = time.perf_counter() - started
        [folder] = runs.iterdir()
        events = [json.loads(line) for line in (folder / "events.jsonl").open()]
    assert code == 0, code
    errors = [e["record"]["error"] for e in events if e["event"] == "task_finished"]
    assert len(errors) == len(walls) and not any(errors), errors  # each scored once, no error
    return {
        "attempts": len(walls),
        "score_wall_ms": statistics.median(walls) * 1000,
        "score_cpu_ms": statistics.median(cpus) * 1000,
        "score_wall_total_s": sum(walls),
        "score_cpu_total_s": sum(cpus),
        "run_wall_s": run_wall,
    }


def _one(tree: Path | None) -> dict[str, float]:
    """:func:`measure` in a fresh interpreter (``tree``: another evalnb's source)."""
    env = dict(os.environ)
    if tree is not None:
        env["PYTHONPATH"] = str(tree)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    done = subprocess.run(  # run in ``tree``, whose evalnb its scorer processes import too
        [sys.executable, __file__, "--measure"], env=env, cwd=tree, capture_output=True, text=True
    )
    if done.returncode != 0:
        raise SystemExit(f"{tree or 'this tree'}: {done.stderr[-3000:]}")
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    figures = json.loads(done.stdout.strip().splitlines()[-1])
    figures["process_cpu_s"] = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
    return figures


def main(argv: list[str]) -> None:
    """Print the figures as Markdown."""
    if argv[:1] == ["--measure"]:
        print(json.dumps(measure()))
        return
    trees: dict[str, Path | None] = {"this tree": None}
    if argv:
        trees[argv[0]] = Path(argv[0]).resolve()
    load = os.getloadavg()[0]
    wall, cpu = time.perf_counter(), resource.getrusage(resource.RUSAGE_CHILDREN)
    rounds: dict[str, list[dict[str, float]]] = {name: [] for name in trees}
    for _ in range(ROUNDS):
        for name, tree in trees.items():
            rounds[name].append(_one(tree))
    print(f"## Scoring per attempt: notes suite, scripted agent, {EPOCHS} epochs\n")
    print(
        "| evalnb | attempts | scoring wall ms (median) | scoring CPU ms (median) "
        "| scoring CPU s (all attempts) | run wall s | run CPU s (children incl.) |"
    )
    print("|---|---|---|---|---|---|---|")
    for name, runs in rounds.items():

        def med(key: str, runs: list[dict[str, float]] = runs) -> float:
            return statistics.median(r[key] for r in runs)

        print(
            f"| {name} | {med('attempts'):.0f} | {med('score_wall_ms'):.1f} "
            f"| {med('score_cpu_ms'):.1f} | {med('score_cpu_total_s'):.2f} "
            f"| {med('run_wall_s'):.2f} | {med('process_cpu_s'):.2f} |"
        )
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    print(
        f"\n{ROUNDS} rounds, medians. Section: {time.perf_counter() - wall:.1f} s wall, "
        f"{used.ru_utime + used.ru_stime - cpu.ru_utime - cpu.ru_stime:.1f} s CPU; "
        f"load average {load:.2f} at start, {os.getloadavg()[0]:.2f} at end."
    )


if __name__ == "__main__":
    main(sys.argv[1:])
