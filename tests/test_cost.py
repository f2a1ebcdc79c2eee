"""Prices and task costs (evalnb._analysis.cost): lookup rules, formula, unknown and free models."""

from __future__ import annotations

import warnings

import polars as pl
import pytest

from evalnb._analysis.cost import Price, Prices, load_prices, price_for, run_costs, task_cost
from evalnb._analysis.runs import Runs
from evalnb._store.tables import tables_from_records
from evalnb.errors import InputError
from evalnb.records import AgentTrace, LLMCall, RunMeta, Task, TaskRecord, TaskScore
from tests.factories import run_of

PRICES = Prices(
    models={
        "anthro-model": Price(
            input=1.0,
            output=5.0,
            cached_input=0.1,
            cache_write=1.25,
            as_of="2026-02",
            source="test",
            aliases=["acme/anthro-model", "anthro-model-2*"],
        ),
        "openai-model": Price(
            input=0.15,
            output=0.6,
            cached_input=0.075,
            as_of="2026-02",
            source="test",
        ),
        "no-cache-write": Price(
            input=2.0, output=8.0, cached_input=0.5, as_of="2026-02-10", source="test"
        ),
        "offline": Price(free=True, source="test"),
        "scripted/*": Price(free=True, source="test"),
    }
)


def one_task_run(
    model: str,
    provider: str = "p",
    *,
    input_tokens: int = 0,
    output_tokens: int = 0,
    cache_read: int | None = None,
    cache_write: int | None = None,
    recorded_cost: float | None = None,
) -> Runs:
    """A run of one task whose single LLM call carries the given counts.

    ``input_tokens`` is the whole prompt, cache reads and writes included.
    """
    call = LLMCall(
        call_number=1,
        input_tokens=input_tokens,
        cache_read_tokens=cache_read,
        cache_write_tokens=cache_write,
    )
    trace = AgentTrace(
        llm_calls=[call], total_input_tokens=input_tokens, total_output_tokens=output_tokens
    )
    extra = {} if recorded_cost is None else {"recorded_cost_usd": recorded_cost}
    rec = TaskRecord(
        task=Task(id="t", category="c", prompt="p"),
        trace=trace,
        score=TaskScore(task_id="t"),
        extra=extra,
    )
    meta = RunMeta(run_id=f"run-{model}", provider=provider, model=model)
    return Runs(**tables_from_records(meta, [rec]))


def cost_of(runs: Runs) -> float | None:
    return task_cost(runs, PRICES).get_column("cost_usd").item()


def test_cost_without_cache_is_input_plus_output_per_million():
    # 2M input at $1 + 0.1M output at $5.
    assert cost_of(one_task_run("anthro-model", input_tokens=2_000_000, output_tokens=100_000)) == (
        pytest.approx(2.5)
    )


def test_cache_reads_and_writes_are_charged_at_their_own_prices():
    # A 64k-token prompt: 10k uncached * $1 + 50k read * $0.10 + 4k written * $1.25
    # + 2k output * $5 = 0.01 + 0.005 + 0.005 + 0.01.
    runs = one_task_run(
        "anthro-model",
        input_tokens=10_000 + 50_000 + 4_000,
        output_tokens=2_000,
        cache_read=50_000,
        cache_write=4_000,
    )
    assert cost_of(runs) == pytest.approx(0.03)


def test_a_recorded_cost_wins_over_the_price_table():
    runs = one_task_run("anthro-model", input_tokens=10**6, recorded_cost=0.42)
    table = task_cost(runs, PRICES)
    assert table.select("cost_usd", "cost_source").row(0) == (0.42, "recorded")
    assert task_cost(one_task_run("anthro-model"), PRICES).get_column("cost_source").item() == (
        "prices"
    )


def test_a_recorded_cost_needs_no_price_entry_and_warns_nothing():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert cost_of(one_task_run("mystery-9", recorded_cost=1.5)) == 1.5


def test_cached_tokens_inside_the_input_count_are_not_charged_twice():
    # OpenAI style: 1M prompt tokens of which 400k cached: 600k * $0.15 + 400k * $0.075
    # + 100k output * $0.60 = 0.09 + 0.03 + 0.06.
    runs = one_task_run(
        "openai-model", input_tokens=1_000_000, output_tokens=100_000, cache_read=400_000
    )
    assert cost_of(runs) == pytest.approx(0.18)


