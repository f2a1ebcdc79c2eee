"""Scenarios as runner cases: workspace, setup, system prompt, and spec-002 scoring.

A :class:`ScenarioCase` is what :func:`evalnb._runtime.runner.run_cases` runs for one scenario
(and one guidance version):

- ``task``: ``Task(id=name, category, description, prompt=task, tags)``.
- ``sandbox()``: a fresh workspace. Builtin mode: a bashkit sandbox whose working
  directory is :data:`WORKDIR`, with the tool registered as a builtin and the
  scenario's env. Local mode: a :class:`~evalnb._runtime.sandbox.local.LocalSandbox` (real bash
  in a temporary folder, ``target.path`` first on ``PATH``). Written into it, later
  entries winning: the fixture folder, ``files``, then the guidance as ``AGENTS.md``
  (placement ``workspace`` or ``both``). Then the health check, then the setup
  commands, each in the workspace; a non-zero exit raises :class:`SetupError`, which
  the runner records as the task's error.
- ``system``: the sandbox's system prompt (bashkit's own in builtin mode,
  :data:`LOCAL_SYSTEM_PROMPT` in local mode), followed by the guidance text when its
  placement is ``system_prompt`` or ``both``.
- ``score()``: the gates, the judge (when enabled), the outcome, the interaction
  score and the composite. The ``checks`` rows are the gates' (weight 1 each) and the
  judge's verdict (weight 0); the record's :class:`~evalnb.records.ScenarioResult`
  holds the outcome, gate counts, judge score and composite, and every judge's rating
  (``judges``: the judge's, then each extra judge's, which rate the attempt beside it
  and decide nothing); the extra task fields
  are ``guidance_file``, ``command_pattern``, ``short_help_tool`` (the tool's name when
  ``target.short_help`` says its ``-h`` means help, else null) and ``tier``.

The layers stay apart (spec 002 "report layers independently"): a scenario task's
spec-000 ``score``/``max_score`` are its gates passed / gates total, never mixed with
the judge, whose weighted score is the ``judge_score`` column; a task ``passed`` when
its ``outcome`` is pass.

Example:
    >>> import asyncio, pathlib, tempfile
    >>> folder = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (folder / "s.yaml").write_text(
    ...     "name: hello\\ntarget: {binary: wc, mode: local}\\ntask: Count the words.\\n"
    ...     "files: {in.txt: 'a b c'}\\ngates:\\n- {type: command_succeeds, command: wc in.txt}\\n")
    >>> [case] = load_scenario_cases(folder / "s.yaml")
    >>> box = asyncio.run(case.sandbox())
    >>> scored = asyncio.run(case.score(AgentTrace(), box))
    >>> box.close()
    >>> scored.scenario.outcome, scored.scenario.gates_passed, scored.score.results[0].check
    ('pass', 1, '`wc in.txt` exits 0')
"""

from __future__ import annotations

import asyncio
import shlex
from collections.abc import Mapping, Sequence
from pathlib import Path

from evalnb._formats.scenario import load_callable, load_scenario
from evalnb._resources import data_path
from evalnb._runtime.agent import default_system_prompt
from evalnb._runtime.case import Scoring
from evalnb._runtime.sandbox.bashkit import BashkitSandbox
from evalnb._runtime.sandbox.local import LocalSandbox
from evalnb._scoring.deadline import Deadline, ScoringTimeout
from evalnb._scoring.gates import GateResult, gate_rows, run_gates
from evalnb._scoring.judge import (
    JUDGE_ENV,
    Judgement,
    judge_spec,
    refuse_self_judging,
    run_judge,
)
from evalnb._scoring.outcome import composite_score, decide_outcome, interaction_score
from evalnb.errors import FallbackWarning, InputError, SetupError, warn
from evalnb.records import AgentTrace, Connection, ScenarioResult, Task, TaskScore
from evalnb.records.interfaces import Provider, Sandbox
from evalnb.records.scenario import Scenario
from evalnb.records.score import NOT_RUN, not_run, not_run_detail

