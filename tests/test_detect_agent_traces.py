"""Every agent-trace format is recognised by its content, read by ``en.load`` and
``evalnb summary``, and importable by its key."""

from __future__ import annotations

import pytest

from evalnb._cli import main
from evalnb._formats.detect import importable, recognise
from tests.trace_figures import SHARED, fixture

pytestmark = pytest.mark.filterwarnings("ignore::UserWarning")  # local times, unpriced models

EXAMPLES = [
    ("atif/xdotli-tbench/fix_async_worker_queue/example_runs/partial_success_2025-11-19", "harbor"),
    (
        "atif/raidar/results_codex_d6ac35d/runs/"
        "20260208-204720Z__45e5d114__homepage-implementation__codex-cli__codex-gpt-5-2-medium",
        "harbor-trial",
    ),
    ("atif/harbor-golden/openhands/hello-world.trajectory.json", "atif"),
    (
        "codex/localpush-rollouts/raw/sessions/"
        "rollout-2026-02-23T20-34-25-019c8bfe-ec25-79e0-97d7-bda6a9c575ff.jsonl",
        "codex",
    ),
    ("codex/agentcmd-exec-json/stream-output-4.jsonl", "codex-exec-json"),
    ("gemini-cli/raidar-20260212-104309Z__073d938d__he.session.json", "gemini-cli"),
    (
        "swe-agent/SWE-agent/trajectories/gpt4__swe-agent-test-repo__default_from_url__t-0.00__"
        "p-0.95__c-3.00__install-1/6e44b9__sweagenttestrepo-1c2844.traj",
        "swe-agent",
    ),
    ("openhands/runtime-trajs/basic.json", "openhands"),
    ("otel/ms-agent-framework/traces.jsonl", "otel"),
    ("otel/openinference-fixtures/vercel-v6", "otel"),
]


@pytest.mark.parametrize(("path", "key"), EXAMPLES, ids=[k for _, k in EXAMPLES])
def test_each_fixture_is_recognised_as_its_format(path, key):
    found = recognise(fixture(*path.split("/")))
    assert found is not None and found.key == key
    assert importable()[key] is found


def test_summary_and_import_read_them_by_content_and_by_key(tmp_path, capsys):
    paths = [str(fixture(*p.split("/"))) for p, _ in EXAMPLES]
    assert main(["summary", *paths, "--json"]) == 0
    assert capsys.readouterr().out.count('"run_id"') >= len(EXAMPLES)
    assert main(["import", "gemini-cli", paths[5], "--out", str(tmp_path)]) == 0
    assert main(["import", "codex", paths[5], "--out", str(tmp_path)]) == 2  # not a rollout
    assert "not a Codex CLI session rollout (it looks like a Gemini CLI session)" in (
        capsys.readouterr().err
    )


def test_a_jsonl_file_of_something_else_is_not_taken_for_a_codex_log(tmp_path):
    if not SHARED.is_dir():
        pytest.skip("../shared/fixtures is absent")
    other = tmp_path / "x.jsonl"
    other.write_text('{"type": "thread.begun"}\n{"type": "turn.begun"}\n')
    assert recognise(other).name == "a JSON Lines file"
