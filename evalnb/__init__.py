"""evalnb: measure how well LLMs use command-line tools, and analyse it in Jupyter.

The analysis API, one function per tidy table or figure::

    import evalnb as en
    runs = en.load("runs/*", "results/*.json")   # evalnb runs and bashkit-eval results
    en.summary(runs)          # one row per run: spec 000's EvalSummary + pass rate + intervals
    en.by_category(runs)      # one row per (run, category)
    en.context_growth(runs)   # spec 003 per task
    en.interaction(runs)      # spec 002 layer 1 per task
    en.friction(runs)         # spec 000 healthy profile and friction signals
    en.diagnose(runs)         # spec 000 cross-model diagnostics
    en.compare(runs, "a", "b")   # paired comparison on shared tasks

Names are imported on first use, so ``import evalnb`` stays fast.

Example:
    >>> import evalnb as en
    >>> callable(en.summary)
    True
"""

from __future__ import annotations

from importlib import import_module
from importlib.metadata import version
from typing import Any

__version__ = version("evalnb")

_EXPORTS = {
    "load": "evalnb.load",
    "Runs": "evalnb.frames",
    "summary": "evalnb.metrics",
    "by_category": "evalnb.metrics",
    "context_growth": "evalnb.metrics",
    "compare": "evalnb.metrics",
    "epoch_variance": "evalnb.metrics",
    "tasks_needed": "evalnb.stats",
    "interaction": "evalnb.interaction",
    "command_rows": "evalnb.interaction",
    "friction": "evalnb.diagnostics",
    "diagnose": "evalnb.diagnostics",
    "failing_commands": "evalnb.diagnostics",
    "common_errors": "evalnb.diagnostics",
    "compare_guidance": "evalnb.guidance",
    "ensure_demo_runs": "evalnb.demo",
}

__all__ = ["__version__", *_EXPORTS]


def __getattr__(name: str) -> Any:
    if name in _EXPORTS:
        value = getattr(import_module(_EXPORTS[name]), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'evalnb' has no attribute {name!r}")
