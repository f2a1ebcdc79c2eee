"""The local sandbox: real bash in a fresh temp folder, scrubbed env, timeouts, output caps."""

from __future__ import annotations

import asyncio
import os
import time
from pathlib import Path

import pytest

from evalnb._runtime.sandbox.local import CUT_NOTE, TIMEOUT_EXIT, LocalSandbox


def run(box: LocalSandbox, commands: str):
    return asyncio.run(box.exec(commands))


@pytest.fixture
def box():
    sandbox = LocalSandbox({"data/in.txt": "alpha\nbeta\n", "raw.bin": b"\x00\x01"})
    yield sandbox
    sandbox.close()


def test_files_are_written_relative_to_a_fresh_workdir_that_is_cwd_and_home(box):
    r = run(box, 'pwd; echo "$HOME"; cat data/in.txt; wc -c < raw.bin')
    assert r.stdout == f"{box.workdir}\n{box.workdir}\nalpha\nbeta\n2\n"
    assert r.exit_code == 0 and r.stderr == ""


@pytest.mark.parametrize("bad", ["/etc/passwd", "../outside.txt", "a/../../b", "."])
def test_workspace_files_must_stay_inside_the_workdir(bad):
    with pytest.raises(ValueError, match="inside the workdir"):
        LocalSandbox({bad: "x"})


def test_each_call_is_a_fresh_bash_only_the_filesystem_persists(box):
    run(box, "mkdir sub && cd sub && X=1 && echo kept > note.txt")
    r = run(box, 'pwd; echo "X=${X:-unset}"; cat sub/note.txt')
    assert r.stdout == f"{box.workdir}\nX=unset\nkept\n"


def test_environment_is_scrubbed_to_path_home_lang_and_the_scenario_env(monkeypatch, tmp_path):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-should-never-leak-0123456789")
    monkeypatch.setenv("SOME_USER_SETTING", "visible-to-host-only")
    box = LocalSandbox(env={"NOTES_AUTHOR": "eval"})
    try:
        names = sorted(run(box, "env").stdout.split("\n"))
        # bash itself adds PWD, SHLVL and _
        keys = {line.split("=", 1)[0] for line in names if line}
        assert keys == {"PATH", "HOME", "LANG", "NOTES_AUTHOR", "PWD", "SHLVL", "_"}
        assert "NOTES_AUTHOR=eval" in names and "LANG=C.UTF-8" in names
    finally:
        box.close()


def test_path_dirs_come_first_on_path(tmp_path):
    # confined commands run as nobody, whose PATH search needs folders others can enter
    for folder in [tmp_path, *tmp_path.parents][:-2]:  # up to, not including, /tmp and /
        folder.chmod(0o755)
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    tool = bin_dir / "ls"  # shadows the system ls
    tool.write_text('#!/usr/bin/env bash\necho fake-ls "$@"\n')
    tool.chmod(0o755)
    box = LocalSandbox(path_dirs=[bin_dir])
    try:
        assert run(box, "ls -l").stdout == "fake-ls -l\n"
    finally:
        box.close()


def test_a_timeout_kills_the_whole_process_group_and_records_exit_124():
    box = LocalSandbox(timeout_s=0.5)
    try:
        started = time.monotonic()
        r = run(box, "echo start; (sleep 1.2; touch late.txt) & sleep 30")
        assert time.monotonic() - started < 5
        assert r.exit_code == TIMEOUT_EXIT
        assert r.stdout == "start\n"
        assert r.stderr == "[evalnb: timed out after 0.5s; process group killed]"
        time.sleep(1.5)  # the background child would have written late.txt by now
        assert not Path(box.workdir, "late.txt").exists()
    finally:
        box.close()


def test_background_processes_are_killed_when_bash_exits(box):
    r = run(box, "(sleep 0.5; touch late.txt) & echo started")
    assert (r.stdout, r.exit_code) == ("started\n", 0)
    time.sleep(1.0)
    assert box.file_type("late.txt") is None


def test_output_over_the_cap_is_cut_marked_and_the_command_stopped():
    box = LocalSandbox(max_output_chars=1000, timeout_s=10)
    try:
        started = time.monotonic()
        r = run(box, "echo err >&2; yes")
        assert time.monotonic() - started < 5  # `yes` never ends by itself
        assert r.stdout_truncated and not r.stderr_truncated
        assert r.stdout == "y\n" * 500 + CUT_NOTE.format(limit=1000)
        assert r.stderr == "err\n"
        assert r.exit_code == 128 + 9  # SIGKILL, as the shell reports it
    finally:
        box.close()


def test_undecodable_bytes_are_replaced(box):
    assert run(box, r"printf 'a\xffb'").stdout == "a\ufffdb"


def test_a_signal_exit_is_reported_as_128_plus_the_signal(box):
    assert run(box, "kill -TERM $$").exit_code == 128 + 15


def test_read_text_and_file_type_resolve_relative_paths_against_the_workdir(box):
    run(box, "mkdir d && ln -s data/in.txt link")
    assert box.read_text("data/in.txt") == "alpha\nbeta\n"
    assert box.read_text(os.path.join(box.workdir, "data/in.txt")) == "alpha\nbeta\n"
    assert box.read_text("d") is None and box.read_text("missing") is None
    assert [box.file_type(p) for p in ("data/in.txt", "d", "link", "missing")] == [
        "file",
        "directory",
        "symlink",
        None,
    ]


def test_close_removes_the_workdir():
    box = LocalSandbox({"a.txt": "x"})
    workdir = box.workdir
    box.close()
    assert not Path(workdir).exists()
