"""Trace sets the size of public ones (issue 28 item 6): 80,000 trajectories, 2M steps.

The largest public SWE-agent trajectory sets hold about 80,000 trajectories of about 25
steps. Made here as Inspect AI ``.eval`` logs (a format evalnb reads): one seed
trajectory run by Inspect itself (its ``mockllm`` model calling a ``bash`` tool
``STEPS`` times, each call with its token counts and its tool's output, then answering),
replicated under new sample ids into logs of ``PER_LOG`` samples. Then, each in a fresh
process:

- evalnb: ``en.load`` of every log into the frames (runs, tasks, llm_calls, tool_calls,
  checks, messages), then ``en.summary``: against the 60 s and 4 GiB limits;
- Inspect: ``samples_df`` of the same logs (one row per sample), stopped after
  ``INSPECT_TIMEOUT_S`` if it has not finished.

Run: ``python -m bench.trace_sets [SAMPLES]`` (default 80,000; needs the ``inspect`` extra;
writing the logs takes about 90 s of CPU at 80,000).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench import scale

SAMPLES = 80_000
STEPS = 25
PER_LOG = 1_000
LIMIT_S, LIMIT_GIB = 60.0, 4.0
INSPECT_TIMEOUT_S = 600
ROOT = Path(__file__).resolve().parents[1]

EVALNB = """
import glob, json, resource, sys, time, warnings
warnings.simplefilter("ignore")
import evalnb as en
cpu = lambda: sum(resource.getrusage(resource.RUSAGE_SELF)[:2])
cpu0, t0 = cpu(), time.perf_counter()
runs = en.load(*sorted(glob.glob(sys.argv[1] + "/*.eval")))
rows = {name: runs.frame(name).height for name in ("tasks", "llm_calls", "tool_calls", "messages")}
en.summary(runs)
print(json.dumps({"wall": time.perf_counter() - t0, "cpu": cpu() - cpu0, "rss_mib": peak_mib(),
                  **rows}))
"""

INSPECT = """
import glob, json, resource, sys, time
from inspect_ai.analysis import samples_df
cpu = lambda: sum(resource.getrusage(resource.RUSAGE_SELF)[:2])
cpu0, t0 = cpu(), time.perf_counter()
frame = samples_df(sorted(glob.glob(sys.argv[1] + "/*.eval")), quiet=True)
print(json.dumps({"wall": time.perf_counter() - t0, "cpu": cpu() - cpu0, "rss_mib": peak_mib(),
                  "tasks": len(frame)}))
