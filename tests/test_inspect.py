"""Inspect AI interop: Inspect logs read as evalnb runs, evalnb runs written as Inspect logs.

Figures are checked against Inspect's own readers (``samples_df``, ``events_df`` and
the log's ``results``) on the same logs: real published logs from ../shared/fixtures
and agentic logs made on the spot with ``mockllm`` and a bash tool over bashkit.
"""

from __future__ import annotations

import json
import sys
import zipfile
from pathlib import Path

import polars as pl
import pytest
from inspect_ai.analysis import events_df, samples_df
from inspect_ai.log import read_eval_log

import evalnb as en
from evalnb._analysis.runs import TABLES, runs_from_records
from evalnb._cli import main
from evalnb._formats.inspect_log import log_to_run, read_inspect_log
from evalnb._formats.inspect_write import eval_log, write_inspect_log
from evalnb._store import RunStore
from evalnb.errors import InputError, SetupError
from evalnb.records import AgentTrace, LLMCall, RunMeta, Task, TaskRecord, TaskScore
from tests.conftest import ROOT
from tests.inspect_logs import agentic_log

REAL = ROOT.parent / "shared" / "fixtures" / "inspect"
TASKS = [
    {
        "id": "count",
        "category": "text",
        "prompt": "Count the words in /data/w.txt and print `words: N`.",
        "files": {"/data/w.txt": "a b c\n"},
        "expectations": [
            {"check": "stdout_regex:words: 3", "weight": 2.0},
            {"check": "exit_code:0"},
        ],
        "solution": 'echo "words: $(wc -w < /data/w.txt)"',
    },
    {
        "id": "fail",
        "category": "files",
        "prompt": "Make /home/eval/x.txt.",
        "expectations": [{"check": "file_exists:/home/eval/x.txt"}, {"check": "exit_code:0"}],
        "solution": "ls /nope",
    },
]


@pytest.fixture(scope="module")
def agentic(tmp_path_factory) -> Path:
    """An .eval log of the scripted agentic task (4 samples x 2 epochs)."""
    log = agentic_log(tmp_path_factory.mktemp("inspect"))
    return Path(log.location)


@pytest.fixture
def real_logs() -> list[Path]:
    files = sorted(REAL.glob("*.eval")) + sorted(REAL.glob("*.json"))
    if not files:
        pytest.skip("../shared/fixtures/inspect is absent")
    return files


@pytest.fixture
def evalnb_run(tmp_path) -> Path:
    """A finished evalnb run of two tasks x 2 epochs by a simulated agent (with token usage)."""
    tasks = tmp_path / "tasks.jsonl"
    tasks.write_text("".join(json.dumps(t) + "\n" for t in TASKS))
    out = tmp_path / "runs"
    argv = ["run", str(tasks), "--model", "sim/careful", "--epochs", "2", "--out", str(out)]
    assert main(argv) == 0
    [run] = out.iterdir()
    return run


def _by_sample(frame: pl.DataFrame, *cols: str) -> dict[tuple[str, int], tuple]:
    return {(r[0], r[1]): tuple(r[2:]) for r in frame.select("task_id", "epoch", *cols).rows()}


# --- reading Inspect logs ---------------------------------------------------------------


def test_real_logs_load_one_run_each_with_every_sample_and_inspect_s_token_totals(real_logs):
    runs = en.load(*real_logs)
    assert runs.runs.height == len(real_logs)
    for path in real_logs:
        log = read_eval_log(str(path))
        run = runs.runs.filter(pl.col("run_id").str.ends_with(log.eval.eval_id))
        tasks = runs.tasks.join(run.select("run_id"), on="run_id")
        assert tasks.height == len(log.samples) == samples_df(str(path)).shape[0]
        [usage] = log.stats.model_usage.values()
        assert tasks["total_input_tokens"].sum() == usage.input_tokens
        assert tasks["total_output_tokens"].sum() == usage.output_tokens
        status = "complete" if log.status == "success" else "partial"
        assert run.select("model", "provider", "status").row(0) == (
            log.eval.model.split("/", 1)[1],
            log.eval.model.split("/", 1)[0],
            status,
        )


