"""Prices a provider charges per call: 1-hour cache writes and long-context tiers,
recounted call by call by hand."""

from __future__ import annotations

import json

import pytest

from evalnb._analysis.cost import LongContext, Price, Prices, load_prices, task_cost
from evalnb._analysis.runs import Runs
from evalnb._analysis.summary import summary
from evalnb._formats.claude_code import read_claude_code
from evalnb.records import AgentTrace, LLMCall, Task, TaskRecord, TaskScore
from tests import factories
from tests.test_claude_code_import import session_lines, write

TIERED = Prices(
    models={
        "tiered": Price(
            input=1.0,
            output=2.0,
            cached_input=0.1,
            cache_write=1.25,
            cache_write_1h=2.0,
            long_context=LongContext(above=1000, input=3.0, output=4.0),
            as_of="2026-02",
            source="test",
        )
    }
)

# (input (whole prompt), output, cache read, cache write, of which 1-hour)
CALLS = [(500, 10, 0, 100, 40), (1500, 20, 1000, 0, 0)]


def run_of(calls: list[tuple[int, int, int, int, int]]) -> Runs:
    llm = [
        LLMCall(
            call_number=i,
            input_tokens=inp,
            output_tokens=out,
            cache_read_tokens=read,
            cache_write_tokens=written,
            cache_write_1h_tokens=hour,
        )
        for i, (inp, out, read, written, hour) in enumerate(calls, start=1)
    ]
    trace = AgentTrace(
        llm_calls=llm,
        total_input_tokens=sum(c[0] for c in calls),
        total_output_tokens=sum(c[1] for c in calls),
    )
    rec = TaskRecord(
        task=Task(id="t", category="c", prompt="p"), trace=trace, score=TaskScore(task_id="t")
    )
    return factories.run_of([rec], model="tiered")


def test_each_call_is_charged_at_its_own_rates():
    runs = run_of(CALLS)
    # call 1, short prompt: 400 uncached x 1 + 60 five-minute writes x 1.25 + 40 one-hour
    # writes x 2 + 10 output x 2 = 575; call 2, above 1000 tokens: 500 uncached x 3 +
    # 1000 reads x 0.1 (no long-context rate: the base one) + 20 output x 4 = 1680
    expected = (575 + 1680) / 1e6
    assert task_cost(runs, TIERED).get_column("cost_usd").item() == pytest.approx(expected)
    assert summary(runs, prices=TIERED).get_column("cost_usd").item() == pytest.approx(expected)


def test_without_tiers_the_cost_is_the_base_formula():
    base = Prices(
        models={"tiered": TIERED.models["tiered"].model_copy(update={"cache_write_1h": None,
                                                                     "long_context": None})}
    )  # fmt: skip
    # 900 uncached x 1 + 1000 reads x 0.1 + 100 writes x 1.25 + 30 output x 2
    expected = (900 + 100 + 125 + 60) / 1e6
    assert task_cost(run_of(CALLS), base).get_column("cost_usd").item() == pytest.approx(expected)


def test_the_packaged_prices_charge_sonnet_long_context_and_anthropic_one_hour_writes():
    prices = load_prices()
    sonnet = prices.models["claude-sonnet-4-5"]
    assert sonnet.long_context is not None and sonnet.long_context.above == 200_000
    assert sonnet.long_context.input == 2 * sonnet.input
    for name in ("claude-haiku-4-5", "claude-opus-4-6", "claude-sonnet-4-5"):
        assert prices.models[name].cache_write_1h == 2 * prices.models[name].input
    assert prices.models["gpt-5.2"].long_context is None


def test_claude_code_one_hour_cache_writes_are_read(tmp_path):
    lines = session_lines()
    usage = lines[1]["message"]["usage"]
    usage["cache_creation"] = {"ephemeral_5m_input_tokens": 1000, "ephemeral_1h_input_tokens": 3000}
    lines[2]["message"]["usage"] = usage
    [(_, [record])] = read_claude_code([write(tmp_path / "s.jsonl", lines)])
    first = record.trace.llm_calls[0]
    assert (first.cache_write_tokens, first.cache_write_1h_tokens) == (4000, 3000)
    assert (
        json.loads(record.model_dump_json())["trace"]["llm_calls"][1]["cache_write_1h_tokens"]
        is None
    )
