"""Simulated agents: deterministic, isolated per attempt, and clearly different personas."""

from __future__ import annotations

import asyncio
import itertools
import json
import math
import random
from pathlib import Path
from statistics import mean, median

import bashkit
import pytest

from evalnb._formats.tasks import load_tasks
from evalnb._runtime.agent import run_agent
from evalnb._runtime.providers.sim import (
    PERSONAS,
    UNSUPPORTED,
    WRONG_FLAGS,
    SimProvider,
    make_mistake,
    persona_table,
    split_steps,
)
from evalnb._runtime.sandbox import BashkitSandbox
from evalnb._scoring.expectations import score_task
from evalnb.errors import ProviderError
from evalnb.records import Task
from evalnb.records.interfaces import ChatRequest

DATASET = Path(__file__).resolve().parents[1] / "data" / "tasks" / "bash.jsonl"


def built_tasks() -> list[Task]:
    """24 small tasks (6 shapes x 4 variants) whose solutions pass with the reference agent."""
    tasks = []
    for k in range(4):
        words = ["apple", "pear", "fig", "plum", "kiwi"][: 3 + k % 3]
        lines = [w for i, w in enumerate(words) for _ in range(i + 1 + k)]
        top = words[-1]
        tasks.append(
            Task(
                id=f"count_words_{k}",
                category="pipelines",
                prompt="Count each word in /data/words.txt, most frequent first, into /out/c.txt.",
                files={"/data/words.txt": "\n".join(lines) + "\n"},
                expectations=[
                    {"check": "file_exists:/out/c.txt"},
                    {"check": f"stdout_contains:{top}"},
                    {"check": "exit_code:0"},
                ],
                solution=(
                    "mkdir -p /out\n"
                    "sort /data/words.txt | uniq -c | sort -rn > /out/c.txt\n"
                    "head -n 3 /out/c.txt"
                ),
            )
        )
        qty = [3, 12, 7, 1, 20][: 3 + k % 3]
        items = ",".join(f'{{"name":"item{i}","qty":{q}}}' for i, q in enumerate(qty))
        low = [f"item{i}" for i, q in enumerate(qty) if q < 5]
        tasks.append(
            Task(
                id=f"json_low_stock_{k}",
                category="json_processing",
                prompt="List items with qty < 5 from /data/inv.json into /out/low.txt.",
                files={"/data/inv.json": f'{{"items":[{items}]}}'},
                expectations=[
                    {"check": f"file_contains:/out/low.txt:{low[0]}"},
                    {"check": f"stdout_contains:{low[-1]}"},
                    {"check": "exit_code:0"},
                ],
                solution=(
                    "mkdir -p /out\n"
                    "jq -r '.items[] | select(.qty < 5) | .name' /data/inv.json > /out/low.txt\n"
                    "cat /out/low.txt"
                ),
            )
        )
        port = 9000 + k
        tasks.append(
            Task(
                id=f"config_edit_{k}",
                category="text_processing",
                prompt=f"Back up /etc/app.conf to /etc/app.conf.bak, then set port={port}.",
                files={"/etc/app.conf": "host=localhost\nport=80\nmode=dev\n"},
                expectations=[
                    {"check": "file_contains:/etc/app.conf.bak:port=80"},
                    {"check": f"file_contains:/etc/app.conf:port={port}"},
                    {"check": "exit_code:0"},
                ],
                solution=(
                    "cp /etc/app.conf /etc/app.conf.bak\n"
                    f"sed -i 's/^port=.*/port={port}/' /etc/app.conf\n"
                    "grep port /etc/app.conf"
                ),
            )
        )
        name = ["world", "team", "there", "all"][k]
        tasks.append(
            Task(
                id=f"script_heredoc_{k}",
                category="scripting",
                prompt=f"Write /app/greet.sh that greets its argument; run it with {name}.",
                expectations=[
                    {"check": "file_exists:/app/greet.sh"},
                    {"check": f"stdout_contains:hello {name}"},
                    {"check": "exit_code:0"},
                ],
                solution=(
                    "mkdir -p /app\n"
                    "cat > /app/greet.sh <<'EOF'\n"
                    "#!/bin/bash\n"
                    'echo "hello $1"\n'
                    "EOF\n"
                    "chmod +x /app/greet.sh\n"
                    f"bash /app/greet.sh {name}"
                ),
            )
        )
        rows = [(f"r{i}", 10 * (i + 1) + k) for i in range(3 + k)]
        csv = "id,amount\n" + "".join(f"{r},{a}\n" for r, a in rows)
        tasks.append(
            Task(
                id=f"csv_total_{k}",
                category="data_transformation",
                prompt="Sum the amount column of /data/sales.csv and save it in /out/t.txt.",
                files={"/data/sales.csv": csv},
                expectations=[
                    {"check": f"file_contains:/out/t.txt:{sum(a for _, a in rows)}"},
                    {"check": "exit_code:0"},
                ],
                solution=(
                    "mkdir -p /out\n"
                    "awk -F, 'NR > 1 { s += $2 } END { print s }' /data/sales.csv > /out/t.txt\n"
                    "cat /out/t.txt"
                ),
            )
        )
        dirs = ["src", "tests", "docs", "bin"][: 2 + k % 3]
        tasks.append(
            Task(
                id=f"scaffold_loop_{k}",
                category="file_operations",
                prompt=f"Create /proj with the folders {', '.join(dirs)}, each with a .keep file.",
                expectations=[
                    *({"check": f"file_exists:/proj/{d}/.keep"} for d in dirs),
                    {"check": "exit_code:0"},
                ],
                solution=(
                    f"for d in {' '.join(dirs)}; do\n"
                    '  mkdir -p "/proj/$d"\n'
                    '  touch "/proj/$d/.keep"\n'
                    "done\n"
                    "find /proj -name .keep | sort"
                ),
            )
        )
    return tasks