WORKDIR = "/home/eval/work"
"""The workspace (and working directory) inside bashkit."""
LOCAL_SYSTEM_PROMPT = (
    "bash: run commands with real bash on a Linux machine, in a fresh working directory "
    "(also $HOME). Returns stdout, stderr and the exit code. Each call starts a new bash "
    "in that directory: `cd`, variables and functions do not carry over between calls; "
    "files do. Commands run non-interactively with stdin closed."
)
"""The system prompt for local mode (bashkit's own describes its virtual machine)."""


class ScenarioCase:
    """One scenario with one guidance version, as a runner case (see the module docstring).

    ``guidance`` is ``(name, file)`` to replace the scenario's own guidance file;
    ``judge`` is the judge provider, required when the scenario enables the judge; its
    verdict decides the outcome. ``extra_judges`` rate every attempt beside it with the
    same rubric (their ratings are recorded; they never change the outcome).
    """

    def __init__(
        self,
        scenario: Scenario,
        *,
        guidance: tuple[str, Path] | None = None,
        judge: Provider | None = None,
        extra_judges: Sequence[Provider] = (),
    ) -> None:
        if scenario.evaluation.judge_enabled and judge is None:
            raise ValueError(f"scenario {scenario.name!r} enables the judge but has no judge")
        self.scenario = scenario
        self.judge = judge if scenario.evaluation.judge_enabled else None
        self.extra_judges = list(extra_judges) if self.judge else []
        self.command_pattern = scenario.target.pattern
        self.local = scenario.target.mode == "local"
        self.sandbox_kind = "local" if self.local else "bashkit"
        placement = scenario.guidance.placement if scenario.guidance else "workspace"
        own = scenario.guidance.file if scenario.guidance else None
        self.guidance: str | None = guidance[0] if guidance else None
        self.guidance_file: Path | None = guidance[1] if guidance else own
        text = _read_guidance(self.guidance_file) if self.guidance_file else None
        self.files = _workspace_files(
            scenario, text if placement != "system_prompt" else None, text_only=not self.local
        )
        base = LOCAL_SYSTEM_PROMPT if self.local else default_system_prompt()
        if text is not None and placement != "workspace":
            base += f"\n\n# Guidance for `{scenario.target.binary}`\n\n{text.strip()}\n"
        self.system: str | None = base
        self.max_turns: int | None = scenario.run.max_turns
        self.task = Task(
            id=scenario.name,
            category=scenario.category,
            description=scenario.description,
            system=self.system,
            prompt=scenario.task,
            tags=scenario.tags,
        )

    async def sandbox(self) -> Sandbox:
        """A fresh, prepared workspace; raises :class:`SetupError` if preparing it fails."""
        target, timeout = self.scenario.target, self.scenario.run.timeout
        box: Sandbox
        if self.local:
            box = LocalSandbox(
                self.files,
                path_dirs=[target.path] if target.path else [],
                env=target.env,
                timeout_s=timeout,
                record=target.binary,
            )
        else:
            box = BashkitSandbox(
                # text only: builtin-mode fixture files were decoded when loaded
                files={f"{WORKDIR}/{rel}": str(data) for rel, data in self.files.items()},
                timeout_s=timeout,
                builtins={target.binary: load_callable(target.builtin)} if target.builtin else {},
                env=target.env,
                cwd=WORKDIR,
                record=target.binary,
            )
        try:
            await self._prepare(box)
        except BaseException:
            box.close()
            raise
        return box

    async def score(
        self, trace: AgentTrace, sandbox: Sandbox, timeout_s: float | None = None
    ) -> Scoring:
        """Gates, judge, outcome, interaction score and composite of a finished attempt;
        the gates and the interaction score within ``timeout_s``
        (:mod:`evalnb._scoring.deadline`), the judge outside it."""
        deadline = Deadline(timeout_s)
        results = await run_gates(
            self.scenario.gates,
            sandbox,
            trace,
            workdir=sandbox.workdir,
            command_pattern=self.command_pattern,
            deadline=deadline,
        )
        inter: float | None = None
        if self.scenario.evaluation.composite is not None:
            try:
                deadline.start_check()
                inter = interaction_score(trace, self.command_pattern)
            except ScoringTimeout as exc:
                deadline.stop(exc)
        scoring = self._scoring(results, await self._judge(trace), inter)
        scoring.error = deadline.error()
        return scoring

    def not_run(self, reason: str) -> Scoring:
        """Every gate and the judge's verdict recorded as not run, no judge asked (no
        ratings): outcome fail, 0 gates passed of all, no judge score (the composite, when
        configured, as for failed gates, no judge score and no command).

        Example:
            >>> import pathlib, tempfile
            >>> path = pathlib.Path(tempfile.mkdtemp()) / "s.yaml"
            >>> _ = path.write_text("name: s\\ntarget: {binary: wc, mode: local}\\n"
            ...     "task: Count.\\ngates:\\n- {type: command_succeeds, command: wc x}\\n")
            >>> [case] = load_scenario_cases(path)
            >>> scored = case.not_run("setup failed")
            >>> scored.score.results[0].passed, scored.score.max_score, scored.scenario.outcome
            (None, 1.0, 'fail')
        """
        gates = self.scenario.gates
        failed = [GateResult(gate_type=g.type, passed=False, message="") for g in gates]
        config = self.scenario.evaluation.judge
        judgements = []
        if self.judge is not None and config is not None:
            assert config.loaded_rubric is not None and config.pass_threshold is not None
            unasked = Judgement(config.loaded_rubric, config.pass_threshold, error=NOT_RUN)
            judgements = [unasked for _ in self._judges()]
        inter = 0.0 if self.scenario.evaluation.composite is not None else None
        scoring = self._scoring(failed, judgements, inter)
        scoring.score = not_run(self.task.id, scoring.score.results, reason)
        assert scoring.scenario is not None
        scoring.scenario = scoring.scenario.model_copy(
            update={"outcome_reason": not_run_detail(reason), "judges": []}
        )
        return scoring

    def _scoring(
        self, results: list[GateResult], judgements: list[Judgement], inter: float | None
    ) -> Scoring:
        """The checks rows, spec 002's evaluation and the extra columns of an attempt
        (``judgements`` in :meth:`_judges` order, the first one the verdict; ``inter`` its
        interaction score, when a composite is configured)."""
        scenario = self.scenario
        gates = scenario.gates
        judgement = judgements[0] if judgements else None
        outcome = decide_outcome(results, judgement)
        judge_score = judgement.score if judgement else None
        weights = scenario.evaluation.composite
        composite = None
        if weights is not None and inter is not None:
            composite = composite_score(weights, results, judge_score, inter)
        rows = gate_rows(gates, results) + (judgement.rows() if judgement else [])
        gates_passed = sum(r.passed for r in results)
        score = TaskScore(
            task_id=self.task.id, results=rows, score=gates_passed, max_score=len(results)
        )
        result = ScenarioResult(
            outcome=outcome.label,
            outcome_reason=outcome.reason,
            gates_passed=gates_passed,
            gates_total=len(results),
            judge_score=judge_score,
            judge_model=judge_name(self.judge) if self.judge else None,
            composite_score=composite,
            interaction_score=inter,
            judges=[
                j.rating(judge_name(p)) for p, j in zip(self._judges(), judgements, strict=True)
            ],
        )
        extra = {
            "guidance_file": str(self.guidance_file) if self.guidance_file else None,
            "command_pattern": self.command_pattern,
            "short_help_tool": scenario.target.binary if scenario.target.short_help else None,
            "tier": scenario.tier,
        }
        return Scoring(score, result, extra)

    def _judges(self) -> list[Provider]:
        """The judge, then the extra judges (none when the judge is disabled)."""
        return [self.judge, *self.extra_judges] if self.judge else []

    async def _judge(self, trace: AgentTrace) -> list[Judgement]:
        """Every judge's verdict on the attempt, in :meth:`_judges` order, asked at once."""
        config = self.scenario.evaluation.judge
        if not self._judges() or config is None:
            return []
        assert config.loaded_rubric is not None and config.pass_threshold is not None
        return list(
            await asyncio.gather(
                *(
                    run_judge(p, config.loaded_rubric, self.task, trace, config.pass_threshold)
                    for p in self._judges()
                )
            )
        )

    async def _prepare(self, box: Sandbox) -> None:
        workdir = shlex.quote(box.workdir)
        steps = [("workspace creation", f"mkdir -p {workdir}")]
        if self.scenario.target.health_check:
            steps.append(("health check", self.scenario.target.health_check))
        steps += [("setup command", c) for c in self.scenario.setup.commands]
        for what, command in steps:
            result = await box.exec(f"mkdir -p {workdir} && cd {workdir} || exit 1\n{command}")
            if result.exit_code != 0:
                output = " ".join((result.stderr or result.stdout).split())[:300]
                raise SetupError(
                    f"scenario {self.scenario.name!r}: {what} `{command}` exited "
                    f"{result.exit_code}: {output or '(no output)'}"
                )