def test_cache_writes_without_a_cache_write_price_cost_the_input_price():
    # 1M written at the $2 input price.
    runs = one_task_run("no-cache-write", input_tokens=1_000_000, cache_write=1_000_000)
    assert cost_of(runs) == pytest.approx(2.0)


def test_unknown_model_has_null_cost_and_a_warning_naming_it():
    runs = one_task_run("mystery-9", input_tokens=1000, output_tokens=10)
    with pytest.warns(UserWarning, match="mystery-9"):
        assert cost_of(runs) is None


def test_free_models_cost_zero_without_warning():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert cost_of(one_task_run("offline", input_tokens=10**6)) == 0.0
        assert cost_of(one_task_run("my_agent", provider="scripted")) == 0.0


def mixed_run(model: str) -> Runs:
    """Five tasks: four priced from their tokens (with and without cache), one recorded."""
    records = []
    for i, (input_tokens, output_tokens, cache_read, recorded) in enumerate(
        [
            (1_234_567, 89_101, None, None),
            (64_000, 2_000, 50_000, None),
            (3, 1, 1, None),
            (10**6, 0, None, 0.4242),
            (777_777, 33_333, 700_000, None),
        ]
    ):
        call = LLMCall(call_number=1, input_tokens=input_tokens, cache_read_tokens=cache_read)
        trace = AgentTrace(
            llm_calls=[call], total_input_tokens=input_tokens, total_output_tokens=output_tokens
        )
        records.append(
            TaskRecord(
                task=Task(id=f"t{i}", category="c", prompt="p"),
                trace=trace,
                score=TaskScore(task_id=f"t{i}"),
                extra={} if recorded is None else {"recorded_cost_usd": recorded},
            )
        )
    return run_of(records, "r", model)


def run_cost(runs: Runs) -> float | None:
    return run_costs(runs, PRICES).collect().get_column("cost_usd").item()


def test_a_runs_cost_is_its_tasks_costs_summed_the_same_in_any_row_order():
    runs = mixed_run("anthro-model")
    assert run_cost(runs) == pytest.approx(task_cost(runs, PRICES)["cost_usd"].sum(), rel=1e-12)
    for seed in range(5):
        runs.tasks = runs.tasks.sample(fraction=1.0, shuffle=True, seed=seed)
        assert run_cost(runs) == run_cost(mixed_run("anthro-model"))


def test_a_runs_priced_cost_prices_every_task_its_recorded_ones_too():
    runs = mixed_run("anthro-model")
    [row] = run_costs(runs, PRICES).collect().rows(named=True)
    priced = task_cost(runs, PRICES)["priced_cost_usd"].sum()  # t3's tokens at the prices
    assert row["priced_cost_usd"] == pytest.approx(priced, rel=1e-12)
    assert row["priced_cost_usd"] - row["cost_usd"] == pytest.approx(1.0 - 0.4242)
    # unknown when a task lacks its tokens, a recorded one too; 0 for a free model
    untold = without(mixed_run("anthro-model"), "t3", "total_output_tokens")
    assert run_costs(untold, PRICES).collect()["priced_cost_usd"].item() is None
    assert run_costs(mixed_run("offline"), PRICES).collect()["priced_cost_usd"].item() == 0.0
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # an unpriced model's recorded cost needs no price
        unpriced = run_costs(one_task_run("mystery-9", recorded_cost=1.5), PRICES).collect()
    assert unpriced.select("cost_usd", "priced_cost_usd").row(0) == (1.5, None)


def without(runs: Runs, task_id: str, column: str) -> Runs:
    """``runs`` with ``column`` unknown (null) for task ``task_id``."""
    unknown = pl.when(pl.col("task_id") == task_id).then(None).otherwise(column)
    runs.tasks = runs.tasks.with_columns(unknown.alias(column))
    return runs


def test_a_run_with_one_task_of_unknown_cost_has_an_unknown_cost():
    runs = without(mixed_run("anthro-model"), "t1", "total_input_tokens")
    assert task_cost(runs, PRICES)["cost_usd"].null_count() == 1
    assert run_cost(runs) is None


def test_a_recorded_task_without_token_counts_still_has_its_cost():
    runs = without(mixed_run("anthro-model"), "t3", "total_output_tokens")
    assert run_cost(runs) == pytest.approx(task_cost(runs, PRICES)["cost_usd"].sum(), rel=1e-12)


