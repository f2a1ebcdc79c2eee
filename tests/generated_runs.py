"""Random evaluation worlds for the differential tests, and the paths a run can take.

A :class:`World` is a few bash tasks and CLI-tool scenarios (the ``notes`` tool as a
bashkit builtin, with gates, sometimes a judge, sometimes guidance versions, sometimes
a setup that fails), agents that play random turns per attempt
(:class:`~tests.played.PlayedAgent`: repeated commands, failing commands, help lookups,
a tool that does not exist, replies cut by the output limit, null, cached and huge token
counts, provider errors, a hang cut by the time limit), epochs and a turn limit.
:func:`worlds` draws them with hypothesis. The path functions run or rewrite a world's
runs the ways a user can: the runner itself, replay, shard and merge, the Inspect export
(read back, imported, and read from Inspect's own fields alone), the ATIF and OTel
exports, and parquet tables rebuilt from the events.

Commands are plain words joined by ``&&``, ``||``, ``|`` and ``;`` (no quotes,
redirections or expansions), so the reference can split them without a bash parser.
"""

from __future__ import annotations

import asyncio
import shutil
from dataclasses import dataclass, field
from pathlib import Path

from hypothesis import strategies as st

from evalnb._cli import main
from evalnb._formats.inspect_write import write_inspect_log
from evalnb._formats.scenario import load_scenario
from evalnb._resources import data_path
from evalnb._runtime.bash_case import BashCase
from evalnb._runtime.case import Case
from evalnb._runtime.runner import run_cases
from evalnb._runtime.scenario_case import ScenarioCase
from evalnb.records import Task
from tests.played import PlayedAgent, PlayedJudge, Turn

NOTES = data_path("tools", "notes")
FILES = {"/data/a.txt": "alpha\nbeta\n"}
BASH_COMMANDS = [
    "cat /data/a.txt",
    "cat /data/missing.txt",
    "grep beta /data/a.txt",
    "grep zeta /data/a.txt",
    "wc -l /data/a.txt",
    "echo alpha",
    "touch /out.txt",
    "cp /data/a.txt /out.txt",
    "ls /data",
    "ls -h /data",
    "false",
    "jq --help",
    "git -h",
    "help",
]
"""Simple commands for bash tasks: some fail, some ask for help (``ls -h`` does not)."""
SCENARIO_COMMANDS = [
    "notes list",
    "notes show n1",
    "notes shw n1",
    "notes create --title Standup",
    "notes create --title Retro --tag meeting",
    "notes search Standup",
    "notes --help",
    "notes -h",
    "notes delete n9",
    "ls",
]
"""Commands for the notes scenarios (``ls`` runs no target tool: no invocation)."""
OPERATORS = [" && ", " || ", " | ", "; "]
CHECKS = [
    "exit_code:0",
    "exit_code:1",
    "exit_code:-1",
    "stdout_contains:alpha",
    "stdout_regex:al+pha",
    "stderr_empty",
    "tool_calls_min:1",
    "tool_calls_max:0",
    "tool_calls_max:2",
    "file_exists:/out.txt",
    "file_contains:/out.txt:beta",
]
"""spec 000 checks; the ones reading the trace are decided again by the reference."""
GATES = [
    "{type: command_succeeds, command: notes list}",
    "{type: command_output_contains, command: notes list, substring: Standup}",
    "{type: file_exists, path: .notes/store.json}",
    "{type: no_transcript_errors}",
]
WEIGHTS = [1.0, 1.0, 0.5, 2.0, 0.0]
TIME_LIMIT_S = 2.0
"""The attempt time limit of a world with a hang: long enough for any other attempt."""


@dataclass
class World:
    """Everything one differential example runs (see the module docstring)."""

    tasks: list[Task]
    scenarios: dict[str, str]  # name -> scenario YAML
    judged: bool
    versions: tuple[str, ...]  # guidance versions; () runs the scenarios without guidance
    agents: list[PlayedAgent]
    epochs: int
    max_turns: int
    concurrency: int
    hang: bool
    judge: PlayedJudge = field(default_factory=PlayedJudge)

    @property
    def task_timeout_s(self) -> float | None:
        return TIME_LIMIT_S if self.hang else None

    def bash_cases(self) -> list[Case]:
        return [BashCase(t) for t in self.tasks]

    def scenario_cases(self, folder: Path, version: str | None) -> list[Case]:
        """The scenarios written to ``folder``, with guidance ``version`` (placed in the
        system prompt, where a played agent reads which version it is)."""
        rubric = "criteria:\n  - {id: done, weight: 1.0, description: Done}\n"
        (folder / "rubric.yaml").write_text(rubric)
        (folder / "AGENTS.none.md").write_text("Use notes. GUIDANCE-none\n")
        cases: list[Case] = []
        for name, text in self.scenarios.items():
            path = folder / f"{name}.yaml"
            path.write_text(text)
            guidance = None
            if version is not None:
                file = folder / f"AGENTS.{version}.md"
                file.write_text(f"Use notes. GUIDANCE-{version}\n")
                guidance = (version, file)
            judge = self.judge if self.judged else None
            cases.append(ScenarioCase(load_scenario(path), guidance=guidance, judge=judge))
        return cases


