"""``run.json``: what one run was (one model over one dataset).

Example:
    >>> RunMeta(run_id="r", provider="p", model="m").status
    'running'
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

from pydantic import ConfigDict, Field, field_validator

from evalnb.records.base import Record
from evalnb.records.score import ReplayAgreement


class Filters(Record):
    """The ``--tag`` and ``--task`` selections a run was made with (``--resume`` reuses them)."""

    model_config = ConfigDict(extra="forbid")

    tags: list[str] = Field(default_factory=list)
    task_ids: list[str] = Field(default_factory=list)

    def keeps(self, task_id: str, category: str, tags: Sequence[str]) -> bool:
        """Whether a task is selected: its category or a tag of it among ``tags``, and its
        id among ``task_ids`` (an empty list selects every task).

        Example:
            >>> Filters(tags=["json"]).keeps("t1", "json_processing", ["json", "easy"])
            True
            >>> Filters(task_ids=["t2"]).keeps("t1", "c", [])
            False
        """
        by_tag = not self.tags or category in self.tags or bool(set(tags) & set(self.tags))
        return by_tag and (not self.task_ids or task_id in self.task_ids)


DEFAULT_REQUEST_TIMEOUT_S = 60.0
DEFAULT_MAX_RETRIES = 2
DEFAULT_TASK_TIMEOUT_S = 900.0


class Connection(Record):
    """How real providers are reached (``evalnb run`` flags; never a key itself).

    ``base_url``: the OpenAI-compatible server (``--base-url`` or ``OPENAI_BASE_URL``);
    ``anthropic_base_url``: the Anthropic-compatible one (``--anthropic-base-url`` or
    ``ANTHROPIC_BASE_URL``); ``api_key_env``: the environment variable whose key is sent to
    such a non-default host (without it, none is); ``request_timeout_s``: seconds one HTTP
    request may take (the SDK's timeout; a provider call with all its retries is cut at
    ``request_timeout_s * (max_retries + 1)``); ``max_retries``: the SDK's retries. Stored
    in ``run.json`` with secrets in the URLs redacted.

    Example:
        >>> Connection().request_timeout_s, Connection().max_retries
        (60.0, 2)
    """

    model_config = ConfigDict(extra="forbid")

    base_url: str | None = None
    anthropic_base_url: str | None = None
    api_key_env: str | None = None
    request_timeout_s: float = Field(DEFAULT_REQUEST_TIMEOUT_S, gt=0, allow_inf_nan=False)
    max_retries: int = Field(DEFAULT_MAX_RETRIES, ge=0)


class RunSettings(Record):
    """How a run was made (evalnb runs) or where it came from (imported runs).

    For an evalnb run: ``spec`` (the ``--model`` value, from which ``--resume``
    rebuilds the provider), ``concurrency``, ``seed``, ``connection`` (base URLs, the key's
    variable, request timeout and retries), ``task_timeout_s`` (wall clock of one attempt,
    retries included), ``filters``,
    ``provider`` (the provider's own non-secret settings), ``max_turns`` (the run's
    ``--max-turns``: the limit of every case that sets none of its own) and, for a
    replay, ``replay_agreement``. For an imported run: ``source_files``, ``unavailable``
    (what the format does not record: ``per_call_tokens``, ``per_call_latency``,
    ``tool_call_duration``, ...), ``target`` and ``command_pattern`` (the tool whose
    commands were scored), ``exit_codes`` (how exit codes were obtained when they are
    not exact), ``checks_available`` (False when some tasks carry no check verdicts) and
    ``skipped`` (cases the source skipped and evalnb left out, counted).
    ``shard`` (``"i/N"``): the run holds only shard i of N of the attempts (see
    :mod:`evalnb._runtime.shard`); ``evalnb merge`` combines the N shard runs.
    ``judges``: the ``--judge`` values, in order (the first decides, the others rate
    beside it); ``--resume`` judges the attempts left with them.

    Example:
        >>> RunSettings(spec="reference", filters={"tags": ["json"]}).filters.tags
        ['json']
    """

    model_config = ConfigDict(extra="forbid")

    spec: str | None = None
    concurrency: int | None = None
    seed: int | None = None
    connection: Connection = Field(default_factory=Connection)
    task_timeout_s: float | None = None
    max_turns: int | None = None
    filters: Filters = Field(default_factory=Filters)
    provider: dict[str, Any] = Field(default_factory=dict)
    replay_agreement: ReplayAgreement | None = None
    source_files: list[str] = Field(default_factory=list)
    unavailable: list[str] = Field(default_factory=list)
    target: str | None = None
    command_pattern: str | None = None
    exit_codes: str | None = None
    checks_available: bool | None = None
    skipped: int | None = None
    shard: str | None = None
    judges: list[str] = Field(default_factory=list)


RUN_FORMAT = 1
"""The run-folder format this evalnb writes (``run.json``'s ``format``) and reads: the
layout of ``run.json``, ``events.jsonl`` and the parquet tables (:mod:`evalnb._store`)."""


class RunMeta(Record):
    """``run.json``: one model over one dataset.

    ``format`` is the run-folder format (:data:`RUN_FORMAT`), written into every
    ``run.json``. A ``run.json`` without it is read as format 1 (the field came with
    format 1, and so did the folders written before it); a newer format than this
    evalnb's is refused (a validation error on ``format`` saying to upgrade evalnb).

    ``status`` is ``partial`` for a run that lacks tasks it should have; then
    ``missing_tasks`` says how many, where the source tells (None: not known).

    ``max_turns`` is the turn limit the run's tasks ran with: a scenario's own
    ``run.max_turns`` where the cases set one, else the run's ``--max-turns``; None
    when the cases' limits differ (each scenario's is in its file) or it is unknown.
    """

    model_config = ConfigDict(extra="forbid")

    format: int = Field(RUN_FORMAT, ge=1)
    run_id: str
    provider: str
    model: str
    source: str = "evalnb"
    dataset: str | None = None
    dataset_sha256: str | None = None
    max_turns: int | None = None
    epochs: int = 1
    sandbox: str | None = None
    sandbox_version: str | None = None
    evalnb_version: str | None = None
    guidance: str | None = None
    simulated: bool = False
    recorded_from: str | None = None
    started_at: str | None = None
    finished_at: str | None = None
    status: Literal["running", "partial", "complete"] = "running"
    task_count: int | None = None
    missing_tasks: int | None = None
    settings: RunSettings = Field(default_factory=RunSettings)

    @field_validator("format")
    @classmethod
    def _not_newer(cls, value: int) -> int:
        """Refuse a run folder of a newer format than this evalnb reads.

        Example:
            >>> try:
            ...     RunMeta(format=2, run_id="r", provider="p", model="m")
            ... except ValueError as exc:
            ...     print(exc.errors()[0]["msg"])
            Value error, run-folder format 2 is newer than this evalnb reads (1): upgrade evalnb
        """
        if value > RUN_FORMAT:
            raise ValueError(
                f"run-folder format {value} is newer than this evalnb reads ({RUN_FORMAT}): "
                "upgrade evalnb"
            )
        return value