def test_a_scored_real_log_has_its_scorer_accuracy_as_the_check_pass_rate(real_logs):
    scored = [
        p for p in real_logs if (read_eval_log(str(p)).results or None) and p.suffix == ".json"
    ]
    for path in scored:
        log = read_eval_log(str(path))
        runs = en.load(path)
        for score in log.results.scores:
            checks = runs.checks.filter(pl.col("check") == score.name)
            assert checks["passed"].mean() == pytest.approx(score.metrics["accuracy"].value)
        summary = en.summary(runs).row(0, named=True)
        assert summary["pass_rate"] == pytest.approx(
            log.results.scores[0].metrics["accuracy"].value
        )


def test_every_sample_and_epoch_is_one_task_and_errors_and_limits_are_errored(agentic):
    runs = en.load(agentic)
    inspect = samples_df(str(agentic))
    keys = set(zip(inspect["id"].astype(str), inspect["epoch"], strict=True))
    assert set(zip(*runs.tasks.select("task_id", "epoch"), strict=True)) == keys
    errored = (inspect["error"].fillna("") != "") | inspect["limit"].notna()
    summary = en.summary(runs).row(0, named=True)
    assert summary["total_tasks"] == len(inspect) == 8
    assert summary["errored_tasks"] == int(errored.sum()) == 4
    errors = _by_sample(runs.tasks, "error", "passed")
    assert errors[("loop", 2)] == ("limit: message (8)", False)
    assert "the tool itself broke" in errors[("crash", 1)][0]
    assert errors[("count", 1)][0] is None


def test_model_events_are_llm_calls_with_usage_cache_tokens_and_stop_reason(agentic):
    runs = en.load(agentic)
    inspect = samples_df(str(agentic)).set_index(["id", "epoch"])
    model_events = events_df(str(agentic), filter=lambda e: e.event == "model")
    assert runs.llm_calls.height == len(model_events)
    # evalnb's input_tokens is the whole prompt: Inspect's input_tokens + cache read + write
    per_task = runs.llm_calls.group_by("task_id", "epoch").agg(
        (pl.col("input_tokens") + pl.col("output_tokens")).sum()
    )
    for task_id, epoch, tokens in per_task.rows():
        assert tokens == inspect.loc[(task_id, epoch), "total_tokens"]
    count = runs.llm_calls.filter((pl.col("task_id") == "count") & (pl.col("epoch") == 1))
    assert count.select(
        "call_number", "input_tokens", "cumulative_input", "stop_reason"
    ).rows() == [
        (1, 130, 130, "tool_calls"),
        (2, 170, 300, "tool_calls"),
        (3, 210, 510, "stop"),
    ]
    assert count["cache_read_tokens"].to_list() == [30, 30, 30]
    task = runs.tasks.filter((pl.col("task_id") == "count") & (pl.col("epoch") == 1))
    assert task.select("turns", "base_context", "context_growth_avg", "natural_stop").row(0) == (
        3,
        130,
        40.0,
        True,
    )


def test_tool_events_are_tool_calls_with_the_command_output_error_and_reported_exit_code(
    agentic,
):
    runs = en.load(agentic)
    tool_events = events_df(str(agentic), filter=lambda e: e.event == "tool")
    assert runs.tool_calls.height == len(tool_events) == 18
    calls = runs.tool_calls.filter(pl.col("epoch") == 1)
    rows = {
        r[0]: r[1:] for r in calls.select("commands", "call_number", "exit_code", "stderr").rows()
    }
    assert rows["wc -l < /data/n.txt"] == (1, None, "")  # no exit code reported: null
    assert rows["cat /nope"] == (2, 1, "")  # "Exit code: 1" ends the result
    assert rows["sudo ls"] == (2, 1, "sudo: permission denied")  # Inspect's ToolError: failed
    long = runs.tool_calls.filter(pl.col("commands") == "seq 0 60")["stdout"]
    assert long.to_list() == ["".join(f"{n}\n" for n in range(61))] * 2  # kept whole
    # null exit codes per sample, and in the run summary's tool_calls_unknown
    unknown = runs.tool_calls.group_by("task_id", "epoch").agg(pl.col("exit_code").null_count())
    by_sample = _by_sample(unknown, "exit_code")
    assert by_sample[("count", 1)] == (1,) and by_sample[("greet", 1)] == (1,)
    assert en.summary(runs)["tool_calls_unknown"].item() == unknown["exit_code"].sum()
    _, records = read_inspect_log(agentic)
    meta, _ = read_inspect_log(agentic)
    assert "exit_codes" in meta.settings.unavailable
    assert sum(r.trace.tool_call_count for r in records) == 18


