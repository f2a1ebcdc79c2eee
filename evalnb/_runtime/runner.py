"""Run cases against models: scheduling, concurrency, recording, resume, progress.

One run folder per model (and guidance version). All runs share one concurrency
limit, so ``--concurrency 8`` means at most 8 task attempts in flight in total.
Every attempt ends in a ``task_finished`` event: a provider that fails for good
(after its SDK's retries) or a sandbox that crashes gives a task recorded with its
``error`` and counted as failed, never a dropped task; when it errored before any tool
call ran its checks are recorded as not run, and scored 0 of their weight
(:func:`~evalnb._runtime.case.errored_before_work`). An interrupted run is
resumed with :func:`resume`, which re-runs only the attempts without a
``task_finished`` event.

Example:
    >>> import asyncio, tempfile
    >>> from evalnb._runtime.bash_case import BashCase
    >>> from evalnb.records import Task
    >>> case = BashCase(Task(id="t", category="c", prompt="p", solution="echo hi",
    ...                      expectations=[{"check": "stdout_contains:hi"}]))
    >>> [path] = asyncio.run(run_cases([case], ["reference"], tempfile.mkdtemp(), progress=False))
    >>> (path / "tasks.parquet").exists()
    True
"""

from __future__ import annotations

import asyncio
import contextlib
import re
import uuid
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from importlib.metadata import version
from pathlib import Path
from typing import Any

from tqdm.auto import tqdm

from evalnb._redact import redact_url
from evalnb._runtime.agent import DEFAULT_MAX_TURNS, UNREACHABLE, run_agent
from evalnb._runtime.case import Case, Scoring, errored_before_work
from evalnb._runtime.fail_fast import FAIL_FAST_AFTER, WINDOW_S, FailFast
from evalnb._runtime.providers.registry import resolve_provider
from evalnb._runtime.sandbox.local import bash_version
from evalnb._runtime.schedule import longest_first
from evalnb._runtime.shard import in_shard, parse_shard
from evalnb._runtime.workers import (
    check_picklable,
    deal,
    first_failure,
    run_processes,
    run_stoppable,
    shares,
)
from evalnb._store import RunStore, utc_now
from evalnb._version import __version__
from evalnb.errors import EvalnbError, InputError, StoreError
from evalnb.records import (
    AgentTrace,
    Connection,
    Filters,
    ReplayAgreement,
    RunMeta,
    RunSettings,
    TaskRecord,
    TaskScore,
)
from evalnb.records.interfaces import Provider
from evalnb.records.run import DEFAULT_TASK_TIMEOUT_S


@dataclass
class RunPlan:
    """One run: a provider over the cases, written to one store."""

    provider: Provider
    store: RunStore
    cases: list[Case]
    epochs: int
    max_turns: int
    task_timeout_s: float | None = None
    pending: list[tuple[Case, int]] = field(default_factory=list)


class RunStopped(EvalnbError):
    """The run stopped early: its provider looks down (:mod:`.fail_fast`); the message says
    how to resume."""