def eval_tasks() -> list[Task]:
    """The project's task suite when present (tasks with a solution), else the built ones."""
    if DATASET.is_file():
        return [t for t in load_tasks(DATASET) if t.solution]
    return built_tasks()


async def attempt(task: Task, provider, epoch: int = 1, max_turns: int = 10):
    """One attempt through the real agent loop and scorer: (trace, score)."""
    sandbox = BashkitSandbox(files=task.files)
    outcome = await run_agent(task, provider, sandbox, max_turns=max_turns, epoch=epoch)
    return outcome.trace, score_task(task, outcome.trace, sandbox)


def run_all(provider, tasks: list[Task]):
    """Attempts at all tasks, run concurrently on one provider."""

    async def main():
        return await asyncio.gather(*(attempt(t, provider) for t in tasks))

    return asyncio.run(main())


def signature(trace) -> list:
    """What a trace did, turn by turn: commands, exit codes, texts, tokens and latency."""
    return [
        [(c.commands, c.exit_code) for c in trace.tool_calls],
        [m.model_dump() for m in trace.messages],
        [(c.input_tokens, c.output_tokens, c.latency_ms) for c in trace.llm_calls],
    ]


# -- splitting a solution into steps -----------------------------------------------------


def test_split_keeps_heredocs_loops_functions_and_continuations_whole():
    script = (
        "# make the folder\n"
        "mkdir -p /o\n"
        "\n"
        "cat > /o/s.sh <<'EOF'\n"
        "for x in a b; do\n"
        "EOF\n"
        "for i in 1 2; do\n"
        "  echo $i\n"
        "done > /o/n.txt\n"
        "greet() {\n"
        '  echo "hi $1"\n'
        "}\n"
        "sort /o/n.txt |\n"
        "  uniq \\\n"
        "  -c\n"
        "if [ -f /o/n.txt ]; then\n"
        "  cat <<-END\n"
        "\tfound\n"
        "\tEND\n"
        "fi\n"
        "test -d /o &&\n"
        "  echo ok"
    )
    assert split_steps(script) == [
        "# make the folder\nmkdir -p /o",
        "cat > /o/s.sh <<'EOF'\nfor x in a b; do\nEOF",
        "for i in 1 2; do\n  echo $i\ndone > /o/n.txt",
        'greet() {\n  echo "hi $1"\n}',
        "sort /o/n.txt |\n  uniq \\\n  -c",
        "if [ -f /o/n.txt ]; then\n  cat <<-END\n\tfound\n\tEND\nfi",
        "test -d /o &&\n  echo ok",
    ]


