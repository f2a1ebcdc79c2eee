"""The documentation: the README stays short and keeps the two commands CI and new users
run; the docs site builds strictly and offline, its API pages document every public name
and its CLI tables every option; the architecture page's recipes run as written; and
nothing the README or the docs name is dead: every ``evalnb.*`` name resolves, every
``evalnb`` command line uses options its parser has, every repository file named exists."""

from __future__ import annotations

import argparse
import ast
import builtins
import importlib
import inspect
import re
import socket
import sys
import textwrap
import types
from functools import cache
from pathlib import Path

import pytest

import evalnb
from evalnb._analysis.runs import Runs
from evalnb._cli import _parser, main
from evalnb._formats import detect
from evalnb.records import AgentTrace, Task, TaskRecord, TaskScore, ToolCallResult
from tests.conftest import ROOT
from tests.factories import run_of

DATASET_CARDS = list((ROOT / "data").rglob("*.md"))
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md")), *sorted(DATASET_CARDS)]
FENCED = re.compile(r"^( *)```[^\n]*\n(.*?)^\1```", re.MULTILINE | re.DOTALL)
INLINE = re.compile(r"(`+)(.+?)\1")
DOTTED = re.compile(r"(?<![\w/])evalnb(?:\.[A-Za-z_]\w*)+")
SHORT = {"en": "evalnb", "charts": "evalnb.charts", "widgets": "evalnb.widgets"}
SHORT_NAME = re.compile(r"(?<![\w./])(en|charts|widgets|runs)\.([A-Za-z_]\w*)")
COMMAND = re.compile(r"(?:^|[;&|(]\s*|\.venv/bin/)evalnb\s+([a-z][\w-]*)(.*)")
OPTION = re.compile(r"(?<![\w-])--[a-z][\w-]*")
REPO_PATH = re.compile(r"^(?:evalnb|tests|bench|docs|\.ci)/[\w./-]*$")
OTHER_PROGRAMS_OPTIONS = {
    "--output-format",  # claude -p
    "--verbose",  # claude -p --output-format json
    "--format",  # the sample notes tool (notes list --format json)
    "--recursive",  # aws s3 cp
    "--include",  # grep (the dataset card's code_search tasks)
}
"""Options the docs name that belong to programs other than evalnb."""
RECIPE_ADDS = {
    "evalnb._formats.toy_agent",
    "evalnb.timeout_share",
    "evalnb/_formats/toy_agent.py",
    "evalnb/_analysis/timeouts.py",
    "tests/test_formats_toy_agent.py",
    "tests/test_timeouts.py",
}
"""The names and files the architecture page's recipes add (their tests run the recipes)."""
FILE_NAME = re.compile(r"\.(?:md|py|ya?ml|jsonl?|txt|toml)$")


def code(page: Path) -> list[str]:
    """The lines of code on a page: each fenced block's lines and each inline code span."""
    text = page.read_text()
    lines = [line.strip() for _, block in FENCED.findall(text) for line in block.splitlines()]
    prose = FENCED.sub("", text)
    return lines + [span.strip() for _, span in INLINE.findall(prose)]


@cache
def parsers() -> dict[str, argparse.ArgumentParser]:
    """``evalnb``'s subcommand parsers by name."""
    (sub,) = (a for a in _parser()._actions if isinstance(a, argparse._SubParsersAction))
    return dict(sub.choices)


def resolves(dotted: str) -> bool:
    """True when ``dotted`` names a module, or an attribute reached from one."""
    parts = dotted.split(".")
    for split in range(len(parts), 0, -1):
        try:
            target = importlib.import_module(".".join(parts[:split]))
        except ModuleNotFoundError:
            continue
        for name in parts[split:]:
            if not hasattr(target, name):
                return False
            target = getattr(target, name)
        return True
    return False


def dead_names(page: Path) -> set[str]:
    """The ``evalnb.*`` names on ``page``, and in its code the ``en.``, ``charts.``,
    ``widgets.`` and ``runs.`` names (``runs.model``: a column of the runs table), that
    resolve to nothing."""
    text = page.read_text()
    named = {name for name in DOTTED.findall(text) if not FILE_NAME.search(name)}
    dead = {name for name in named if not resolves(name)} - RECIPE_ADDS
    runs = Runs.empty()
    for line in code(page):
        for short, name in SHORT_NAME.findall(line):
            if short == "runs":  # an attribute of Runs, or a column of its runs table
                if not hasattr(runs, name) and name not in runs.runs.columns:
                    dead.add(f"runs.{name}")
            elif not resolves(f"{SHORT[short]}.{name}"):
                dead.add(f"{short}.{name}")
    return dead