async def run_cases(
    cases: Sequence[Case],
    models: Sequence[str | Provider],
    out_dir: str | Path,
    *,
    concurrency: int = 8,
    epochs: int = 1,
    max_turns: int = DEFAULT_MAX_TURNS,
    dataset: str | Path | None = None,
    dataset_sha256: str | None = None,
    guidance: str | None = None,
    connection: Connection | None = None,
    task_timeout_s: float | None = DEFAULT_TASK_TIMEOUT_S,
    seed: int = 7,
    sim_sleep: bool = False,
    run_ids: Sequence[str] | None = None,
    filters: Filters | None = None,
    progress: bool = True,
    shard: tuple[int, int] | None = None,
    durations: Mapping[str, float] | None = None,
    workers: int = 1,
    judges: Sequence[str] = (),
) -> list[Path]:
    """Run every case against every model; return the run folders written.

    A model is a ``--model`` string (see
    :func:`~evalnb._runtime.providers.registry.resolve_provider`) or a provider
    object. ``run_ids`` names the run folders (default: ``<UTC time>-<model>``);
    ``filters`` (the ``--tag`` and ``--task`` values) are recorded for ``--resume``.
    ``shard`` ``(i, N)`` runs only shard i of N of the attempts (:mod:`.shard`).
    Attempts start longest first where durations are known (``durations``, task id ->
    ms from a previous run, or difficulty tags; :mod:`.schedule`).
    ``connection`` says how real providers are reached; ``task_timeout_s`` bounds each
    attempt's wall clock (provider retries included): an attempt past it is recorded as
    errored with its trace so far. Both are recorded in ``run.json`` (URL secrets redacted).
    ``workers`` > 1 deals the attempts over that many processes (:mod:`.workers`; the
    concurrency is split between them); the cases and models must then pickle.
    ``judges`` (the ``--judge`` values the cases were built with) are recorded for
    ``--resume``.

    Example:
        >>> import tempfile
        >>> from evalnb._resources import dataset_path
        >>> from evalnb._runtime.cases import load_cases
        >>> [path] = asyncio.run(run_cases(load_cases(dataset_path("smoke")), ["reference"],
        ...                                tempfile.mkdtemp(), run_ids=["ref"], progress=False))
        >>> path.name, (path / "run.json").exists()
        ('ref', True)
    """
    if not cases:
        raise ValueError("no cases to run")
    # every provider is built before any run folder is written: a bad --model writes nothing
    providers = [
        resolve_provider(m, connection=connection, seed=seed, sim_sleep=sim_sleep)
        if isinstance(m, str)
        else m
        for m in models
    ]
    attempts = _planned_attempts(cases, providers, epochs, shard, workers)
    sandbox, sandbox_version = _sandboxes(cases)
    limits = {c.max_turns or max_turns for c in cases}  # the limit each case runs with
    common_limit = next(iter(limits)) if len(limits) == 1 else None
    plans = []
    # one writer per run folder: its lock taken as it is created, held until the run ends
    with contextlib.ExitStack() as held:
        for i, provider in enumerate(providers):
            given = models[i]
            spec = given if isinstance(given, str) else f"{provider.provider}/{provider.model}"
            run_id = run_ids[i] if run_ids else _new_run_id(out_dir, spec, guidance)
            meta = RunMeta(
                run_id=run_id,
                provider=provider.provider,
                model=provider.model,
                dataset=str(dataset) if dataset else None,
                dataset_sha256=dataset_sha256,
                max_turns=common_limit,
                epochs=epochs,
                sandbox=sandbox,
                sandbox_version=sandbox_version,
                evalnb_version=__version__,
                guidance=guidance,
                simulated=provider.simulated,
                recorded_from=provider.recording.source if provider.recording else None,
                started_at=utc_now(),
                task_count=len(attempts),
                settings=RunSettings(
                    spec=spec,
                    concurrency=concurrency,
                    seed=seed,
                    connection=_stored(connection or Connection()),
                    task_timeout_s=task_timeout_s,
                    max_turns=max_turns,
                    filters=filters or Filters(),
                    provider=provider.settings(),
                    shard=f"{shard[0]}/{shard[1]}" if shard else None,
                    judges=list(judges),
                ),
            )
            store = RunStore.create(out_dir, meta)
            held.enter_context(store.lock)
            held.enter_context(contextlib.closing(store))  # its events file, however it ends
            plan = RunPlan(provider, store, list(cases), epochs, max_turns, task_timeout_s)
            plan.pending = list(attempts)
            plans.append(plan)
        await _execute(plans, concurrency, progress, durations, workers)
    return [p.store.path for p in plans]


