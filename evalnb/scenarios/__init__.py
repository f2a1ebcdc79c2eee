"""CLI-tool scenarios (spec 002): YAML scenarios, gates, the LLM judge and the outcome.

- :mod:`evalnb.scenarios.schema`: the scenario and rubric YAML (``load_scenario``,
  ``load_rubric``).
- :mod:`evalnb.scenarios.case`: scenarios as runner cases (``load_scenario_cases``).
- :mod:`evalnb.scenarios.gates`: the nine generic gates.
- :mod:`evalnb.scenarios.judge`: the rubric-driven judge.
- :mod:`evalnb.scenarios.outcome`: pass/fail and the optional composite.

Example:
    >>> from evalnb.scenarios import load_scenario
    >>> load_scenario("missing.yaml")
    Traceback (most recent call last):
    ...
    evalnb.errors.InputError: missing.yaml: file not found
"""

from evalnb.scenarios.case import ScenarioCase, SetupError, load_scenario_cases
from evalnb.scenarios.schema import Rubric, Scenario, load_rubric, load_scenario

__all__ = [
    "Rubric",
    "Scenario",
    "ScenarioCase",
    "SetupError",
    "load_rubric",
    "load_scenario",
    "load_scenario_cases",
]