def test_split_steps_run_to_the_same_result_as_the_whole_script():
    for task in built_tasks() + eval_tasks():
        whole, stepwise = bashkit.Bash(files=task.files), bashkit.Bash(files=task.files)
        expected = whole.execute_sync(task.solution).stdout
        outputs = [stepwise.execute_sync(step).stdout for step in split_steps(task.solution)]
        assert "".join(outputs) == expected, task.id


def test_here_strings_do_not_open_a_heredoc():
    assert split_steps("bc <<< '1+2'\necho done") == ["bc <<< '1+2'", "echo done"]


# -- mistakes ----------------------------------------------------------------------------


def test_every_wrong_flag_and_unsupported_tool_really_fails_in_bashkit():
    bash = bashkit.Bash()
    for cmd, flag in WRONG_FLAGS.items():
        result = bash.execute_sync(f"{cmd} {flag} /nonexistent-arg </dev/null")
        assert result.exit_code != 0 and result.stderr, (cmd, flag)
    for tool in UNSUPPORTED.values():
        assert bash.execute_sync(f"{tool} --version").exit_code == 127, tool


def test_mistakes_change_only_the_command_in_command_position():
    task = Task(id="t", category="c", prompt="p", files={"/data/in.txt": "x\n"})
    rng = random.Random(3)
    step = "grep sort /data/in.txt | sort"
    flag = make_mistake("wrong_flag", step, task, rng)
    assert flag.command in {
        "grep --recursive-only sort /data/in.txt | sort",
        "grep sort /data/in.txt | sort --reverse-numeric",
    }
    tool = make_mistake("unsupported", step, task, rng)
    assert tool.command == "grep sort /data/in.txt | gsort"
    typo = make_mistake("misspelt_command", "jq . /data/in.txt", task, rng)
    assert typo.command == "jqq . /data/in.txt"
    path = make_mistake("wrong_path", step, task, rng)
    assert path.command.replace(path.bad, path.good) == step
    assert path.bad in {"data/in.txt", "/dat/in.txt", "/data/ins.txt"}


def test_a_step_with_nothing_to_get_wrong_has_no_mistake_of_that_kind():
    task = Task(id="t", category="c", prompt="p", files={"/data/in.txt": "x\n"})
    rng = random.Random(0)
    assert make_mistake("wrong_path", "echo hi > /out.txt", task, rng) is None
    assert make_mistake("wrong_flag", "echo hi", task, rng) is None


# -- the provider ------------------------------------------------------------------------


def test_unknown_persona_lists_the_known_ones():
    with pytest.raises(ValueError, match="careful, hasty, flailing"):
        SimProvider("lazy")


def test_provider_identity_and_settings_mark_the_run_as_simulated():
    sim = SimProvider("flailing", seed=11)
    assert (sim.provider, sim.model, sim.simulated, sim.recording) == (
        "sim",
        "sim/flailing",
        True,
        None,
    )
    assert sim.settings()["seed"] == 11
    assert sim.settings()["persona"] == PERSONAS["flailing"].model_dump()


def test_a_task_without_solution_is_a_provider_error():
    task = Task(id="t", category="c", prompt="p")
    with pytest.raises(ProviderError, match="no 'solution'"):
        asyncio.run(SimProvider("careful").chat(ChatRequest("", [], [], task)))


def test_persona_table_has_a_row_per_parameter_and_a_column_per_persona():
    lines = persona_table().splitlines()
    assert lines[0] == "| parameter | meaning | careful | hasty | flailing |"
    assert len(lines) == 2 + len(type(PERSONAS["careful"]).model_fields) - 1
    assert all(line.count("|") == 6 for line in lines)


def test_same_seed_same_traces_other_seed_other_traces():
    tasks = built_tasks()[:12]
    for persona in PERSONAS:
        first = [signature(t) for t, _ in run_all(SimProvider(persona, seed=1), tasks)]
        again = [signature(t) for t, _ in run_all(SimProvider(persona, seed=1), tasks)]
        other = [signature(t) for t, _ in run_all(SimProvider(persona, seed=2), tasks)]
        assert first == again
        assert first != other