def load_scenario_cases(
    path: str | Path,
    guidance: Mapping[str, Path] | None = None,
    judge: str | None = None,
    *,
    extra_judges: Sequence[str] = (),
    models: Sequence[str] = (),
    connection: Connection | None = None,
) -> list[ScenarioCase]:
    """Load a scenario YAML, or every ``*.yaml``/``*.yml`` in a folder, as runner cases:
    :func:`scenario_cases` of :func:`load_scenarios`.

    Bad input raises :class:`~evalnb.errors.InputError`.
    """
    return scenario_cases(
        load_scenarios(path),
        guidance,
        judge,
        extra_judges=extra_judges,
        models=models,
        connection=connection,
    )


def load_scenarios(path: str | Path) -> list[tuple[Path, Scenario]]:
    """Each scenario of a YAML file, or of every ``*.yaml``/``*.yml`` in a folder, with its
    file; two scenarios of one name are an InputError.

    Example:
        >>> from evalnb._resources import dataset_path
        >>> [s.name for _, s in load_scenarios(dataset_path("notes"))][:2]
        ['notes_capture', 'notes_cleanup']
    """
    root = Path(path)
    files = sorted([*root.glob("*.yaml"), *root.glob("*.yml")]) if root.is_dir() else [root]
    if root.is_dir() and not files:
        raise InputError(root, None, None, "no *.yaml scenarios in this folder")
    seen: dict[str, Path] = {}
    loaded = []
    for file in files:
        scenario = load_scenario(file)
        if scenario.name in seen:
            raise InputError(
                file,
                None,
                "name",
                f"duplicate scenario name {scenario.name!r} (also {seen[scenario.name]})",
            )
        seen[scenario.name] = file
        loaded.append((file, scenario))
    return loaded