"""


def seed_log(out: Path):  # type: ignore[no-untyped-def]
    """One trajectory of ``STEPS`` tool calls and an answer, run by Inspect (mockllm)."""
    from inspect_ai import Task, eval
    from inspect_ai.dataset import Sample
    from inspect_ai.model import ModelOutput, ModelUsage, get_model
    from inspect_ai.scorer import includes
    from inspect_ai.solver import generate, use_tools
    from inspect_ai.tool import tool

    @tool
    def bash():  # type: ignore[no-untyped-def]
        async def execute(cmd: str) -> str:
            """Run a command.

            Args:
                cmd: The command.
            """
            return f"output of {cmd}: " + " ".join(f"line{i}" for i in range(12))

        return execute

    def used(out: ModelOutput, step: int) -> ModelOutput:
        out.usage = ModelUsage(
            input_tokens=1200 + 350 * step, output_tokens=60, total_tokens=1260 + 350 * step
        )
        return out

    script = [
        used(ModelOutput.for_tool_call("mockllm/model", "bash", {"cmd": f"grep -n k{i} f{i}"}), i)
        for i in range(STEPS - 1)
    ] + [used(ModelOutput.from_content("mockllm/model", "done"), STEPS - 1)]
    task = Task(
        dataset=[Sample(id="traj", input="Fix the bug.", target="done")],
        solver=[use_tools(bash()), generate(tool_calls="loop")],
        scorer=includes(),
    )
    model = get_model("mockllm/model", custom_outputs=script)
    [log] = eval(task, model=model, log_dir=str(out), display="none", score_display=False)
    return log


def write_logs(n: int, out: Path) -> None:
    """``n`` trajectories in ``.eval`` logs of ``PER_LOG`` samples under ``out``.

    Written directly (an ``.eval`` log is a zip archive of JSON documents, compressed
    with zstd as Inspect writes them): the seed log's members, with each copy of its
    sample under a new id and uuid, and each log's header, journal and summaries
    naming its own eval id and samples. Inspect's ``write_eval_log`` validated and
    serialised every sample again (about 45 minutes for 80,000); this takes about one
    zstd compression per sample. :func:`check_logs` reads them back with Inspect.
    """
    import zipfile

    from inspect_ai._util.zip_common import ZipCompressionMethod  # also lets zipfile write zstd

    seed = seed_log(out / "seed").location
    with zipfile.ZipFile(seed) as archive:
        member = {name: archive.read(name) for name in archive.namelist()}
    [sample_name] = [name for name in member if name.startswith("samples/")]
    sample = member[sample_name]
    [summary] = json.loads(member["summaries.json"])
    seed_id, seed_uuid = json.dumps(summary["id"]), summary["uuid"]
    head = b'{"id":' + seed_id.encode() + b","
    assert sample.startswith(head) and sample.count(seed_uuid.encode()) == 1
    header, start = json.loads(member["header.json"]), json.loads(member["_journal/start.json"])
    for part, first in enumerate(range(0, n, PER_LOG)):
        ids = [f"traj-{i}" for i in range(first, min(n, first + PER_LOG))]
        eval_id = f"set{part:04d}"
        for doc in (header, start):
            doc["eval"]["eval_id"] = eval_id
            doc["eval"]["dataset"].update(samples=len(ids), sample_ids=ids)
        results = header["results"]
        results["total_samples"] = results["completed_samples"] = len(ids)
        for score in results["scores"]:
            score["scored_samples"] = len(ids)
        summaries = [{**summary, "id": i, "uuid": f"{eval_id}-{i}"} for i in ids]
        with zipfile.ZipFile(out / f"part-{part:04d}.eval", "w", ZipCompressionMethod.ZSTD) as log:
            log.writestr("_journal/start.json", json.dumps(start))
            for i in ids:
                body = sample.replace(seed_uuid.encode(), f"{eval_id}-{i}".encode())
                body = b'{"id":' + json.dumps(i).encode() + b"," + body[len(head) :]
                log.writestr(f"samples/{i}_epoch_1.json", body)
            log.writestr("summaries.json", json.dumps(summaries))
            log.writestr("reductions.json", member["reductions.json"])
            log.writestr("header.json", json.dumps(header))
    check_logs(out, n)


def check_logs(out: Path, n: int) -> None:
    """Check with Inspect's own reader that the written logs are valid: every log's header
    and sample summaries, and the first and last sample read whole (validated)."""
    from inspect_ai.log import read_eval_log, read_eval_log_sample, read_eval_log_sample_summaries

    logs = sorted(out.glob("part-*.eval"))
    ids = [s.id for path in logs for s in read_eval_log_sample_summaries(str(path))]
    assert ids == [f"traj-{i}" for i in range(n)], "the logs do not hold the samples written"
    for path, sample_id in ((logs[0], ids[0]), (logs[-1], ids[-1])):
        header = read_eval_log(str(path), header_only=True)
        assert header.status == "success" and header.eval.dataset.samples == len(
            header.eval.dataset.sample_ids or []
        )
        sample = read_eval_log_sample(str(path), id=sample_id, epoch=1)
        assert sample.id == sample_id and len(sample.events) > STEPS


def _run(code: str, folder: Path, timeout: float | None = None) -> dict[str, float] | None:
    """A measuring script in a fresh process (None when it did not finish in time)."""
    try:
        done = subprocess.run(
            [sys.executable, "-c", scale.PEAK + code, str(folder)],
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )
    except subprocess.TimeoutExpired:
        return None
    if done.returncode:
        raise RuntimeError(done.stderr[-3000:])
    return json.loads(done.stdout.strip().splitlines()[-1])


def lines(n: int = SAMPLES) -> list[str]:
    """Markdown lines for bench/RESULTS.md."""
    with tempfile.TemporaryDirectory() as tmp:
        started = time.perf_counter()
        write_logs(n, Path(tmp))
        written = time.perf_counter() - started
        load = os.getloadavg()[0]
        ours = _run(EVALNB, Path(tmp))
        theirs = _run(INSPECT, Path(tmp), INSPECT_TIMEOUT_S)
    assert ours is not None
    steps = ours["llm_calls"]
    out = [
        f"{n:,} trajectories of {STEPS} steps ({steps:,.0f} LLM calls, {ours['tool_calls']:,.0f} "
        f"tool calls) in {n // PER_LOG} Inspect .eval logs, written in {written:.0f} s; load "
        f"average {load:.1f} before.",
        "",
        "| | wall (s) | CPU (s) | peak RSS (GiB) |",
        "|---|---:|---:|---:|",
        f"| evalnb: en.load into the frames + en.summary | {ours['wall']:.1f} | {ours['cpu']:.1f} "
        f"| {ours['rss_mib'] / 1024:.2f} |",
    ]
    if theirs is None:
        out.append(f"| Inspect: samples_df | did not finish in {INSPECT_TIMEOUT_S} s | | |")
    else:
        out.append(
            f"| Inspect: samples_df | {theirs['wall']:.1f} | {theirs['cpu']:.1f} "
            f"| {theirs['rss_mib'] / 1024:.2f} |"
        )
    ratio = f"; {ours['wall'] / theirs['wall']:.2f}x Inspect's samples_df" if theirs else ""
    if n == SAMPLES:
        verdict = (
            f"**{ours['wall'] / LIMIT_S:.2f}x the {LIMIT_S:.0f} s limit**, peak RSS "
            f"**{ours['rss_mib'] / 1024 / LIMIT_GIB:.2f}x the {LIMIT_GIB:.0f} GiB limit**"
        )
    else:  # fewer than the goal's: the rate, and what it would come to (not measured)
        per = ours["wall"] / n * 1000
        verdict = (
            f"{per:.2f} ms per trajectory; at that rate {SAMPLES:,} would take about "
            f"{per * SAMPLES / 1000:.0f} s, **{per * SAMPLES / 1000 / LIMIT_S:.1f}x the "
            f"{LIMIT_S:.0f} s limit** (extrapolated, not measured)"
        )
    out += ["", f"- evalnb: {verdict}{ratio}"]
    return out


if __name__ == "__main__":
    print("\n".join(lines(int(sys.argv[1]) if len(sys.argv) > 1 else SAMPLES)))