def _tool_errors(log_path: Path) -> list[tuple[str, int, str, str]]:
    """(sample, epoch, command, error message) of every tool event Inspect marks failed."""
    log = read_eval_log(str(log_path))
    return sorted(
        (str(s.id), s.epoch, next(iter(e.arguments.values())), e.error.message)
        for s in log.samples
        for e in s.events
        if e.event == "tool" and e.error is not None
    )


def test_a_tool_error_without_an_exit_code_is_a_failed_call_counted_as_inferred(agentic, tmp_path):
    runs = en.load(agentic)
    errors = _tool_errors(agentic)
    assert [e[2:] for e in errors] == [("sudo ls", "sudo: permission denied")] * 2
    # a recount: the calls that state a non-zero exit code, plus Inspect's tool errors
    stated = runs.tool_calls.filter(pl.col("stdout").str.contains(r"Exit code: [1-9]\d*$"))
    assert en.summary(runs)["tool_calls_error"].item() == stated.height + len(errors) == 4
    failed = runs.tool_calls.filter(pl.col("commands") == "sudo ls")
    assert failed["exit_code"].to_list() == [1, 1]
    inferred = _by_sample(runs.tasks, "exit_codes_inferred")
    assert {k: v for k, v in inferred.items() if v != (0,)} == {
        ("greet", 1): (1,),
        ("greet", 2): (1,),
    }
    # Inspect -> evalnb -> Inspect: every tool error stays one, with its message; the
    # export adds the calls whose result stated a non-zero exit code (issue 27 item 6)
    folder = tmp_path / "runs"
    assert main(["import", "inspect", str(agentic), "--out", str(folder)]) == 0
    [run] = folder.iterdir()
    again = _tool_errors(write_inspect_log(run, tmp_path / "logs"))
    added = [
        (t, e, c, "Exit code: 1")
        for t, e, c in stated.select("task_id", "epoch", "commands").rows()
    ]
    assert again == sorted(errors + added)


def test_scores_are_checks_passing_on_full_credit_and_agree_with_inspect_s_metrics(agentic):
    log = read_eval_log(str(agentic))
    runs = en.load(agentic)
    metrics = {s.name: next(iter(s.metrics.values())).value for s in log.results.scores}
    # Inspect scores the samples that hit a limit and leaves out those that errored
    scored = runs.tasks.filter(pl.col("error").is_null() | pl.col("error").str.starts_with("limit"))
    assert scored["score_includes"].mean() == pytest.approx(metrics["includes"])
    assert scored["score_parts_answer"].mean() == pytest.approx(metrics["answer"])
    assert scored["score_parts_tools"].mean() == pytest.approx(metrics["tools"])
    includes = runs.checks.filter(pl.col("check") == "includes")
    assert includes["passed"].mean() == pytest.approx(metrics["includes"])
    tools = runs.checks.filter(pl.col("check") == "parts.tools")
    assert tools.height == 6 and not tools["passed"].any()  # 0.5 is not full credit
    assert set(runs.checks["check"]) == {"includes", "parts.answer", "parts.tools"}


def test_a_json_log_reads_like_the_eval_log_of_the_same_run(tmp_path):
    log = agentic_log(tmp_path / "j", epochs=1, fmt="json")
    runs = en.load(log.location)
    assert en.summary(runs).select("total_tasks", "errored_tasks", "total_tool_calls").row(0) == (
        4,
        2,
        9,
    )


def test_a_folder_stands_for_the_eval_and_json_logs_inside_it(agentic):
    assert en.load(agentic.parent).runs.height == 1