def scenario_cases(
    scenarios: Sequence[tuple[Path, Scenario]],
    guidance: Mapping[str, Path] | None = None,
    judge: str | None = None,
    *,
    extra_judges: Sequence[str] = (),
    models: Sequence[str] = (),
    connection: Connection | None = None,
) -> list[ScenarioCase]:
    """The runner cases of ``scenarios`` (``(file, scenario)`` pairs).

    With ``guidance`` (``{name: file}``, from ``--guidance NAME=FILE``) each scenario
    gives one case per version, ordered version by version; ``case.guidance`` is the
    name (None without ``guidance``: each scenario then uses its own guidance file).
    ``judge`` (``--judge``) is resolved per scenario with :func:`judge_spec` and
    :func:`evalnb._runtime.runner.resolve_provider`, once per model spec (so only the
    judges of these scenarios need their keys); a judge that is one of ``models`` (the
    models under test) is an InputError on the scenario file's ``--judge``; ``connection``
    is how it is reached (as for the models under test). A scenario that enables the
    judge without any judge model (none from ``--judge``, the scenario or
    ``EVALNB_JUDGE``) is an InputError, except a scenario evalnb ships (in its data
    folder), which then runs without its judge, with a warning: the bundled suites run
    offline (its outcome is then its gates').
    ``extra_judges`` (the second and later ``--judge``) rate the attempts of every
    scenario that has a judge, beside it (:class:`ScenarioCase`); each is resolved like
    the judge (once, only when a selected scenario is judged, refused when it is a model
    under test), and a judge given twice for one scenario is an InputError.
    """
    from evalnb._runtime.providers.registry import resolve_provider

    versions: list[tuple[str, Path] | None] = [None]
    if guidance:
        for name, file in guidance.items():
            if not Path(file).is_file():
                raise InputError(file, None, None, f"guidance {name!r}: file not found")
        versions = [(name, Path(file).resolve()) for name, file in guidance.items()]
    judges: dict[str, Provider] = {}
    loaded: list[tuple[Scenario, Provider | None, list[Provider]]] = []
    for file, scenario in scenarios:
        provider, extra = None, []
        if scenario.evaluation.judge_enabled:
            config = scenario.evaluation.judge
            spec = judge_spec(judge, config.model if config else None)
            if spec is None and _bundled(file):
                scenario = _without_judge(scenario)
                warn(
                    f"{file}: no judge model (--judge or {JUDGE_ENV}): scenario "
                    f"{scenario.name!r} runs without its judge; its outcome is its gates'",
                    FallbackWarning,
                )
            elif spec is None:
                raise InputError(
                    file,
                    None,
                    "evaluation.judge",
                    "the judge is enabled but no judge model is set: "
                    f"pass --judge, set evaluation.judge.model or {JUDGE_ENV}",
                )
            else:
                specs = [spec, *extra_judges]
                twice = next((s for s in specs if specs.count(s) > 1), None)
                if twice is not None:
                    raise InputError(file, None, "--judge", f"the judge {twice} is given twice")
                for each in specs:
                    refuse_self_judging(each, models, file)
                    if each not in judges:
                        judges[each] = resolve_provider(
                            each, connection=connection, origin=(file, "--judge")
                        )
                provider, *extra = (judges[each] for each in specs)
        loaded.append((scenario, provider, extra))
    return [
        ScenarioCase(scenario, guidance=version, judge=provider, extra_judges=extra)
        for version in versions
        for scenario, provider, extra in loaded
    ]