def test_a_free_model_costs_nothing_even_without_token_counts():
    runs = mixed_run("offline")
    runs.tasks = runs.tasks.with_columns(pl.lit(None, dtype=pl.Int64).alias("total_input_tokens"))
    assert task_cost(runs, PRICES)["cost_usd"].sum() == run_cost(runs) == 0.4242  # recorded


def test_an_unpriced_model_costs_its_recorded_tasks_only_when_all_recorded():
    with pytest.warns(UserWarning, match="mystery-9"):
        assert run_cost(mixed_run("mystery-9")) is None
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert run_cost(one_task_run("mystery-9", recorded_cost=1.5)) == 1.5
        assert run_cost(one_task_run("offline", input_tokens=10**6)) == 0.0


def test_lookup_by_name_alias_provider_prefix_and_pattern():
    anthro = PRICES.models["anthro-model"]
    assert price_for("anthro-model", None, PRICES) is anthro
    assert price_for("acme/anthro-model", None, PRICES) is anthro  # alias
    assert price_for("other/anthro-model", None, PRICES) is anthro  # prefix removed
    assert price_for("anthro-model-20260101", None, PRICES) is anthro  # pattern alias
    assert price_for("any", "scripted", PRICES) is PRICES.models["scripted/*"]  # provider/model
    assert price_for("anthro-model-x", None, PRICES) is None


def test_exact_names_win_over_patterns():
    prices = Prices(
        models={
            "m*": Price(free=True, source="s"),
            "m1": Price(input=1, output=1, cached_input=1, as_of="2026-02", source="s"),
        }
    )
    assert price_for("m1", None, prices) is prices.models["m1"]
    assert price_for("m2", None, prices) is prices.models["m*"]


def test_shipped_prices_cover_the_baseline_models_and_mark_offline_agents_free():
    prices = load_prices()
    for model in (
        "claude-haiku-4-5",
        "claude-opus-4-6",
        "claude-sonnet-4-5",
        "gpt-5.2",
        "gpt-4o-mini",
        "gpt-4o",
    ):
        price = prices.models[model]
        assert not price.free and price.as_of == "2026-02" and "check" in price.source
    assert price_for("persona", "sim", prices).free
    assert price_for("sim/persona", "sim", prices).free
    assert price_for("reference", "reference", prices).free
    assert price_for("my_script", "scripted", prices).free
    assert price_for("gpt-4o-mini", "openai", prices) is prices.models["gpt-4o-mini"]
    assert (
        price_for("claude-haiku-4-5-20251001", "anthropic", prices)
        is prices.models["claude-haiku-4-5"]
    )


@pytest.mark.parametrize(
    ("body", "where"),
    [
        (
            "models:\n  m:\n    input: -1\n    output: 1\n    cached_input: 1\n"
            "    as_of: '2026-02'\n    source: s\n",
            "prices.yaml:3: models.m.input:",
        ),
        (
            "models:\n  m:\n    input: 1\n    output: 1\n    cached_input: 1\n    source: s\n",
            "prices.yaml:2: models.m: missing as_of",
        ),
        ("models:\n  m:\n    free: true\n    input: 1\n    source: s\n", "must not list prices"),
        (
            "models:\n  a:\n    free: true\n    source: s\n    aliases: [b]\n"
            "  b:\n    free: true\n    source: s\n",
            "prices.yaml:1: models: name 'b' is used by both 'a' and 'b'",
        ),
        ("models:\n  m:\n    free: true\n    source: s\n    colour: red\n", "models.m.colour"),
    ],
)
def test_bad_price_files_name_file_line_and_field(tmp_path, body, where):
    path = tmp_path / "prices.yaml"
    path.write_text(body)
    with pytest.raises(InputError) as err:
        load_prices(path)
    assert where in str(err.value)


def test_a_full_date_in_yaml_is_accepted_as_as_of(tmp_path):
    path = tmp_path / "prices.yaml"
    path.write_text(
        "models:\n  m:\n    input: 1\n    output: 2\n    cached_input: 0.5\n"
        "    as_of: 2026-02-10\n    source: s\n"
    )
    assert load_prices(path).models["m"].as_of == "2026-02-10"


def test_a_price_table_from_before_whole_prompt_counts_is_told_what_changed(tmp_path):
    path = tmp_path / "prices.yaml"
    path.write_text(
        "models:\n  m:\n    input: 1\n    output: 2\n    cached_input: 0.5\n"
        "    input_includes_cached: true\n    as_of: '2026-02'\n    source: s\n"
    )
    with pytest.raises(InputError, match="input_includes_cached is no longer used"):
        load_prices(path)