def dead_options(page: Path) -> set[str]:
    """The ``evalnb`` subcommands, and their options, that the code on ``page`` uses but
    the parsers lack; and any bare ``--option`` span no ``evalnb`` parser knows."""
    known = set(_parser()._option_string_actions)
    for parser in parsers().values():
        known |= set(parser._option_string_actions)
    dead = set()
    for line in code(page):
        for command, rest in COMMAND.findall(line):
            if command not in parsers():
                dead.add(f"evalnb {command}")
                continue
            options = parsers()[command]._option_string_actions
            rest = rest.split(" #", 1)[0]
            dead |= {f"evalnb {command} {o}" for o in OPTION.findall(rest) if o not in options}
        if line.startswith("--"):
            flag = OPTION.match(line)
            if flag and flag[0] not in known | OTHER_PROGRAMS_OPTIONS:
                dead.add(flag[0])
    return dead


def dead_files(page: Path) -> set[str]:
    """The repository paths on ``page`` (code spans and relative links) that do not exist."""
    text = page.read_text()
    named = {span for span in code(page) if REPO_PATH.match(span)}
    links = {
        target.split("#", 1)[0]
        for target in re.findall(r"\]\(([^)\s]+)\)", FENCED.sub("", text))
        if not re.match(r"[a-z]+:|#", target)
    }
    dead = {path for path in named if not (ROOT / path).exists()} - RECIPE_ADDS
    return dead | {link for link in links if not (page.parent / link).exists()}


@pytest.mark.parametrize("page", PAGES, ids=[str(p.relative_to(ROOT)) for p in PAGES])
def test_every_name_command_option_and_file_the_page_names_exists(page):
    assert dead_names(page) == set()
    assert dead_options(page) == set()
    assert dead_files(page) == set()


def test_the_checks_find_a_dead_name_option_and_file(tmp_path):
    page = tmp_path / "page.md"
    page.write_text(
        "Thresholds are data in `evalnb.diagnostics.Thresholds`; see `en.summry(runs)`.\n\n"
        "```\nevalnb run bash --model reference --concurency 8\nevalnb sumary runs/*\n```\n\n"
        "`--max-turn N` and `runs.taks`, as `evalnb/_analysis/nope.py` and [x](nope.md) do.\n"
    )
    assert dead_names(page) == {"evalnb.diagnostics.Thresholds", "en.summry", "runs.taks"}
    assert dead_options(page) == {"evalnb run --concurency", "evalnb sumary", "--max-turn"}
    assert dead_files(page) == {"evalnb/_analysis/nope.py", "nope.md"}


def test_the_readme_is_short_and_starts_with_the_demo_and_the_test_command():
    text = (ROOT / "README.md").read_text()
    assert len(text.splitlines()) < 200
    blocks = [block for _, block in FENCED.findall(text)]
    assert blocks[0].startswith("python3 -m venv .venv") and "evalnb demo" in blocks[0]
    # .ci/run runs the line two below the marker, as its awk does
    lines = text.splitlines()
    command = lines[lines.index("<!-- test-command -->") + 2]
    assert command == blocks[1].strip()
    assert "-m pytest" in command and "--doctest-modules evalnb tests" in command


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    """The docs site, built strictly (a warning fails it) with the network refused."""
    from mkdocs.commands.build import build
    from mkdocs.config import load_config

    def refuse(*args, **kwargs):
        raise OSError("the docs build reached for the network")

    out = tmp_path_factory.mktemp("site")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("NO_MKDOCS_2_WARNING", "1")  # Material's notice about its successor
        patch.setattr(socket.socket, "connect", refuse)
        patch.setattr(socket, "getaddrinfo", refuse)
        build(load_config(str(ROOT / "mkdocs.yml"), site_dir=str(out), strict=True))
    return out


def test_the_built_pages_load_nothing_from_the_web(site):
    pages = list(site.rglob("*.html"))
    assert len(pages) > 15
    fetched = re.compile(r"<(?:script|link|img|iframe)\b[^>]*\b(?:src|href)=\"(?:https?:)?//")
    assert [p.relative_to(site) for p in pages if fetched.search(p.read_text())] == []


def test_the_cli_reference_has_a_row_for_every_option_of_every_command(site):
    page = (site / "cli" / "index.html").read_text()
    for name, parser in parsers().items():
        section = page.split(f'id="evalnb-{name}"', 1)[1].split("<h2", 1)[0]
        for action in parser._actions:
            shown = action.option_strings or [action.metavar or action.dest]
            if not isinstance(action, argparse._HelpAction):
                assert all(f"<code>{flag}</code>" in section for flag in shown), (name, shown)
    # the defaults: argparse's own, and the one a help text states when argparse has none
    run = page.split('id="evalnb-run"', 1)[1].split("<h2", 1)[0]
    assert re.search(
        r"<code>--max-turns</code></td>\s*<td><code>MAX_TURNS</code></td>\s*"
        r"<td><code>10</code></td>",
        run,
    )
    assert re.search(
        r"<code>--concurrency</code></td>\s*<td><code>CONCURRENCY</code></td>\s*"
        r"<td>8</td>\s*<td>attempts in flight</td>",
        run,
    )