def judge_name(judge: Provider) -> str:
    """The name a judge's verdicts are recorded under (``judge_model``): ``provider/model``
    as ``--judge`` names it.

    Example:
        >>> from evalnb._runtime.providers.sim import SimProvider
        >>> judge_name(SimProvider("careful"))
        'sim/careful'
    """
    prefix = f"{judge.provider}/"
    return judge.model if judge.model.startswith(prefix) else prefix + judge.model


def _bundled(file: Path) -> bool:
    """Whether a scenario file is one evalnb ships (under its package data folder)."""
    return file.resolve().is_relative_to(data_path().resolve())


def _without_judge(scenario: Scenario) -> Scenario:
    """``scenario`` with its judge disabled."""
    evaluation = scenario.evaluation
    assert evaluation.judge is not None
    judge = evaluation.judge.model_copy(update={"enabled": False})
    return scenario.model_copy(
        update={"evaluation": evaluation.model_copy(update={"judge": judge})}
    )


def _read_guidance(file: Path) -> str:
    try:
        return file.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(file, None, None, f"cannot read guidance: {exc}") from None


def _workspace_files(
    scenario: Scenario, agents_md: str | None, *, text_only: bool
) -> dict[str, str | bytes]:
    """Fixture files, then ``files``, then ``AGENTS.md`` (later entries win).

    ``text_only`` (bashkit takes text files only) decodes fixture files as UTF-8.
    """
    out: dict[str, str | bytes] = {}
    if scenario.fixture is not None:
        for item in sorted(scenario.fixture.rglob("*")):
            if not item.is_file():
                continue
            raw = item.read_bytes()
            data: str | bytes = raw
            if text_only:
                try:
                    data = raw.decode("utf-8")
                except UnicodeDecodeError:
                    raise InputError(
                        item, None, None, "not UTF-8 text: builtin mode takes text files only"
                    ) from None
            out[item.relative_to(scenario.fixture).as_posix()] = data
    out.update(scenario.files)
    if agents_md is not None:
        out["AGENTS.md"] = agents_md
    return out