def test_interleaved_attempts_do_not_share_plans():
    """Concurrent attempts on one provider equal the same attempts run one at a time."""
    tasks = built_tasks()[:8]
    alone = [signature(asyncio.run(attempt(t, SimProvider("hasty", seed=5)))[0]) for t in tasks]
    sim = SimProvider("hasty", seed=5)

    async def interleaved():
        return await asyncio.gather(
            *(attempt(t, sim, epoch=e) for e in (1, 2) for t in reversed(tasks))
        )

    pairs = asyncio.run(interleaved())
    together = [signature(trace) for trace, _ in pairs[: len(tasks)]]
    assert together[::-1] == alone
    epoch_two = [signature(trace) for trace, _ in pairs[len(tasks) :]]
    assert epoch_two != together


def test_a_plan_is_dropped_when_its_attempt_stops():
    tasks = built_tasks()
    sim = SimProvider("flailing")
    traces = [trace for trace, _ in run_all(sim, tasks)]
    cut_off = {(t.id, 1) for t, trace in zip(tasks, traces, strict=True) if not trace.natural_stop}
    assert cut_off, "flailing should hit the turn limit somewhere"
    assert set(sim._attempts) == cut_off


def test_a_new_attempt_replaces_a_plan_left_by_the_turn_limit():
    task = built_tasks()[0]
    sim = SimProvider("careful")
    cut = asyncio.run(attempt(task, sim, max_turns=1))[0]
    assert not cut.natural_stop and (task.id, 1) in sim._attempts
    full = asyncio.run(attempt(task, sim))[0]
    assert signature(full) == signature(asyncio.run(attempt(task, SimProvider("careful")))[0])


def test_token_usage_follows_the_documented_formula():
    overhead = PERSONAS["careful"].overhead_tokens
    for trace, _ in run_all(SimProvider("careful"), built_tasks()[:6]):
        for n, call in enumerate(trace.llm_calls, start=1):
            sent = trace.messages[: 2 * n - 1]
            chars = sum(
                len(b.text or "")
                + len(b.content or "")
                + (len(json.dumps(b.input)) if b.input else 0)
                for m in sent
                for b in m.content
            )
            assert call.input_tokens == overhead + math.ceil(chars / 4)
            reply = trace.messages[2 * n - 1].content
            emitted = sum(
                len(b.text or "") + len(json.dumps(b.input or {})) * (b.type == "tool_use")
                for b in reply
            )
            assert 1 <= call.output_tokens - math.ceil(emitted / 4) <= 8


def test_latency_is_recorded_and_slept_only_when_asked(monkeypatch):
    slept = []

    async def fake_sleep(seconds):
        slept.append(seconds)

    monkeypatch.setattr(asyncio, "sleep", fake_sleep)
    task = built_tasks()[0]
    quiet = asyncio.run(attempt(task, SimProvider("hasty")))[0]
    assert slept == []
    loud = asyncio.run(attempt(task, SimProvider("hasty", sleep=True)))[0]
    assert slept == pytest.approx([c.latency_ms / 1000 for c in loud.llm_calls], abs=1e-4)
    assert [c.latency_ms for c in quiet.llm_calls] == [c.latency_ms for c in loud.llm_calls]


def test_latencies_centre_on_each_personas_median():
    for name, persona in PERSONAS.items():
        latencies = [
            c.latency_ms for t, _ in run_all(SimProvider(name), built_tasks()) for c in t.llm_calls
        ]
        assert persona.latency_median_ms / 1.5 < median(latencies) < persona.latency_median_ms * 1.5


def test_input_tokens_grow_with_the_conversation():
    for trace, _ in run_all(SimProvider("careful"), built_tasks()):
        tokens = [c.input_tokens for c in trace.llm_calls]
        assert tokens == sorted(tokens) and len(set(tokens)) == len(tokens)
        assert tokens[0] >= PERSONAS["careful"].overhead_tokens


def test_stop_reasons_follow_the_tool_calls():
    for trace, _ in run_all(SimProvider("hasty"), built_tasks()):
        for call in trace.llm_calls:
            assert call.stop_reason == ("tool_use" if call.tool_calls_made else "end_turn")


