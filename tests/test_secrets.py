"""Secrets never reach disk: keys in the environment, tool output or model text are redacted."""

from __future__ import annotations

import asyncio
from pathlib import Path

import polars as pl
import yaml

from evalnb._analysis.load import load
from evalnb._present.report import write_report
from evalnb._redact import REDACTED, redact
from evalnb._runtime.bash_case import BashCase
from evalnb._runtime.runner import run_cases
from evalnb.records import Task

ENV_KEY = "sk-ant-api03-evalnbFAKEkey0123456789abcdefXYZ"
SHAPED_KEY = "sk-proj-NotInTheEnvironment0123456789"
BEARER = "Bearer eyJhbGciOiJIUzI1NiJ9.fake.token"
SECRETS = [ENV_KEY, SHAPED_KEY, "eyJhbGciOiJIUzI1NiJ9.fake.token"]


def everything_written(root: Path) -> list[str]:
    """The text of every file under root; parquet tables are decoded (they are compressed)."""
    texts = []
    for path in root.rglob("*"):
        if path.suffix == ".parquet":
            frame = pl.read_parquet(path)
            texts += [str(v) for col in frame.columns for v in frame[col].to_list()]
        elif path.is_file():
            texts.append(path.read_bytes().decode("utf-8", errors="replace"))
    return texts


def test_planted_keys_are_redacted_from_events_tables_and_reports(tmp_path, monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", ENV_KEY)
    creds = f"api_key={ENV_KEY}\nother={SHAPED_KEY}\nAuthorization: {BEARER}\n"
    script = tmp_path / "leaky.yaml"
    script.write_text(
        yaml.safe_dump(
            {
                "turns": [
                    {
                        "text": f"I found the key {ENV_KEY}",
                        "commands": ["cat /data/creds.txt", "env"],
                    },
                    {"text": f"Also {SHAPED_KEY}. Done."},
                ]
            }
        )
    )
    case = BashCase(
        Task(
            id="leak",
            category="c",
            prompt=f"use {ENV_KEY}",
            files={"/data/creds.txt": creds},
            expectations=[{"check": "stdout_contains:api_key"}],
        )
    )
    [run] = asyncio.run(
        run_cases([case], [f"scripted:{script}"], tmp_path / "runs", progress=False)
    )
    write_report(load(run), tmp_path / "report")

    texts = everything_written(tmp_path / "runs") + everything_written(tmp_path / "report")
    assert texts, "nothing was written"
    for secret in SECRETS:
        assert not any(secret in t for t in texts), secret
    # the output is still useful: the redaction marker stands where the key was
    assert any(f"api_key={REDACTED}" in t for t in texts)
    # and the command never saw the host's key at all: bashkit has no host environment
    runs = load(run)
    env_output = runs.tool_calls.filter(pl.col("commands") == "env")["stdout"].item()
    assert "ANTHROPIC_API_KEY" not in env_output


def test_redact_handles_env_values_and_key_shapes(monkeypatch):
    monkeypatch.setenv("MY_SERVICE_TOKEN", "tok_live_abcdefgh1234")
    monkeypatch.setenv("SHORT_TOKEN", "abc")  # too short to be a secret: left alone
    text = "t=tok_live_abcdefgh1234 s=abc k=sk-abcdefghijklmnop0123 h=Bearer abcdefghijkl"
    assert redact(text) == f"t={REDACTED} s=abc k={REDACTED} h=Bearer {REDACTED}"


def test_a_key_printed_by_a_notebook_is_redacted_from_its_export(tmp_path, monkeypatch):
    import nbformat

    from evalnb._demo import execute_notebooks

    monkeypatch.setenv("ANTHROPIC_API_KEY", ENV_KEY)
    nb = nbformat.v4.new_notebook(
        cells=[
            nbformat.v4.new_code_cell(
                "import os\nprint(os.environ['ANTHROPIC_API_KEY'], 'and', 'sk-proj-' + 'x' * 24)"
            )
        ]
    )
    path = tmp_path / "leaky.ipynb"
    nbformat.write(nb, path)
    out = execute_notebooks(tmp_path, tmp_path / "html", [path])
    html = (out / "leaky.html").read_text()
    assert ENV_KEY not in html and "sk-proj-xxxx" not in html
    assert f"{REDACTED} and {REDACTED}" in html  # the cell ran and its output was kept
