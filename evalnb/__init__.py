"""evalnb: measure how well LLMs use command-line tools, and analyse it in Jupyter.

The analysis API, one function per tidy table or figure::

    import evalnb as en
    runs = en.load("runs/*", "results/*.json")   # run folders and foreign traces
    en.summary(runs)          # one row per run: spec 000's EvalSummary + pass rate + intervals
    en.by_category(runs)      # one row per (run, category)
    en.context_growth(runs)   # spec 003 per task
    en.interaction(runs)      # spec 002 layer 1 per task
    en.friction(runs)         # spec 000 healthy profile and friction signals (en.Thresholds)
    en.diagnose(runs)         # spec 000 cross-model diagnostics
    en.compare(runs, "a", "b")   # paired comparison on shared tasks
    en.compare_all(runs)         # every pair on the same dataset, Holm-adjusted
    en.pass_at_k(runs, k=[1, 3, 5])   # pass@k and pass^k per run, with intervals
    en.flaky_tasks(runs)         # tasks whose attempts disagree, per model
    en.consistency(runs)         # per run: share of repeated tasks whose attempts agree
    en.task_diff(runs, "a", "b")      # the tasks that flipped from run a to run b
    en.regression_gate(en.compare(runs, "a", "b", include_errored=True))  # b worse than a?
    en.context_peaks(runs)       # per attempt: peak context, drops, tokens re-read
    en.judge_agreement(runs, labels="human.csv")   # Krippendorff's alpha of the judges
    en.judge_scores(runs)        # one row per attempt and judge that scored it

``import evalnb`` loads only this analysis layer. ``evalnb.charts`` and
``evalnb.widgets`` (the presentation layer) and :func:`ensure_demo_runs` (which runs
the offline demo) load on first use.

Example:
    >>> import evalnb as en
    >>> callable(en.summary), en.InputError.__mro__[1].__name__
    (True, 'EvalnbError')
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from evalnb._analysis import categories as _categories
from evalnb._analysis import compare as _compare
from evalnb._analysis import context as _context
from evalnb._analysis import diagnostics as _diagnostics
from evalnb._analysis import flaky as _flaky
from evalnb._analysis import guidance as _guidance
from evalnb._analysis import interaction as _interaction
from evalnb._analysis import judge_agreement as _judge_agreement
from evalnb._analysis import load as _load
from evalnb._analysis import pass_at_k as _pass_at_k
from evalnb._analysis import regression as _regression
from evalnb._analysis import stats as _stats
from evalnb._analysis import summary as _summary
from evalnb._analysis.boundary import checked
from evalnb._analysis.runs import Runs
from evalnb._analysis.thresholds import DiagnosisThresholds, GuidanceThresholds, Thresholds
from evalnb._version import __version__
from evalnb.errors import (
    DamagedInputWarning,
    DataQualityWarning,
    EvalnbError,
    EvalnbWarning,
    FallbackWarning,
    InputError,
    MissingPriceWarning,
    PartialRunWarning,
    ProviderError,
    SetupError,
)

# the public analysis API checks its arguments' types (evalnb._analysis.boundary)
by_category = checked(_categories.by_category)
compare = checked(_compare.compare)
compare_all = checked(_compare.compare_all)
context_growth = checked(_context.context_growth)
context_peaks = checked(_context.context_peaks)
common_errors = checked(_diagnostics.common_errors)
diagnose = checked(_diagnostics.diagnose)
failing_commands = checked(_diagnostics.failing_commands)
friction = checked(_diagnostics.friction)
consistency = checked(_flaky.consistency)
epoch_variance = checked(_flaky.epoch_variance)
flaky_tasks = checked(_flaky.flaky_tasks)
compare_guidance = checked(_guidance.compare_guidance)
command_rows = checked(_interaction.command_rows)
interaction = checked(_interaction.interaction)
judge_agreement = checked(_judge_agreement.judge_agreement)
judge_scores = checked(_judge_agreement.judge_scores)
load = checked(_load.load)
pass_at_k = checked(_pass_at_k.pass_at_k)
regression_gate = checked(_regression.regression_gate)
task_diff = checked(_regression.task_diff)
tasks_needed = checked(_stats.tasks_needed)
summary = checked(_summary.summary)

if TYPE_CHECKING:
    from evalnb._demo import ensure_demo_runs
    from evalnb._present import charts, groups, story, widgets
    from evalnb._present.tables import show

_LAZY = {  # name: (module, attribute or None for the module, the pip extra it needs)
    "charts": ("evalnb._present.charts", None, None),
    "widgets": ("evalnb._present.widgets", None, "notebooks"),
    "groups": ("evalnb._present.groups", None, None),
    "story": ("evalnb._present.story", None, None),
    "show": ("evalnb._present.tables", "show", None),
    "ensure_demo_runs": ("evalnb._demo", "ensure_demo_runs", None),
}


def __getattr__(name: str) -> Any:
    """Load the presentation layer and the demo on first use (PEP 562)."""
    if name not in _LAZY:
        raise AttributeError(f"module 'evalnb' has no attribute {name!r}")
    module_name, attribute, extra = _LAZY[name]
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        if extra is None or exc.name is None or exc.name.startswith("evalnb"):
            raise
        raise SetupError(f"{exc.name} is not installed: pip install 'evalnb[{extra}]'") from None
    value = module if attribute is None else getattr(module, attribute)
    globals()[name] = value
    return value


__all__ = [
    "DamagedInputWarning",
    "DataQualityWarning",
    "DiagnosisThresholds",
    "EvalnbError",
    "EvalnbWarning",
    "FallbackWarning",
    "GuidanceThresholds",
    "InputError",
    "MissingPriceWarning",
    "PartialRunWarning",
    "ProviderError",
    "Runs",
    "SetupError",
    "Thresholds",
    "__version__",
    "by_category",
    "charts",
    "command_rows",
    "common_errors",
    "compare",
    "compare_all",
    "compare_guidance",
    "consistency",
    "context_growth",
    "context_peaks",
    "diagnose",
    "ensure_demo_runs",
    "epoch_variance",
    "failing_commands",
    "flaky_tasks",
    "friction",
    "groups",
    "interaction",
    "judge_agreement",
    "judge_scores",
    "load",
    "pass_at_k",
    "regression_gate",
    "show",
    "story",
    "summary",
    "task_diff",
    "tasks_needed",
    "widgets",
]