def test_a_mistake_is_followed_by_a_fix_or_a_retry_of_the_same_command():
    sim = SimProvider("flailing", seed=3)
    seen = 0
    for trace, _ in run_all(sim, built_tasks()):
        turns = [
            list(calls)
            for _, calls in itertools.groupby(trace.tool_calls, key=lambda c: c.call_number)
        ]
        for before, after in itertools.pairwise(turns):
            missing = [c for c in before if c.exit_code == 127]
            if missing and after[0].call_number == before[0].call_number + 1:
                seen += 1
                # the next turn retries the first failed command as it was, or fixes it
                assert after[0].commands == missing[0].commands or after[0].exit_code != 127
    assert seen > 0


def aggregates(persona: str, tasks: list[Task]) -> dict[str, float]:
    """Per-persona figures over all tasks, computed from the traces and scores.

    ``growth`` is the mean per-task context growth per call, (last - first) / (calls - 1);
    ``batch`` the mean tool calls per turn that made any; ``repeats`` the share of tool
    calls that rerun the previous turn's failed command unchanged.
    """
    results = run_all(SimProvider(persona), tasks)
    traces = [trace for trace, _ in results]
    calls = [c for t in traces for c in t.tool_calls]
    growth = [
        (t.llm_calls[-1].input_tokens - t.llm_calls[0].input_tokens) / (t.turns - 1)
        for t in traces
        if t.turns > 1
    ]
    repeats = sum(
        a.exit_code != 0 and b.commands == a.commands and b.call_number == a.call_number + 1
        for t in traces
        for a, b in itertools.pairwise(t.tool_calls)
    )
    tool_turns = [c.tool_calls_made for t in traces for c in t.llm_calls if c.tool_calls_made]
    return {
        "pass_rate": mean(score.all_passed() for _, score in results),
        "tool_success": mean(c.exit_code == 0 for c in calls),
        "turns": mean(t.turns for t in traces),
        "growth": mean(growth),
        "final_context": mean(t.llm_calls[-1].input_tokens for t in traces),
        "batch": mean(tool_turns),
        "repeats": repeats / len(calls),
        "help": mean(c.commands.endswith(" --help") for c in calls),
        "hit_limit": mean(not t.natural_stop for t in traces),
    }


def test_personas_differ_clearly_on_aggregate():
    tasks = eval_tasks()
    assert len(tasks) >= 20
    careful, hasty, flailing = (aggregates(p, tasks) for p in ("careful", "hasty", "flailing"))
    assert careful["pass_rate"] >= 0.85
    assert careful["pass_rate"] - hasty["pass_rate"] >= 0.1
    assert hasty["pass_rate"] - flailing["pass_rate"] >= 0.1
    assert careful["tool_success"] > hasty["tool_success"] > flailing["tool_success"]
    assert flailing["turns"] > careful["turns"] > hasty["turns"]
    assert flailing["hit_limit"] > careful["hit_limit"]
    assert careful["growth"] > hasty["growth"]
    assert flailing["final_context"] > careful["final_context"] > hasty["final_context"]
    assert hasty["batch"] > careful["batch"]
    assert flailing["repeats"] > max(careful["repeats"], hasty["repeats"])
    assert careful["help"] > 0 and hasty["help"] == 0


def test_each_persona_is_weakest_where_its_weak_spots_are():
    tasks = eval_tasks()
    for name, persona in PERSONAS.items():
        results = run_all(SimProvider(name), tasks)
        weak = [
            s for (_, s), t in zip(results, tasks, strict=True) if t.category in persona.weak_spots
        ]
        other = [
            s
            for (_, s), t in zip(results, tasks, strict=True)
            if t.category not in persona.weak_spots
        ]
        if not weak:  # the fallback task set may not cover this persona's weak categories
            continue
        weak_rate = sum(s.score for s in weak) / sum(s.max_score for s in weak)
        other_rate = sum(s.score for s in other) / sum(s.max_score for s in other)
        assert weak_rate < other_rate - 0.1, (name, weak_rate, other_rate)
    spots = [frozenset(p.weak_spots) for p in PERSONAS.values()]
    assert len(set(spots)) == len(spots)  # different personas, different weaknesses