def _tables_both_ways(path: Path) -> tuple[dict[str, pl.DataFrame], dict[str, pl.DataFrame]]:
    """The tables of a log through evalnb's sample reader, and through Inspect's full reader."""
    fast = runs_from_records(*read_inspect_log(path))
    full = runs_from_records(*log_to_run(read_eval_log(str(path)), path))
    return (
        {name: getattr(fast, name) for name in TABLES},
        {name: getattr(full, name) for name in TABLES},
    )


def test_the_sample_reader_gives_the_tables_inspect_s_own_reader_gives(
    real_logs, agentic, evalnb_run, tmp_path
):
    exported = write_inspect_log(evalnb_run, tmp_path / "logs")  # evalnb's own fields
    json_log = Path(agentic_log(tmp_path / "j", epochs=1, fmt="json").location)
    for path in [*real_logs, agentic, json_log, exported]:
        fast, full = _tables_both_ways(path)
        assert fast["tasks"].height > 0
        for name in TABLES:
            assert fast[name].equals(full[name]), f"{path.name}: {name}"


def test_older_log_shapes_read_as_inspect_migrates_them(agentic, tmp_path):
    """transcript (before events), score (before scores), tool_error, stop reason 'length'."""
    log = agentic_log(tmp_path / "j", epochs=1, fmt="json")
    doc = json.loads(Path(log.location).read_text())
    for sample in doc["samples"]:
        sample["transcript"] = {
            "events": sample.pop("events"),
            "content": sample.pop("attachments", {}),
        }
        scores = sample.pop("scores", None) or {}
        if scores:
            sample["score"] = scores["includes"]
        for message in sample["messages"]:
            if message["role"] == "tool" and message.get("error"):
                message["tool_error"] = message.pop("error")["message"]
        for event in sample["transcript"]["events"]:
            for choice in (event.get("output") or {}).get("choices", []):
                if choice.get("stop_reason") == "stop":
                    choice["stop_reason"] = "length"
    old = tmp_path / "old.json"
    old.write_text(json.dumps(doc))
    fast, full = _tables_both_ways(old)
    assert "max_tokens" in fast["llm_calls"]["stop_reason"].to_list()
    assert fast["messages"]["is_error"].any()
    assert fast["checks"]["check"].unique().to_list() == ["includes"]  # the first scorer
    for name in TABLES:
        assert fast[name].equals(full[name]), name


# --- bad input --------------------------------------------------------------------------


def test_a_broken_eval_file_is_bad_input_naming_the_file(tmp_path):
    bad = tmp_path / "broken.eval"
    bad.write_bytes(b"PK\x03\x04 not really a zip")
    with pytest.raises(InputError, match=r"broken\.eval: not a readable Inspect log"):
        en.load(bad)
    assert main(["summary", str(bad)]) == 2


def test_a_json_log_with_a_wrong_field_type_is_bad_input(tmp_path, real_logs):
    [path] = [p for p in real_logs if p.suffix == ".json"]
    doc = json.loads(path.read_text())
    doc["samples"][0]["epoch"] = "first"
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(doc))
    with pytest.raises(InputError, match="not a readable Inspect log"):
        en.load(bad)


def test_a_sample_with_a_wrong_field_type_is_bad_input_naming_sample_and_field(agentic, tmp_path):
    bad = tmp_path / "bad.eval"
    with zipfile.ZipFile(agentic) as source, zipfile.ZipFile(bad, "w") as target:
        for name in dict.fromkeys(source.namelist()):
            data = source.read(name)
            if name == "samples/count_epoch_1.json":
                sample = json.loads(data)
                model = next(e for e in sample["events"] if e["event"] == "model")
                model["output"]["usage"]["input_tokens"] = "many"
                data = json.dumps(sample).encode()
            target.writestr(name, data, zipfile.ZIP_DEFLATED)
    message = (
        r"bad\.eval: samples/count_epoch_1\.json: events\[\d+\]\.output\.usage\.input_tokens: "
        r"not a readable Inspect log: Input should be a valid integer.*\(got \"many\"\)"
    )
    with pytest.raises(InputError, match=message):
        en.load(bad)
    assert main(["summary", str(bad)]) == 2