async def resume(
    run_dir: str | Path,
    cases: Sequence[Case],
    *,
    concurrency: int | None = None,
    connection: Connection | None = None,
    retry_errored: bool = False,
    progress: bool = True,
    workers: int = 1,
    durations: Mapping[str, float] | None = None,
) -> Path:
    """Finish an interrupted run: run only the attempts with no ``task_finished`` event.

    The provider is rebuilt from the spec recorded in ``run.json``, reached through
    ``connection`` when given (a stored base URL has its secrets redacted: give it again),
    else the recorded one; ``concurrency`` overrides the recorded one too. With
    ``retry_errored``, attempts that ended in an error (provider or infrastructure, never
    a failed check) run again; the new record replaces the old one. ``workers`` and
    ``durations`` (the start order) as for :func:`run_cases`.

    Example:
        >>> import tempfile
        >>> from evalnb._resources import dataset_path
        >>> from evalnb._runtime.cases import load_cases
        >>> cases = load_cases(dataset_path("smoke"))
        >>> [path] = asyncio.run(run_cases(cases, ["reference"], tempfile.mkdtemp(),
        ...                                progress=False))
        >>> asyncio.run(resume(path, cases, progress=False)) == path  # nothing left to run
        True
    """
    store = RunStore.open(run_dir)
    # the lock held elsewhere: "already running (pid N)", the folder untouched
    with store.lock, contextlib.closing(store):
        store.repair_torn_tail()
        meta = store.meta
        settings = meta.settings
        if settings.spec is None:
            raise InputError(
                run_dir, None, "settings.spec", "run.json does not say which model ran"
            )
        if connection is not None:
            settings.connection = _stored(connection)
        if concurrency is not None:
            settings.concurrency = concurrency
        provider = resolve_provider(
            settings.spec,
            connection=connection or settings.connection,
            seed=settings.seed or 7,
            origin=(run_dir, "settings.spec"),
        )
        shard = parse_shard(settings.shard) if settings.shard else None
        attempts = _planned_attempts(cases, [provider], meta.epochs, shard, workers)
        done = store.finished_keys()
        if retry_errored:
            done -= {(r.task.id, r.epoch) for r in store.records() if r.error is not None}
        max_turns = settings.max_turns or meta.max_turns or DEFAULT_MAX_TURNS
        plan = RunPlan(
            provider, store, list(cases), meta.epochs, max_turns, settings.task_timeout_s
        )
        plan.pending = [(c, e) for c, e in attempts if (c.task.id, e) not in done]
        store.meta.status = "running"
        store.write_meta()
        await _execute([plan], settings.concurrency or 8, progress, durations, workers)
        return store.path


def _planned_attempts(
    cases: Sequence[Case],
    providers: Sequence[Provider],
    epochs: int,
    shard: tuple[int, int] | None,
    workers: int,
) -> list[tuple[Case, int]]:
    """The ``(case, epoch)`` attempts of a run (of its shard); with ``workers`` > 1 the
    cases and providers are first checked to pickle (ValueError, before anything is
    written), for :func:`run_cases` and :func:`resume` alike."""
    if workers > 1:
        check_picklable("the cases", list(cases))
        for provider in providers:
            check_picklable(f"the model {provider.model!r}", provider)
    return in_shard([(c, e) for c in cases for e in range(1, epochs + 1)], shard)


async def _execute(
    plans: list[RunPlan],
    concurrency: int,
    progress: bool,
    durations: Mapping[str, float] | None = None,
    workers: int = 1,
) -> None:
    """Run every pending attempt of every plan under one shared limit, longest first,
    in this process or dealt over ``workers`` processes (:mod:`.workers`)."""
    bars = [
        tqdm(
            total=p.store.meta.task_count or 0,
            initial=(p.store.meta.task_count or 0) - len(p.pending),
            desc=_label(p),
            position=i,
            leave=True,
            disable=not progress or None,
        )
        for i, p in enumerate(plans)
    ]
    finished: dict[int, list[TaskRecord]] = {id(plan): [] for plan in plans}
    bar_of = {id(plan): bar for plan, bar in zip(plans, bars, strict=True)}

    def done(plan: RunPlan, record: TaskRecord) -> None:
        finished[id(plan)].append(record)
        bar_of[id(plan)].update(1)

    order = longest_first(
        [(plan, case, epoch) for plan in plans for case, epoch in plan.pending],
        key=lambda job: job[1].task,
        durations=durations,
    )
    workers = min(workers, concurrency, len(order))
    try:
        if workers > 1:
            index = {id(plan): i for i, plan in enumerate(plans)}
            places = [(str(p.store.path), p.provider, p.max_turns, p.task_timeout_s) for p in plans]
            own, *others = deal(
                [(index[id(plan)], case, epoch) for plan, case, epoch in order], workers
            )
            mine, *theirs = shares(concurrency, workers)
            # this process is the first worker; the others are child processes
            await first_failure(
                _attempts([(plans[i], c, e) for i, c, e in own], mine, done),
                run_processes(
                    _work,
                    [(places, s, c) for s, c in zip(others, theirs, strict=True)],
                    lambda message: bars[message[1]].update(1),
                ),
            )
        else:
            await _attempts(order, concurrency, done)
    except BaseException as exc:
        for plan in plans:
            plan.store.meta.status = "partial"
            with contextlib.suppress(StoreError):  # a full disk may refuse this too
                plan.store.write_meta()
        if isinstance(exc, RunStopped):
            hints = "; ".join(f"evalnb run --resume {p.store.path} --retry-errored" for p in plans)
            raise RunStopped(
                f"{exc}; the run stopped (partial): resume with `{hints}` (--retry-errored runs "
                "the attempts that could not reach it again)"
            ) from None
        raise
    finally:
        for bar in bars:
            bar.close()
    for plan in plans:
        # records held in memory stand for the whole run unless it resumed earlier
        # attempts or worker processes ran them
        whole = workers <= 1 and len(plan.pending) == plan.store.meta.task_count
        records = finished[id(plan)] if whole else None
        if plan.provider.recording is not None:
            plan.store.meta.settings.replay_agreement = _agreement(
                records if records is not None else plan.store.records()
            )
        # building and writing the tables is CPU and disk work: keep it off the event loop
        await asyncio.to_thread(plan.store.finalize, "complete", None, records)