def scenario(name: str, gates: list[str], short_help: bool, broken: bool, judged: bool) -> str:
    setup = '["notes init", "false"]' if broken else '["notes init"]'
    judge = "evaluation:\n  judge: {rubric: rubric.yaml, pass_threshold: 0.6}\n" if judged else ""
    return (
        f"name: {name}\ncategory: notes\n"
        f"target:\n  binary: notes\n  short_help: {str(short_help).lower()}\n"
        f"  builtin: {NOTES / 'notes.py'}:bashkit_builtin\n"
        f"task: Keep notes.\nsetup: {{commands: {setup}}}\n"
        "guidance: {file: AGENTS.none.md, placement: system_prompt}\n"
        f"gates:\n" + "".join(f"  - {g}\n" for g in gates) + judge
    )


@st.composite
def scripts(draw: st.DrawFn, pool: list[str]) -> str:
    """One tool call's script: one to three commands of ``pool`` joined by operators."""
    words = draw(st.lists(st.sampled_from(pool), min_size=1, max_size=3))
    script = words[0]
    for w in words[1:]:
        script += draw(st.sampled_from(OPERATORS)) + w
    return script


@st.composite
def turns(draw: st.DrawFn, pool: list[str], hang: bool) -> Turn:
    """A turn: commands (none: the agent stops), usage, or a provider error or hang."""
    ending = draw(st.sampled_from(["answer"] * 12 + ["error"] + (["hang"] if hang else [])))
    if ending != "answer":
        return Turn(error="HTTP 500" if ending == "error" else None, hang=ending == "hang")
    commands = tuple(draw(st.lists(scripts(pool), min_size=0, max_size=2)))
    size = draw(st.sampled_from(["null", "small", "huge"]))
    tokens = {"null": st.none(), "small": st.integers(0, 5_000), "huge": st.integers(2**40, 2**45)}
    inputs = draw(tokens[size])
    read = write = None
    if inputs is not None and draw(st.booleans()):  # cached parts of the whole prompt
        read = draw(st.integers(0, inputs))
        write = draw(st.none() | st.integers(0, inputs - read))
    return Turn(
        commands=commands,
        tool=draw(st.sampled_from(["bash"] * 9 + ["python"])),  # another tool: exit 127
        stop_reason=None if commands else draw(st.sampled_from([None, None, "max_tokens"])),
        input_tokens=inputs,
        output_tokens=draw(st.none() | st.integers(0, 2_000)),
        cache_read_tokens=read,
        cache_write_tokens=write,
    )


@st.composite
def worlds(draw: st.DrawFn) -> World:
    """A random world (see the module docstring)."""
    n_tasks = draw(st.integers(1, 3))
    tasks = [
        Task(
            id=f"t{i}",
            category=draw(st.sampled_from(["files", "text"])),
            prompt="p",
            files=FILES,
            expectations=[
                {"check": c, "weight": draw(st.sampled_from(WEIGHTS))}
                for c in draw(st.lists(st.sampled_from(CHECKS), min_size=1, max_size=4))
            ],
        )
        for i in range(n_tasks)
    ]
    judged = draw(st.booleans())
    scenarios = {
        f"s{i}": scenario(
            f"s{i}",
            draw(st.lists(st.sampled_from(GATES), min_size=1, max_size=3, unique=True)),
            short_help=draw(st.booleans()),
            broken=draw(st.integers(0, 5)) == 0,  # its setup fails: the work never runs
            judged=judged,
        )
        for i in range(draw(st.integers(0, 2)))
    }
    versions = draw(st.sampled_from([(), ("v1",), ("v1", "v2")])) if scenarios else ()
    epochs = draw(st.sampled_from([1, 1, 2, 2, 3]))
    hang = draw(st.integers(0, 4)) == 0
    agents = []
    for m in range(draw(st.integers(1, 3))):
        plays: dict[tuple[str | int, ...], tuple[Turn, ...]] = {}
        for e in range(1, epochs + 1):
            for t in tasks:
                may_hang = hang and m == 0 and t is tasks[0] and e == 1
                plays[(t.id, e)] = tuple(draw(st.lists(turns(BASH_COMMANDS, may_hang), max_size=4)))
            for name in scenarios:
                for v in versions or ("none",):
                    plays[(name, e, v)] = tuple(
                        draw(st.lists(turns(SCENARIO_COMMANDS, False), max_size=4))
                    )
        agents.append(PlayedAgent(f"m{m}", plays))
    judge = PlayedJudge({name: draw(st.sampled_from([0.3, 0.6, 0.9])) for name in scenarios})
    return World(
        tasks=tasks,
        scenarios=scenarios,
        judged=judged,
        versions=versions,
        agents=agents,
        epochs=epochs,
        max_turns=draw(st.integers(1, 4)),
        concurrency=1 if hang else draw(st.integers(1, 3)),
        hang=hang,
        judge=judge,
    )


