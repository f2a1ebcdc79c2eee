"""A reference implementation of evalnb's figures, written from the specs alone.

It is slow and plain on purpose: Python loops over dictionaries, no polars, and nothing
of evalnb's metric code (it reads each run folder's ``run.json`` and ``events.jsonl``
with :mod:`json`, the source of truth). Each figure is recounted from the text of
spec 000 (bashkit-eval metrics), spec 002 (llm-tool-test evaluation), spec 003 (bench
per-call metrics) and the README's section "Metrics: exact definitions", which settles
what the specs leave open. The differential tests (``tests/test_differential.py``)
compare every figure evalnb computes with these, on every path a run can take.

- :mod:`.folder`: a run folder's runs and attempts, as written (the last record of an
  attempt wins);
- :mod:`.attempt`: one attempt's rows of the tasks, llm_calls, tool_calls and checks
  tables;
- :mod:`.commands`: spec 002's target commands and the interaction counts;
- :mod:`.runs`: summaries, categories, context growth, interaction per run and
  subcommand, and spec 000's friction signals;
- :mod:`.pairs`: paired comparisons of two runs and of guidance versions.
"""