async def _attempts(
    order: list[tuple[RunPlan, Case, int]],
    concurrency: int,
    on_finished: Callable[[RunPlan, TaskRecord], None],
) -> None:
    """Run the attempts in ``order``, at most ``concurrency`` at once; on any failure (a
    stopped run: :mod:`.fail_fast`; an interrupt) cancel those in flight (``--resume``
    runs them again)."""
    limit = asyncio.Semaphore(max(1, concurrency))
    watches = {id(plan): FailFast() for plan, _, _ in order}
    left = Counter(id(plan) for plan, _, _ in order)  # each run's attempts not finished

    async def one(plan: RunPlan, case: Case, epoch: int) -> None:
        async with limit:
            record = await run_attempt(
                plan.provider, plan.store, case, epoch, plan.max_turns, plan.task_timeout_s
            )
        on_finished(plan, record)
        left[id(plan)] -= 1
        reached = not (record.error or "").startswith(UNREACHABLE)
        down = watches[id(plan)].down(reached=reached)
        if down and left[id(plan)]:  # a run's last attempt lets it finalize
            raise RunStopped(
                f"{plan.store.meta.model}: the provider could not be reached "
                f"{FAIL_FAST_AFTER} times in a row, nor once in the last {WINDOW_S:g}s or "
                f"since the run began ({record.error})"
            )

    jobs = [asyncio.ensure_future(one(*job)) for job in order]
    try:
        await asyncio.gather(*jobs)
    except BaseException:
        for job in jobs:
            job.cancel()
        await asyncio.gather(*jobs, return_exceptions=True)
        raise


def _work(payload: Any, send: Callable[[Any], None]) -> None:
    """A worker process's share of a run: ``payload`` is the plans' ``(run folder,
    provider, turn limit, task timeout)``, this worker's ``(plan index, case, epoch)``
    attempts in start order, and its concurrency. Sends ``("done", plan index)`` per
    finished attempt; never writes ``run.json`` or the tables (the parent does)."""
    places, jobs, concurrency = payload
    plans = [
        RunPlan(provider, RunStore.open(path), [], 1, max_turns, timeout)
        for path, provider, max_turns, timeout in places
    ]
    position = {id(plan): i for i, plan in enumerate(plans)}
    order = [(plans[i], case, epoch) for i, case, epoch in jobs]
    run_stoppable(_attempts(order, concurrency, lambda plan, _: send(("done", position[id(plan)]))))


