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

Example:
    >>> import evalnb as en
    >>> callable(en.summary)
    True
"""

from __future__ import annotations

from importlib.metadata import version

from evalnb.demo import ensure_demo_runs
from evalnb.diagnostics import common_errors, diagnose, failing_commands, friction
from evalnb.frames import Runs
from evalnb.guidance import compare_guidance
from evalnb.interaction import command_rows, interaction
from evalnb.load import load
from evalnb.metrics import by_category, compare, context_growth, epoch_variance, summary
from evalnb.stats import tasks_needed

__version__ = version("evalnb")


__all__ = [
    "Runs",
    "__version__",
    "by_category",
    "command_rows",
    "common_errors",
    "compare",
    "compare_guidance",
    "context_growth",
    "diagnose",
    "ensure_demo_runs",
    "epoch_variance",
    "failing_commands",
    "friction",
    "interaction",
    "load",
    "summary",
    "tasks_needed",
]
