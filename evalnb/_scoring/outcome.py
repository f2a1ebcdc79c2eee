"""Spec 002 outcome and optional composite score of one scenario attempt.

- **Outcome**: Pass iff every gate passes and (the judge is disabled or the judge
  passes); otherwise Fail, with a reason naming each failed gate and the judge's
  shortfall. Interaction metrics never change the outcome.
- **Composite** (only when the scenario sets ``evaluation.composite``)::

      composite = gate_weight * gates_passed / gates_total
                + judge_weight * judge_score
                + interaction_weight * interaction_score

  ``judge_score`` is the recomputed weighted score; a composite that needs a judge
  score the judge failed to give is None. The **interaction score** is the attempt's
  spec-002 ``first_try_success_rate`` (distinct target commands that succeeded the
  first time / all target commands run), and 0 when the
  agent ran no target command: an agent that never used the tool earns no interaction
  credit.

Example:
    >>> from evalnb._scoring.gates import GateResult
    >>> gates = [GateResult(gate_type="file_exists", passed=True, message="ok"),
    ...          GateResult(gate_type="command_succeeds", passed=False, message="exit 1")]
    >>> decide_outcome(gates, None)
    Outcome(passed=False, reason='gate 2 (command_succeeds) failed: exit 1')
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from evalnb._scoring.commands import executed_commands
from evalnb._scoring.gates import GateResult
from evalnb._scoring.judge import Judgement
from evalnb.records import AgentTrace
from evalnb.records.rust_regex import compile_pattern
from evalnb.records.scenario import Composite


@dataclass(frozen=True)
class Outcome:
    """Pass, or Fail with a reason."""

    passed: bool
    reason: str | None = None

    @property
    def label(self) -> Literal["pass", "fail"]:
        """``"pass"`` or ``"fail"`` (the ``outcome`` column).

        Example:
            >>> Outcome(True).label
            'pass'
        """
        return "pass" if self.passed else "fail"


def decide_outcome(gates: Sequence[GateResult], judgement: Judgement | None) -> Outcome:
    """Spec 002: Pass iff all gates pass and (no judge or the judge passes).

    ``judgement`` is None when the judge is disabled.

    Example:
        >>> decide_outcome([], None)
        Outcome(passed=True, reason=None)
    """
    reasons = [
        f"gate {i} ({g.gate_type}) failed: {g.message}"
        for i, g in enumerate(gates, start=1)
        if not g.passed
    ]
    if judgement is not None and not judgement.passed:
        if judgement.error is not None:
            reasons.append(f"judge error: {judgement.error}")
        else:
            reasons.append(
                f"judge weighted_score {judgement.score:.3f} < {judgement.pass_threshold:g}"
            )
    return Outcome(passed=not reasons, reason="; ".join(reasons) or None)


def interaction_score(trace: AgentTrace, command_pattern: str) -> float:
    """The composite's interaction component: the attempt's first-try success rate.

    Distinct target commands whose first execution exited 0, over all target commands
    executed (spec 002's ``first_try_success_rate``; commands and exit codes from
    :func:`evalnb._scoring.commands.executed_commands`: recorded invocations, else the
    command text),
    and 0 when the agent ran no target command.

    Example:
        >>> from evalnb.records import ToolCallResult as Call
        >>> trace = AgentTrace(tool_calls=[Call(commands="notes ad x", exit_code=2),
        ...     Call(commands="notes add x"), Call(commands="notes add x")])
        >>> round(interaction_score(trace, r"notes\\s+(\\S+)"), 3)  # 1 of 3
        0.333
        >>> interaction_score(AgentTrace(), "notes")
        0.0
    """
    executed = [
        (e.command.command, e.exit_code)
        for e in executed_commands(trace.tool_calls, compile_pattern(command_pattern))
    ]
    first: dict[str, int | None] = {}
    for command, code in executed:
        first.setdefault(command, code)
    return sum(code == 0 for code in first.values()) / len(executed) if executed else 0.0


def composite_score(
    weights: Composite,
    gates: Sequence[GateResult],
    judge_score: float | None,
    interaction: float,
) -> float | None:
    """The weighted composite of gates, judge and interaction (None if a part is missing).

    Example:
        >>> w = Composite(gate_weight=0.5, judge_weight=0.3, interaction_weight=0.2)
        >>> g = [GateResult(gate_type="file_exists", passed=p, message="") for p in (1, 1, 0, 1)]
        >>> round(composite_score(w, g, 0.8, 0.5), 3)  # 0.5*3/4 + 0.3*0.8 + 0.2*0.5
        0.715
    """
    parts = [weights.interaction_weight * interaction]
    if weights.gate_weight:
        parts.append(weights.gate_weight * sum(g.passed for g in gates) / len(gates))
    if weights.judge_weight:
        if judge_score is None:
            return None
        parts.append(weights.judge_weight * judge_score)
    return sum(parts)