async def run_attempt(
    provider: Provider,
    store: RunStore,
    case: Case,
    epoch: int,
    max_turns: int,
    task_timeout_s: float | None = None,
) -> TaskRecord:
    """Run and score one attempt, streaming its events; never raises for task failures.

    Example:
        >>> import tempfile
        >>> from evalnb._runtime.bash_case import BashCase
        >>> from evalnb._runtime.providers.offline import ReferenceProvider
        >>> from evalnb.records import Task
        >>> store = RunStore.create(tempfile.mkdtemp(), RunMeta(run_id="r", provider="p",
        ...                                                     model="m"))
        >>> case = BashCase(Task(id="t", category="c", prompt="p"))  # no solution to run
        >>> asyncio.run(run_attempt(ReferenceProvider(), store, case, 1, 10)).error
        "provider error on turn 1: task 't' has no 'solution' to run"
    """
    task = case.task
    attempt = uuid.uuid4().hex[:12]
    key = {"task_id": task.id, "epoch": epoch, "attempt": attempt}
    store.append({"event": "task_started", **key, "ts": utc_now()})

    def on_event(kind: str, payload: dict[str, Any]) -> None:
        store.append({"event": kind, **key, **payload})

    trace, error, sandbox = AgentTrace(), None, None
    try:
        sandbox = await case.sandbox()
        outcome = await run_agent(
            task,
            provider,
            sandbox,
            max_turns=case.max_turns or max_turns,
            epoch=epoch,
            system=case.system,
            on_event=on_event,
            timeout_s=task_timeout_s,
        )
        trace, error = outcome.trace, outcome.error
        if provider.recording is not None:
            provider.recording.apply_recording(trace, task.id, epoch)
        if errored_before_work(trace, error):
            assert error is not None
            scored = case.not_run(error)
        else:
            scored = await case.score(trace, sandbox, task_timeout_s)
            error = error or scored.error
    except StoreError:  # the run folder cannot be written: the run stops
        raise
    except Exception as exc:  # a crash in a sandbox, scorer or provider bug: record it
        error = error or f"{type(exc).__name__}: {exc}"
        if errored_before_work(trace, error):  # e.g. the scenario's setup failed
            scored = case.not_run(error)
        else:
            scored = Scoring(TaskScore(task_id=task.id))
            if sandbox is not None:
                with contextlib.suppress(Exception):  # scoring failed too: keep the empty score
                    scored = await case.score(trace, sandbox, task_timeout_s)
    finally:
        if sandbox is not None:
            sandbox.close()
    record = TaskRecord(
        task=task,
        epoch=epoch,
        trace=trace,
        score=scored.score,
        error=error,
        scenario=scored.scenario,
        replay=(
            provider.recording.agreement(task.id, epoch, scored.score)
            if provider.recording is not None
            else None
        ),
        extra=scored.extra,
    )
    store.append({"event": "task_finished", **key, "ts": utc_now(), "record": record.model_dump()})
    return record


def _stored(connection: Connection) -> Connection:
    """``connection`` as ``run.json`` keeps it: secrets in the base URLs redacted."""
    return connection.model_copy(
        update={
            "base_url": redact_url(connection.base_url),
            "anthropic_base_url": redact_url(connection.anthropic_base_url),
        }
    )


def _agreement(records: list[TaskRecord]) -> ReplayAgreement:
    """Sum the per-task replay agreement counts into the run's figure."""
    counts = [r.replay for r in records if r.replay is not None]
    return ReplayAgreement(
        checks_agree=sum(c.checks_agree for c in counts),
        checks_compared=sum(c.checks_compared for c in counts),
    )


def _label(plan: RunPlan) -> str:
    meta = plan.store.meta
    label = meta.model + (" (simulated)" if meta.simulated else "")
    return f"{label} [{meta.guidance}]" if meta.guidance else label


def _sandboxes(cases: Sequence[Case]) -> tuple[str, str]:
    """The sandbox kinds the cases use and their versions, e.g. ``("bashkit", "0.20.1")``."""
    names = sorted({c.sandbox_kind for c in cases})
    versions = [bash_version() if n == "local" else version("bashkit") for n in names]
    return "+".join(names), "; ".join(versions)


def _new_run_id(out_dir: str | Path, spec: str, guidance: str | None) -> str:
    stamp = datetime.now(UTC).strftime("%Y%m%d-%H%M%S")
    kind, _, source = spec.partition(":")
    name = f"{kind}-{Path(source).stem}" if source else spec
    slug = re.sub(r"[^A-Za-z0-9._-]+", "-", name).strip("-")
    base = f"{stamp}-{slug}" + (f"-{guidance}" if guidance else "")
    run_id, n = base, 2
    while (Path(out_dir) / run_id).exists():
        run_id, n = f"{base}-{n}", n + 1
    return run_id