def _with_sample(agentic: Path, out: Path, edit) -> Path:
    """A copy of the agentic log whose first epoch's ``count`` sample is ``edit(bytes)``."""
    with zipfile.ZipFile(agentic) as source, zipfile.ZipFile(out, "w") as target:
        for name in dict.fromkeys(source.namelist()):
            data = source.read(name)
            target.writestr(name, edit(data) if name == "samples/count_epoch_1.json" else data)
    return out


def test_a_bad_sample_names_the_field_not_the_union_member_nor_its_text(agentic, tmp_path):
    def content_number(data: bytes) -> bytes:
        sample = json.loads(data)
        sample["messages"][0]["content"] = 7
        return json.dumps(sample).encode()

    bad = _with_sample(agentic, tmp_path / "content.eval", content_number)
    with pytest.raises(InputError) as caught:
        en.load(bad)
    assert "samples/count_epoch_1.json: messages[0].content: " in str(caught.value)
    truncated = _with_sample(agentic, tmp_path / "cut.eval", lambda data: data[: len(data) // 2])
    with pytest.raises(InputError) as caught:
        en.load(truncated)
    text = str(caught.value)
    assert "samples/count_epoch_1.json: not a readable Inspect log: Invalid JSON" in text
    assert ": :" not in text and "got" not in text


def test_an_event_of_a_kind_inspect_does_not_know_yet_is_read_past(agentic, tmp_path):
    """Events are told apart by the kinds Inspect has; another kind is read all the same."""

    def future_event(data: bytes) -> bytes:
        sample = json.loads(data)
        sample["events"].insert(1, {"event": "hologram", "beam": [1, 2], "span_id": None})
        return json.dumps(sample).encode()

    edited = _with_sample(agentic, tmp_path / "future.eval", future_event)
    before, after = (runs_from_records(*read_inspect_log(path)) for path in (agentic, edited))
    for name in TABLES:
        assert getattr(after, name).equals(getattr(before, name)), name


def test_without_the_inspect_extra_reading_and_writing_say_how_to_install_it(
    agentic, evalnb_run, tmp_path, monkeypatch
):
    monkeypatch.setitem(sys.modules, "inspect_ai.log", None)
    with pytest.raises(SetupError, match=r"pip install 'evalnb\[inspect\]'"):
        en.load(agentic)
    assert main(["summary", str(agentic)]) == 2
    with pytest.raises(SetupError, match=r"pip install 'evalnb\[inspect\]'"):
        write_inspect_log(evalnb_run, tmp_path / "logs")
    assert not (tmp_path / "logs").exists()


# --- writing Inspect logs ---------------------------------------------------------------


def test_an_exported_run_is_a_valid_inspect_log_with_messages_events_and_scores(
    evalnb_run, tmp_path
):
    path = write_inspect_log(evalnb_run, tmp_path / "logs")
    log = read_eval_log(str(path))
    runs = en.load(evalnb_run)
    assert log.eval.model == "sim/careful" and log.eval.run_id == runs.runs["run_id"][0]
    assert len(log.samples) == runs.tasks.height == 4
    inspect = samples_df(str(path))
    assert (inspect["error"].fillna("") == "").all()
    tokens = runs.llm_calls.select(pl.col("input_tokens") + pl.col("output_tokens")).sum().item()
    assert inspect["total_tokens"].sum() == tokens > 0
    for sample in log.samples:
        key = (pl.col("task_id") == sample.id) & (pl.col("epoch") == sample.epoch)
        assert sample.messages[0].role == "user"
        models = [e for e in sample.events if e.event == "model"]
        tools = [e for e in sample.events if e.event == "tool"]
        calls = runs.llm_calls.filter(key)
        assert [e.output.usage.input_tokens for e in models] == calls["input_tokens"].to_list()
        tool_rows = runs.tool_calls.filter(key)
        assert [e.arguments["commands"] for e in tools] == tool_rows["commands"].to_list()
        checks = runs.checks.filter(key)
        expected = {c: "C" if ok else "I" for c, ok in checks.select("check", "passed").rows()}
        assert {k: s.value for k, s in sample.scores.items()} == expected
        for event, code in zip(tools, tool_rows["exit_code"], strict=True):
            assert (f"Exit code: {code}" in event.result) == (code != 0)
    accuracy = {s.name: s.metrics["accuracy"].value for s in log.results.scores}
    exit_checks = runs.checks.filter(pl.col("check") == "exit_code:0")
    assert accuracy["exit_code:0"] == pytest.approx(exit_checks["passed"].mean())


def test_an_exported_tool_event_holds_the_text_the_agent_sent_the_model(evalnb_run, tmp_path):
    log = read_eval_log(str(write_inspect_log(evalnb_run, tmp_path / "logs")))
    stderr_seen = False
    for sample in log.samples:
        sent = [m.text for m in sample.messages if m.role == "tool"]
        results = [e.result for e in sample.events if e.event == "tool"]
        assert results == sent and sent
        stderr_seen |= any("STDERR: " in text for text in sent)
    assert stderr_seen  # `ls /nope` fails: its stderr goes to the model marked as such


def test_evalnb_to_inspect_to_evalnb_gives_the_same_tables_and_summary(evalnb_run, tmp_path):
    path = write_inspect_log(evalnb_run, tmp_path / "logs")
    before, after = en.load(evalnb_run), en.load(path)
    assert en.summary(after).equals(en.summary(before))
    _assert_same_tables(after, before)
    with pytest.raises(InputError, match="run_id"):  # the same run reached twice
        en.load(evalnb_run, path)


def test_an_imported_inspect_run_survives_export_and_import_again(agentic, tmp_path):
    [folder] = [
        Path(line.split(": ", 1)[1])
        for line in _cli(["import", "inspect", str(agentic), "--out", str(tmp_path / "runs")])
    ]
    [log] = [
        Path(line.split(": ", 1)[1])
        for line in _cli(["export", "inspect", str(folder), "--out", str(tmp_path / "logs")])
    ]
    original, again = en.load(agentic), en.load(log)
    assert en.summary(again).equals(en.summary(original))
    assert _sorted(again.tool_calls).equals(_sorted(original.tool_calls))


def test_bashkit_eval_runs_without_per_call_tokens_keep_their_totals(bashkit_eval_files, tmp_path):
    assert main(["import", "bashkit-eval", str(bashkit_eval_files[0]), "--out", str(tmp_path)]) == 0
    [folder] = [p for p in tmp_path.iterdir() if p.is_dir()]
    path = write_inspect_log(folder, tmp_path / "logs")
    before, after = en.load(folder), en.load(path)
    assert en.summary(after).equals(en.summary(before))
    _assert_same_tables(after, before)
    inspect = samples_df(str(path))
    assert inspect["total_tokens"].sum() == sum(
        en.load(folder)
        .tasks.select(pl.col("total_input_tokens") + pl.col("total_output_tokens"))
        .to_series()
    )


def test_an_unknown_token_count_is_exported_as_no_usage_not_as_0(tmp_path):
    """Found by the differential tests: a call whose input count was unknown went to
    Inspect as 0 input tokens, so a reader of Inspect's own fields saw a context of 0."""
    calls = [
        LLMCall(call_number=1, input_tokens=None, output_tokens=7),
        LLMCall(call_number=2, input_tokens=900, output_tokens=None),
        LLMCall(call_number=3, input_tokens=1000, output_tokens=9),
    ]
    record = TaskRecord(
        task=Task(id="t", category="c", prompt="p"),
        trace=AgentTrace(llm_calls=calls, turns=3),
        score=TaskScore(task_id="t"),
    )
    meta = RunMeta(run_id="r", provider="p", model="m", status="complete")
    log = read_eval_log(
        str(write_inspect_log(RunStore.write_records(tmp_path, meta, [record]), tmp_path / "logs"))
    )
    usage = [e.output.usage for e in log.samples[0].events if e.event == "model"]
    assert [u is None for u in usage] == [True, True, False]
    assert (usage[2].input_tokens, usage[2].output_tokens) == (1000, 9)


def test_export_refuses_to_overwrite_and_names_a_folder_that_is_not_a_run(evalnb_run, tmp_path):
    out = tmp_path / "logs"
    assert main(["export", "inspect", str(evalnb_run), "--out", str(out)]) == 0
    assert main(["export", "inspect", str(evalnb_run), "--out", str(out)]) == 2
    assert main(["export", "inspect", str(tmp_path), "--out", str(out)]) == 2
    assert [p.name for p in out.iterdir()] == [f"{evalnb_run.name}.eval"]


def test_failed_commands_are_inspect_tool_errors_and_every_sample_has_events(evalnb_run, tmp_path):
    path = write_inspect_log(evalnb_run, tmp_path / "logs")
    runs = en.load(evalnb_run)
    failed = runs.tool_calls.filter(pl.col("exit_code") != 0)
    assert failed.height > 0
    log = read_eval_log(str(path))
    errors = [e for s in log.samples for e in s.events if e.event == "tool" and e.error]
    assert len(errors) == failed.height  # what Inspect's viewer counts as tool errors
    assert {e.error.message for e in errors} == set(failed.get_column("stderr"))
    assert all(s.events[0].event == "sample_init" for s in log.samples)


def test_a_run_without_llm_calls_exports_a_log_events_df_reads(tmp_path):
    csv = ROOT.parent / "shared" / "fixtures" / "onetool-bench" / "result-20260119.csv"
    if not csv.is_file():
        pytest.skip("../shared/fixtures/onetool-bench is absent")
    assert main(["import", "onetool-bench", str(csv), "--out", str(tmp_path / "runs")]) == 0
    folder = next((tmp_path / "runs").iterdir())
    assert en.load(folder).llm_calls.height == 0
    path = write_inspect_log(folder, tmp_path / "logs")
    events = events_df(str(path))
    assert set(events["event"]) == {"sample_init"}
    assert len(events) == en.load(folder).tasks.height


def test_an_empty_run_exports_as_a_log_without_samples_scores(tmp_path):
    log = eval_log(RunMeta(run_id="r", provider="p", model="m", status="complete"), [])
    assert log.samples == [] and log.results.scores == [] and log.status == "success"


def _assert_same_tables(imported: en.Runs, folder: en.Runs) -> None:
    """The tables of a run read back from its Inspect log equal the run folder's own, the
    command counts the folder stores with each attempt (the tasks table's interaction
    columns) included; ``interaction`` over both agrees."""
    for name in ("llm_calls", "tool_calls", "checks"):
        assert _sorted(getattr(imported, name)).equals(_sorted(getattr(folder, name))), name
    assert _sorted(imported.tasks).equals(_sorted(folder.tasks))
    keys = ["run_id", "task_id", "epoch"]
    assert en.interaction(imported).sort(keys).equals(en.interaction(folder).sort(keys))


def _sorted(frame: pl.DataFrame) -> pl.DataFrame:
    """Rows in task order (Inspect keeps samples sorted by id), each task's rows as they were.

    ``attempt_key`` numbers attempts in the order a run stored them, an internal key
    that a log in another order numbers differently: it is left out.
    """
    return frame.drop("attempt_key").sort("run_id", "task_id", "epoch", maintain_order=True)


def _cli(argv: list[str]) -> list[str]:
    import contextlib
    import io

    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        assert main(argv) == 0
    return buf.getvalue().splitlines()


def test_a_log_written_without_samples_is_bad_input_not_an_empty_run(tmp_path, real_logs):
    from inspect_ai.log import write_eval_log

    log = read_eval_log(str(sorted(REAL.glob("*.json"))[0]), header_only=True)
    header = tmp_path / "header.json"
    write_eval_log(log, str(header))
    with pytest.raises(InputError, match=r"header\.json: samples: the log holds no samples"):
        en.load(header)


def test_a_task_name_with_a_slash_gives_a_run_id_that_is_one_folder_name(agentic, tmp_path):
    log = read_eval_log(str(agentic))
    log.eval.task = "inspect_evals/bash tasks"
    meta, _ = log_to_run(log, agentic)
    assert meta.run_id == f"inspect-inspect_evals-bash-tasks-{log.eval.eval_id}"