def _run(world: World, cases: list[Case], models: list, out: Path, **options) -> list[Path]:
    return asyncio.run(
        run_cases(
            cases,
            models,
            out,
            epochs=world.epochs,
            max_turns=world.max_turns,
            concurrency=world.concurrency,
            task_timeout_s=world.task_timeout_s,
            progress=False,
            **options,
        )
    )


def run_live(world: World, root: Path) -> list[Path]:
    """Every agent on the bash tasks (``<model>-bash``), and on the scenarios once per
    guidance version (``<model>-<version>``, ``<model>-none`` without guidance)."""
    out, folders = root / "live", []
    (root / "scenarios").mkdir()
    for kind in _kinds(world):
        names = [f"{a.model}-{kind}" for a in world.agents]
        guidance = None if kind in ("bash", "none") else kind
        cases = _cases(world, kind, root)
        folders += _run(world, cases, world.agents, out, guidance=guidance, run_ids=names)
    return folders


def _kinds(world: World) -> list[str]:
    """The kinds of run a world makes: ``bash``, then a guidance version or ``none``."""
    kinds = ["bash"] if world.tasks else []
    return kinds + (list(world.versions or ("none",)) if world.scenarios else [])


def _cases(world: World, kind: str, root: Path) -> list[Case]:
    if kind == "bash":
        return world.bash_cases()
    return world.scenario_cases(root / "scenarios", None if kind == "none" else kind)


def replay(world: World, recording: Path, root: Path) -> Path:
    """``replay:<recording>`` of one of the world's runs, on the same cases."""
    cases = _cases(world, recording.name.split("-", 1)[1], root)
    [folder] = _run(world, cases, [f"replay:{recording}"], root / "replay", run_ids=["replay"])
    return folder


def shard_and_merge(world: World, root: Path, shards: int = 2) -> Path:
    """The first agent's first run made again in ``shards`` shard runs, merged by
    ``evalnb merge`` into a run of the same name."""
    kind = _kinds(world)[0]
    agent = world.agents[0]
    folders = [
        _run(
            world,
            _cases(world, kind, root),
            [agent],
            root / "shards",
            guidance=None if kind in ("bash", "none") else kind,
            shard=(i, shards),
            run_ids=[f"shard{i}"],
        )[0]
        for i in range(1, shards + 1)
    ]
    merged = root / "merged" / f"{agent.model}-{kind}"
    assert main(["merge", *map(str, folders), "--out", str(merged)]) == 0
    return merged


def imported(key: str, paths: list[Path], out: Path) -> list[Path]:
    """The run folders ``evalnb import <key> <paths>`` writes into ``out``."""
    before = set(out.glob("*")) if out.exists() else set()
    assert main(["import", key, *map(str, paths), "--out", str(out)]) == 0
    return sorted(set(out.glob("*")) - before)


def inspect_round_trip(folder: Path, root: Path) -> tuple[Path, Path]:
    """The run written as an Inspect log, and that log imported by ``evalnb import
    inspect`` as a run folder."""
    log = write_inspect_log(folder, root / "logs")
    [folder] = imported("inspect", [log], root / "imported")
    return log, folder


def inspect_fields_only(log: Path, root: Path) -> Path:
    """The Inspect log without evalnb's metadata: what any Inspect log has, as Inspect's
    own tools and other harnesses' logs give it."""
    from inspect_ai.log import read_eval_log, write_eval_log

    whole = read_eval_log(str(log))
    whole.eval.metadata = None
    for sample in whole.samples or []:
        sample.metadata = {}
        for event in sample.events:
            event.metadata = None
        for score in (sample.scores or {}).values():
            score.metadata = None
    out = root / "inspect-only" / log.name
    out.parent.mkdir(exist_ok=True)
    write_eval_log(whole, str(out), format="eval")
    return out


def exported(folder: Path, root: Path) -> tuple[Path, Path]:
    """The run written by ``evalnb export atif`` (a Harbor job of ATIF trajectories) and by
    ``evalnb export otel`` (OTLP JSON spans)."""
    atif, otel = root / "atif", root / "otel" / f"{folder.name}.json"
    assert main(["export", "atif", str(folder), "--out", str(atif)]) == 0
    assert main(["export", "otel", str(folder), "--out", str(otel)]) == 0
    return atif / folder.name, otel


def without_parquet(folders: list[Path], root: Path) -> list[Path]:
    """Copies of the run folders with their parquet tables deleted (read from events)."""
    copies = []
    for folder in folders:
        copy = shutil.copytree(folder, root / "events-only" / folder.name)
        for table in copy.glob("*.parquet"):
            table.unlink()
        copies.append(copy)
    return copies
