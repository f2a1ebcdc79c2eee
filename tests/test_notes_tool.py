"""The sample `notes` tool behaves the same as a bashkit builtin and as a real executable.

Every behaviour is checked both ways: inside bashkit (``bashkit_builtin``, the store on
the virtual filesystem under the shell's working directory) and through
``data/tools/notes/bin/notes`` in a temporary directory (``main`` on the real filesystem).
"""

from __future__ import annotations

import doctest
import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import bashkit
import pytest

TOOL_DIR = Path(__file__).resolve().parents[1] / "data" / "tools" / "notes"
BIN = TOOL_DIR / "bin" / "notes"
WORK = "/home/eval/work"


def _load_tool():
    spec = importlib.util.spec_from_file_location("notes", TOOL_DIR / "notes.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules["notes"] = module  # doctest and pickling find the module by name
    spec.loader.exec_module(module)
    return module


notes = _load_tool()


class Builtin:
    """`notes` inside a bashkit shell whose working directory is WORK."""

    name = "builtin"

    def __init__(self, env: dict[str, str] | None = None) -> None:
        self.bash = bashkit.Bash(
            custom_builtins={"notes": notes.bashkit_builtin}, cwd=WORK, env=env or {}
        )
        assert self.bash.execute_sync(f"mkdir -p {WORK}").exit_code == 0

    def sh(self, script: str) -> tuple[int, str, str]:
        r = self.bash.execute_sync(f"cd {WORK} && {script}")
        return r.exit_code, r.stdout, r.stderr

    def write_store(self, text: str) -> None:
        self.bash.fs().mkdir(f"{WORK}/.notes", recursive=True)
        self.bash.fs().write_file(f"{WORK}/.notes/store.json", text.encode())


class Local:
    """`bin/notes` run by real bash in a temporary directory."""

    name = "local"

    def __init__(self, folder: Path, env: dict[str, str] | None = None) -> None:
        self.folder = folder
        self.env = {**os.environ, "PATH": f"{BIN.parent}{os.pathsep}{os.environ['PATH']}"}
        self.env.pop("NOTES_AUTHOR", None)
        self.env.update(env or {})

    def sh(self, script: str) -> tuple[int, str, str]:
        r = subprocess.run(
            ["bash", "-c", script],
            cwd=self.folder,
            env=self.env,
            capture_output=True,
            text=True,
            timeout=30,
        )
        return r.returncode, r.stdout, r.stderr

    def write_store(self, text: str) -> None:
        (self.folder / ".notes").mkdir(exist_ok=True)
        (self.folder / ".notes" / "store.json").write_text(text)


@pytest.fixture(params=["builtin", "local"])
def shell(request, tmp_path):
    """The same tool both ways."""
    return Builtin() if request.param == "builtin" else Local(tmp_path)


def ok(shell, script: str) -> str:
    code, out, err = shell.sh(script)
    assert (code, err) == (0, ""), f"{script!r} failed: {err}"
    return out


BROKEN_STORE = json.dumps(
    {
        "version": 1,
        "notes": [
            {"id": "n1", "title": "A", "body": "", "tags": []},
            {"id": "n2", "title": "B", "body": "", "tags": []},
            {"id": "n2", "title": "C", "body": "", "tags": []},
        ],
        "links": [{"from": "n1", "to": "n2"}, {"from": "n1", "to": "n8"}],
    }
)


# --- help, version and usage errors ---------------------------------------------------


def test_help_goes_to_stdout_and_exits_0(shell):
    code, out, err = shell.sh("notes --help")
    assert (code, err) == (0, "")
    assert out.startswith("usage: notes [-h] [--version] <command> ...")
    for command in notes.COMMANDS:
        assert f"\n    {command} " in out  # every subcommand is listed with its summary
    assert "notes link n1 n2" in out


@pytest.mark.parametrize("command", sorted(notes.COMMANDS))
def test_every_subcommand_has_help_with_examples(shell, command):
    code, out, err = shell.sh(f"notes {command} --help")
    assert (code, err) == (0, "")
    assert out.startswith(f"usage: notes {command} [-h]")
    assert f"examples:\n  notes {command}" in out


def test_version_needs_no_store(shell):
    assert ok(shell, "notes --version") == "notes 1.0.0\n"


def test_commands_without_a_store_say_to_run_init(shell):
    code, out, err = shell.sh("notes list")
    assert (code, out) == (1, "")
    assert (
        err == "error: no notes store here (.notes/store.json not found); run `notes init` first\n"
    )


def test_an_unknown_subcommand_is_a_usage_error(shell):
    code, out, err = shell.sh('notes new "Standup"')
    assert (code, out) == (2, "")
    assert err.startswith("usage: notes [-h] [--version] <command> ...\n")
    assert "notes: error: argument <command>: invalid choice: 'new'" in err
    assert err.endswith("run `notes --help` for usage and examples\n")


def test_a_missing_option_names_the_subcommand_and_its_usage(shell):
    ok(shell, "notes init")
    code, out, err = shell.sh("notes create")
    assert (code, out) == (2, "")
    assert err == (
        "usage: notes create [-h] --title TITLE [--body BODY] [--tag TAG]\n"
        "notes create: error: the following arguments are required: --title\n"
        "run `notes create --help` for usage and examples\n"
    )


def test_extra_arguments_are_reported_by_the_subcommand(shell):
    ok(shell, "notes init")
    code, _, err = shell.sh("notes delete n2 n4")
    assert code == 2
    assert err.splitlines()[:2] == [
        "usage: notes delete [-h] ID",
        "notes delete: error: unrecognized arguments: n4",
    ]


def test_no_command_is_a_usage_error(shell):
    code, _, err = shell.sh("notes")
    assert code == 2
    assert "notes: error: a command is required" in err


# --- the commands -----------------------------------------------------------------------


def test_init_twice_is_harmless(shell):
    assert ok(shell, "notes init") == "initialised an empty notes store in .notes/store.json\n"
    ok(shell, "notes create --title keep")
    assert ok(shell, "notes init") == (
        "a notes store already exists at .notes/store.json; nothing to do\n"
    )
    assert ok(shell, "notes list") == "n1  keep\n1 note\n"


def test_create_list_and_json_output(shell):
    ok(shell, "notes init")
    created = ok(shell, 'notes create --title "Standup" --body "Ship it" --tag meeting --tag daily')
    assert created == "created n1\n"
    assert ok(shell, 'notes create --title "Lunch"') == "created n2\n"
    assert ok(shell, "notes list") == "n1  Standup  [meeting, daily]\nn2  Lunch\n2 notes\n"
    assert ok(shell, "notes list --tag daily") == "n1  Standup  [meeting, daily]\n1 note\n"
    listed = json.loads(ok(shell, "notes list --format json"))
    assert listed == [
        {"id": "n1", "title": "Standup", "body": "Ship it", "tags": ["meeting", "daily"],
         "author": ""},
        {"id": "n2", "title": "Lunch", "body": "", "tags": [], "author": ""},
    ]  # fmt: skip


def test_show_not_found_exits_1_with_the_id(shell):
    ok(shell, "notes init")
    assert shell.sh("notes show n7") == (1, "", "error: no note with id 'n7' (see `notes list`)\n")


def test_link_show_and_export(shell):
    ok(shell, "notes init && notes create --title A && notes create --title B")
    assert ok(shell, "notes link n1 n2") == "linked n1 -> n2\n"
    assert ok(shell, "notes link n1 n2") == "n1 is already linked to n2\n"
    assert shell.sh("notes link n1 n1") == (1, "", "error: cannot link n1 to itself\n")
    assert ok(shell, "notes show n2") == (
        "id:     n2\ntitle:  B\ntags:   -\nauthor: -\nlinks:  <- n1\n"
    )
    shown = json.loads(ok(shell, "notes show n1 --format json"))
    assert (shown["links_to"], shown["linked_from"]) == (["n2"], [])
    exported = json.loads(ok(shell, "notes export --format json"))
    assert [n["id"] for n in exported["notes"]] == ["n1", "n2"]
    assert exported["links"] == [{"from": "n1", "to": "n2"}]


def test_v1_guidance_link_syntax_fails_and_leaves_a_stray_file(shell):
    """`notes link n1 -> n2` is `notes link n1 -` with stdout redirected to a file n2."""
    ok(shell, "notes init && notes create --title A && notes create --title B")
    code, _, err = shell.sh("notes link n1 -> n2")
    assert (code, err) == (1, "error: no note with id '-' (see `notes list`)\n")
    assert ok(shell, "test -f n2 && echo stray") == "stray\n"
    assert json.loads(ok(shell, "notes export"))["links"] == []


def test_search_ignores_case_and_looks_at_title_body_and_tags(shell):
    ok(shell, "notes init")
    ok(shell, 'notes create --title "Roadmap" --body "Kubernetes migration"')
    ok(shell, 'notes create --title "Ops" --tag kube-infra')
    ok(shell, 'notes create --title "Lunch"')
    assert ok(shell, "notes search KUBE") == (
        "n1  Roadmap\nn2  Ops  [kube-infra]\n2 matches for 'KUBE'\n"
    )
    assert [n["id"] for n in json.loads(ok(shell, "notes search lunch --format json"))] == ["n3"]
    assert ok(shell, "notes search nothing-here") == "0 matches for 'nothing-here'\n"


def test_tag_adds_each_tag_once_and_rejects_bad_tags(shell):
    ok(shell, "notes init && notes create --title A --tag x")
    assert ok(shell, "notes tag n1 y x z") == "n1 tags: x, y, z\n"
    code, _, err = shell.sh("notes tag n1 'two words'")
    assert code == 1
    assert err.startswith("error: invalid tag 'two words'")
    code, _, err = shell.sh("notes tag n1 #finance")  # bash reads #finance as a comment
    assert code == 2
    assert "the following arguments are required: TAG" in err


def test_delete_drops_the_links_that_touch_the_note(shell):
    ok(shell, "notes init && notes create --title A && notes create --title B")
    ok(shell, "notes create --title C && notes link n1 n2 && notes link n3 n2 && notes link n1 n3")
    assert ok(shell, "notes delete n2") == "deleted n2 'B' and 2 links\n"
    assert json.loads(ok(shell, "notes export"))["links"] == [{"from": "n1", "to": "n3"}]
    assert shell.sh("notes delete n2")[0] == 1


def test_a_new_id_is_one_more_than_the_highest(shell):
    ok(shell, "notes init && notes create --title A && notes create --title B")
    ok(shell, "notes create --title C && notes delete n2")
    assert ok(shell, "notes create --title D") == "created n4\n"


def test_author_comes_from_notes_author(tmp_path):
    env = {"NOTES_AUTHOR": "eval"}
    for sh in (Builtin(env=env), Local(tmp_path, env=env)):
        ok(sh, "notes init && notes create --title A")
        assert json.loads(ok(sh, "notes show n1 --format json"))["author"] == "eval"


# --- doctor ---------------------------------------------------------------------------------


def test_doctor_passes_on_a_healthy_store(shell):
    ok(shell, "notes init && notes create --title A && notes create --title B")
    ok(shell, "notes link n1 n2")
    assert ok(shell, "notes doctor") == "ok: 2 notes, 1 link, no problems found\n"


def test_doctor_reports_duplicate_ids_and_dangling_links(shell):
    shell.write_store(BROKEN_STORE)
    code, out, err = shell.sh("notes doctor")
    assert code == 1
    assert out == (
        "problem: duplicate id 'n2': notes 2 and 3 share it\n"
        "problem: dangling link n1 -> n8: no note 'n8'\n"
    )
    assert err == "error: 2 problems found in .notes/store.json; the store needs repair\n"
    # the other commands still work on a store that is valid JSON
    assert ok(shell, "notes list").endswith("3 notes\n")


def test_invalid_json_is_reported_by_every_command(shell):
    shell.write_store('{"notes": [')
    for command in ("notes doctor", "notes list"):
        code, out, err = shell.sh(command)
        assert (code, out) == (1, "")
        assert err.startswith("error: .notes/store.json is not valid JSON (line 1 column 12")


def test_a_store_with_the_wrong_shape_is_damaged(shell):
    shell.write_store('{"notes": [{"id": "n1"}], "links": []}')
    code, _, err = shell.sh("notes list")
    assert code == 1
    assert err == (
        "error: .notes/store.json is damaged: note 1 needs string 'id', 'title', 'body' "
        "and a 'tags' list of strings\n"
    )


# --- both entry points ------------------------------------------------------------------


def test_store_lives_under_the_working_directory_in_bashkit():
    sh = Builtin()
    ok(sh, "mkdir -p a b && (cd a && notes init && notes create --title in-a)")
    assert sh.sh("cd b && notes list")[0] == 1  # b has no store
    assert ok(sh, "cd a && notes list") == "n1  in-a\n1 note\n"
    assert ok(sh, "cat a/.notes/store.json").startswith("{\n")


def test_builtin_and_executable_print_the_same(tmp_path):
    script = [
        "notes init",
        'notes create --title "Standup" --body "Ship it" --tag meeting',
        "notes create --title Retro --tag meeting --tag team",
        "notes link n2 n1",
        "notes tag n1 urgent",
        "notes list",
        "notes list --tag team --format json",
        "notes show n1",
        "notes search ship --format json",
        "notes export --format json",
        "notes show n9",
        "notes tag n1 'a b'",
        "notes create --tag x",
        "notes delete n2",
        "notes doctor",
    ]
    builtin, local = Builtin(), Local(tmp_path)
    for line in script:
        assert builtin.sh(line) == local.sh(line), line


def test_the_examples_in_the_tool_docstrings_hold():
    result = doctest.testmod(notes, optionflags=doctest.ELLIPSIS)
    assert result.attempted > 20
    assert result.failed == 0
