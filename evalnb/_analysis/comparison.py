"""Two runs compared, paired on the tasks they share: the figures and how they read.

:func:`evalnb._analysis.compare.compare` computes them.

Example:
    >>> power_note(30, 0.5, None)
    ''
"""

from __future__ import annotations

from dataclasses import dataclass, fields

import polars as pl

from evalnb import _display as fmt
from evalnb._analysis.stats import (
    SMALL_N,
    holm,
)


@dataclass
class Comparison:
    """Two runs compared, paired on the tasks they share (per-task figures first).

    Coverage: ``tasks`` shared tasks used; ``tasks_only_a``/``tasks_only_b`` ran in one
    run only; ``tasks_errored`` shared tasks left out because every attempt on one side
    errored; ``errored_a``/``errored_b`` errored attempts left out of the paired figures
    (infrastructure errors are not model failures; with ``include_errored`` they count
    as failed attempts instead and these are 0); ``attempts_a``/``attempts_b`` the
    attempts used; ``tasks_unscored`` tasks used whose score is unknown (NaN) in every
    attempt on a side, left out of the weighted rate's test as they add nothing to its
    rates (an attempt with an unknown score counts in neither).

    Pass rates: ``pass_rate_a``/``pass_rate_b`` (passes / attempts used), ``diff`` =
    A - B, ``diff_lo``/``diff_hi`` its 95% interval and ``p`` its two-sided p-value,
    by ``test``: with one attempt per task on each side, Newcombe's method 10 and the
    exact McNemar test; with epochs, the task-clustered method 10 (MOVER) and the
    sign-flip test on per-task pass shares (exact up to 16 tasks that differ, else
    20,000 seeded random sign patterns). ``a_higher``/``b_higher``/``tied``: tasks
    whose pass share is higher in A, in B, or equal (with one attempt: only A passed,
    only B passed, both or neither).

    Weighted rates: ``rate_a``/``rate_b`` = Σscore / Σmax_score over the attempts used
    (the reports' overall rate when the runs share every task and nothing errored),
    ``rate_diff`` with its clustered interval, and ``rate_p`` the sign-flip test on
    per-task mean scores (over the attempts whose score is known). ``per_task``: one
    row per shared task used.

    Power: under :data:`~evalnb._analysis.stats.SMALL_N` (25) shared tasks,
    ``detectable`` is the smallest pass-rate difference the test detects at 80% power
    around the pooled pass rate (:func:`~evalnb._analysis.stats.detectable_difference`),
    and :meth:`power_note` says it; None from 25 tasks on.
    """

    a: str
    b: str
    model_a: str
    model_b: str
    tasks: int
    tasks_only_a: int
    tasks_only_b: int
    tasks_errored: int
    attempts_a: int
    attempts_b: int
    errored_a: int
    errored_b: int
    tasks_unscored: int
    include_errored: bool
    a_higher: int
    b_higher: int
    tied: int
    pass_rate_a: float
    pass_rate_b: float
    diff: float
    diff_lo: float | None
    diff_hi: float | None
    p: float
    test: str
    rate_a: float | None
    rate_b: float | None
    rate_diff: float | None
    rate_diff_lo: float | None
    rate_diff_hi: float | None
    rate_p: float | None
    detectable: float | None
    per_task: pl.DataFrame

    def as_frame(self) -> pl.DataFrame:
        """The figures (all but ``per_task``) as a one-row DataFrame.

        Example:
            >>> from evalnb._analysis.compare import compare
            >>> from evalnb._analysis.runs import Runs
            >>> from evalnb.records import RunMeta, Task, TaskRecord, TaskScore
            >>> from evalnb._store.tables import tables_from_records
            >>> recs = [TaskRecord(task=Task(id="t", category="c", prompt="p"),
            ...     score=TaskScore(task_id="t", score=1, max_score=1))]
            >>> runs = Runs.concat([Runs(**tables_from_records(
            ...     RunMeta(run_id=r, provider="p", model=r), recs)) for r in ("x", "y")])
            >>> compare(runs, "x", "y").as_frame().select("tasks", "diff", "p").row(0)
            (1, 0.0, 1.0)
        """
        p_holm, rate_p_holm = self.holm()
        return pl.DataFrame(
            [
                {f.name: getattr(self, f.name) for f in fields(self) if f.name != "per_task"}
                | {"p_holm": p_holm, "rate_p_holm": rate_p_holm}
            ]
        )

    def holm(self) -> tuple[float | None, float | None]:
        """Holm-adjusted ``(p, rate_p)``: the two metrics are two comparisons of one pair."""
        p_holm, rate_p_holm = holm([self.p, self.rate_p])
        return p_holm, rate_p_holm

    def coverage(self) -> str:
        """One sentence: tasks used, tasks and attempts left out (never dropped silently)."""
        parts = [f"{self.tasks} shared tasks ({self.attempts_a} vs {self.attempts_b} attempts)"]
        if self.tasks_only_a or self.tasks_only_b:
            parts.append(
                f"not shared: {self.tasks_only_a} tasks only in A, {self.tasks_only_b} only in B"
            )
        if self.errored_a or self.errored_b:
            parts.append(
                f"errored attempts left out: {self.errored_a} in A, {self.errored_b} in B"
                + (f" ({self.tasks_errored} tasks with none left)" if self.tasks_errored else "")
            )
        if self.tasks_unscored:
            parts.append(f"{self.tasks_unscored} tasks without a known score on a side")
        return "; ".join(parts)

    def power_note(self) -> str:
        """Under 25 shared tasks, what the pass-rate test could detect; else ``""``."""
        return power_note(self.tasks, (self.pass_rate_a + self.pass_rate_b) / 2, self.detectable)

    def _discordance(self) -> str:
        if self.test == "exact McNemar":
            return f"only A passed {self.a_higher}, only B passed {self.b_higher}"
        return f"A higher on {self.a_higher} tasks, B higher on {self.b_higher}"

    def __str__(self) -> str:
        head = f"A = {self.model_a} ({self.a}) vs B = {self.model_b} ({self.b}): {self.coverage()}"
        p_holm, rate_p_holm = self.holm()
        pass_line = (
            f"pass rate     {fmt.rate(self.pass_rate_a)} vs {fmt.rate(self.pass_rate_b)}  "
            f"diff {fmt.points(self.diff)} {_ci(self.diff_lo, self.diff_hi)}  "
            f"{self.test} p = {fmt.p_value(self.p)}, Holm p = {fmt.p_value(p_holm)} "
            f"({self._discordance()})"
        )
        rate_line = (
            f"weighted rate {fmt.rate(self.rate_a)} vs {fmt.rate(self.rate_b)}  "
            f"diff {fmt.points(self.rate_diff)} {_ci(self.rate_diff_lo, self.rate_diff_hi)}  "
            f"sign-flip p = {fmt.p_value(self.rate_p)}, Holm p = {fmt.p_value(rate_p_holm)}"
        )
        note = "Holm p adjusts for the two metrics compared; read a difference as real only there."
        return "\n".join([head, pass_line, rate_line, note, *filter(None, [self.power_note()])])

    def _repr_markdown_(self) -> str:
        p_holm, rate_p_holm = self.holm()
        return "\n".join(
            [
                f"**A** = `{self.model_a}` ({self.a}), **B** = `{self.model_b}` ({self.b}); "
                f"{self.coverage()}",
                "",
                "| metric | A | B | A − B | 95% CI | p | Holm p |",
                "|---|---|---|---|---|---|---|",
                f"| pass rate | {fmt.rate(self.pass_rate_a)} | {fmt.rate(self.pass_rate_b)} | "
                f"{fmt.points(self.diff)} | {_ci(self.diff_lo, self.diff_hi)} | "
                f"{fmt.p_value(self.p)} ({self.test}) | {fmt.p_value(p_holm)} |",
                f"| weighted rate | {fmt.rate(self.rate_a)} | {fmt.rate(self.rate_b)} | "
                f"{fmt.points(self.rate_diff)} | {_ci(self.rate_diff_lo, self.rate_diff_hi)} | "
                f"{fmt.p_value(self.rate_p)} (sign-flip) | {fmt.p_value(rate_p_holm)} |",
                "",
                f"{self._discordance().capitalize()}; tied on {self.tied}. Holm p adjusts for "
                "the two metrics compared." + (f" {note}" if (note := self.power_note()) else ""),
            ]
        )


def power_note(tasks: int, pooled: float, detectable: float | None) -> str:
    """The sentence a comparison on few shared tasks adds; ``""`` from SMALL_N tasks on.

    Example:
        >>> power_note(12, 0.5, 0.65).split(" are ")[0]
        'With 12 shared tasks only pass-rate differences of +65.0 pp or more'
        >>> power_note(30, 0.5, None)
        ''
    """
    if tasks >= SMALL_N:
        return ""
    basis = (
        f"(exact McNemar test at α = 0.05, around the pooled pass rate {fmt.rate(pooled)}, "
        "the runs' outcomes taken as independent)"
    )
    if detectable is None:
        return (
            f"With {tasks} shared tasks no pass-rate difference is detectable at 80% power {basis}."
        )
    return (
        f"With {tasks} shared tasks only pass-rate differences of {fmt.points(detectable)} "
        f"or more are detectable at 80% power {basis}."
    )


def _ci(lo: float | None, hi: float | None) -> str:
    return f"[{fmt.points(lo)}, {fmt.points(hi)}]"