def public_names() -> dict[str, list[str]]:
    """What each public module exports: ``evalnb.__all__`` less its modules (each has a page
    of its own), the names ``evalnb.records`` exports, and the public functions and classes
    that ``evalnb.charts``, ``evalnb.widgets`` and ``evalnb.errors`` (or modules inside
    them) define."""
    import evalnb.charts
    import evalnb.errors
    import evalnb.records
    import evalnb.widgets

    def defined(module: types.ModuleType) -> list[str]:
        return [
            name
            for name, value in vars(module).items()
            if not name.startswith("_")
            and (inspect.isfunction(value) or inspect.isclass(value))
            and f"{value.__module__}.".startswith(f"{module.__name__}.")
        ]

    top = [n for n in evalnb.__all__ if not inspect.ismodule(getattr(evalnb, n))]
    return {
        "evalnb": [n for n in top if n != "__version__"],
        "evalnb.charts": defined(evalnb.charts),
        "evalnb.widgets": defined(evalnb.widgets),
        "evalnb.records": list(evalnb.records.__all__),
        "evalnb.errors": defined(evalnb.errors),
    }


def test_the_api_pages_document_every_public_name(site):
    html = "".join(p.read_text() for p in (site / "api").rglob("*.html"))
    documented = set(re.findall(r'id="(evalnb[\w.]*)"', html))
    errors = public_names()["evalnb.errors"]
    missing = [
        f"{module}.{name}"
        for module, names in public_names().items()
        for name in names
        if f"{module}.{name}" not in documented
        and not (module == "evalnb" and name in errors)  # on the evalnb.errors page
    ]
    assert missing == []
    # each page shows the docstring of the function its name stands for
    assert "One row per run: spec 000" in html  # evalnb.summary, a checked wrapper


def recipe(title: str, language: str = "python") -> list[str]:
    """The code blocks in ``language`` of the architecture page's recipe ``title``."""
    page = (ROOT / "docs" / "architecture.md").read_text()
    section = page.split(f"### {title}\n", 1)[1].split("\n### ", 1)[0]
    found = re.findall(rf"^( *)```{language}\n(.*?)^\1```", section, re.MULTILINE | re.DOTALL)
    return [textwrap.dedent(code) for _, code in found]


def runs_with_calls(timed_out: list[bool]) -> Runs:
    """One run of one task attempt whose tool calls timed out or not, in order."""
    calls = [ToolCallResult(commands="sleep 99", timed_out=t, exit_code=-1) for t in timed_out]
    record = TaskRecord(
        task=Task(id="t", category="c", prompt="p"),
        trace=AgentTrace(tool_calls=calls),
        score=TaskScore(task_id="t", score=0, max_score=1),
    )
    return run_of([record])


def test_the_add_a_format_recipe_reads_its_log_everywhere(tmp_path, monkeypatch):
    (code,) = recipe("Add a format")
    (log,) = recipe("Add a format", "json")
    module = types.ModuleType("evalnb._formats.toy_agent")
    monkeypatch.setitem(sys.modules, module.__name__, module)
    exec(compile(code, "toy_agent.py", "exec"), module.__dict__)
    last = len(detect.READERS) - 1  # plain-text transcripts stay last
    readers = (*detect.READERS[:last], module.__name__, *detect.READERS[last:])
    monkeypatch.setattr(detect, "READERS", readers)
    path = tmp_path / "count_lines.json"
    path.write_text(log)
    runs = evalnb.load(path)
    task = runs.tasks.row(0, named=True)
    assert (runs.runs.row(0, named=True)["model"], task["task_id"]) == ("toy-1", "count_lines")
    assert (task["tool_call_count"], task["tool_calls_ok"], task["tool_calls_error"]) == (2, 1, 1)
    assert (task["total_input_tokens"], task["passed"]) == (900, None)
    assert main(["import", "toy-agent", str(path), "--out", str(tmp_path / "runs")]) == 0


def test_the_add_a_metric_and_add_a_chart_recipes_count_timeouts():
    (metric,) = recipe("Add a metric")
    (chart,) = recipe("Add a chart")
    from evalnb._present.charts import parts

    namespace = dict(vars(parts))
    exec(metric, namespace)
    exec(chart, namespace)
    runs = runs_with_calls([True, False, False, False])
    share = namespace["timeout_share"](runs).row(0, named=True)
    assert (share["tool_calls"], share["timed_out"], share["timeout_share"]) == (4, 1, 0.25)
    assert share["timeout_share_lo"] < 0.25 < share["timeout_share_hi"]
    drawn = namespace["timeouts"](runs).to_dict()
    assert [row["value"] for rows in drawn["datasets"].values() for row in rows] == [0.25]


def test_the_add_a_gate_recipe_fits_the_gate_code():
    model, verdict = recipe("Add a gate")
    from evalnb._scoring import gates
    from evalnb.records import scenario

    namespace = dict(vars(scenario))
    exec(model, namespace)
    gate = namespace["CommandExitsWith"](type="command_exits_with", command="notes doctor", code=3)
    assert gate.describe() == "`notes doctor` exits 3"
    # the verdict's case reads only names _command_verdict has where the case goes
    tree = ast.parse("match gate:\n" + textwrap.indent(verdict, "    "))
    read = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}
    known = set(gates._command_verdict.__code__.co_varnames) | set(vars(gates)) | set(dir(builtins))
    assert read - {"CommandExitsWith"} <= known
