"""The parts of an Inspect AI sample that evalnb reads, validated straight from the log's JSON.

``inspect_ai``'s ``read_eval_log`` parses every sample into Python objects and validates
all of it (each model event's full input, the store, the timelines), most of a load's
time. :func:`read_samples` validates each sample's JSON with
the models below instead, which name only the fields the mapping in
:mod:`evalnb._formats.inspect_log` reads (with Inspect's types), so pydantic skips the rest
of the document without building it. Their attribute names are Inspect's, so that
mapping reads these and ``inspect_ai``'s own ``EvalSample`` alike.

Inspect's migrations of older logs that touch these fields are kept: ``transcript``
(events and attachments before ``events``), a single ``score`` (named after the log's
first scorer), a tool message's ``tool_error`` and the stop reason ``length`` (now
``max_tokens``).

A field evalnb reads that has the wrong type raises :class:`~evalnb.errors.InputError`
naming the file, the sample and the field; fields evalnb does not read are not
checked (Inspect's reader would refuse a log with, say, a malformed ``store``).

Example:
    >>> sample = SAMPLE.validate_json(b'{"id": 1, "epoch": 1, "input": "hi", "events": ['
    ...     b'{"event": "span_begin", "name": "x"}, {"event": "tool", "function": "bash",'
    ...     b' "arguments": {"cmd": "ls"}, "result": "a"}], "store": {"ignored": true}}')
    >>> [e.event for e in sample.events], sample.events[1].arguments
    (['span_begin', 'tool'], {'cmd': 'ls'})
"""

from __future__ import annotations

import json
import re
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any, Literal, TypeVar

from pydantic import (
    AliasChoices,
    AliasPath,
    BaseModel,
    Discriminator,
    Field,
    Tag,
    TypeAdapter,
    ValidationError,
    field_validator,
    model_validator,
)

from evalnb.errors import InputError

SAMPLES_DIR = "samples/"
SCORER_PLACEHOLDER = "88F74D2C"  # Inspect's name for the scorer of a log's single ``score``
UNREADABLE = "not a readable Inspect log"
T = TypeVar("T")

Scalar = str | int | float | bool
Value = Scalar | list[Scalar] | dict[str, Scalar | None]  # Inspect's score ``Value``


class Usage(BaseModel):
    """A model call's (or a sample's) token usage, as Inspect's ``ModelUsage``."""

    input_tokens: int = 0
    output_tokens: int = 0
    input_tokens_cache_write: int | None = None
    input_tokens_cache_read: int | None = None


class ToolCall(BaseModel):
    """A tool call an assistant message asked for."""

    id: str
    function: str
    arguments: dict[str, Any]


class ToolError(BaseModel):
    """A tool call's error: Inspect's ``ToolCallError``."""

    type: str
    message: str


class Content(BaseModel):
    """One content block of a message or tool result (only text blocks carry ``text``)."""

    type: str
    text: str | None = None


class Message(BaseModel):
    """A chat message of any role (Inspect's ``ChatMessage`` union, the fields read)."""

    role: str
    content: str | list[Content]
    tool_calls: list[ToolCall] | None = None
    tool_call_id: str | None = None
    function: str | None = None
    error: ToolError | None = None
    tool_error: str | None = None  # before ``error``: Inspect reads it as an unknown error

    @model_validator(mode="after")
    def _tool_error(self) -> Message:
        if self.tool_error:
            self.error = ToolError(type="unknown", message=self.tool_error)
        return self


class Choice(BaseModel):
    """One completion choice of a model call."""

    message: Message
    stop_reason: str = "unknown"

    @field_validator("stop_reason")
    @classmethod
    def _renamed(cls, value: str) -> str:
        return "max_tokens" if value == "length" else value


class Output(BaseModel):
    """A model call's output."""

    choices: list[Choice] = Field(default_factory=list)
    usage: Usage | None = None


class ModelEvent(BaseModel):
    """A model call (``role`` is None for the evaluated model, else e.g. ``grader``)."""

    event: Literal["model"]
    role: str | None = None
    output: Output
    working_time: float | None = None
    metadata: dict[str, Any] | None = None
    span_id: str | None = None


class ToolEvent(BaseModel):
    """A tool call and its result."""

    event: Literal["tool"]
    function: str
    arguments: dict[str, Any]
    result: Scalar | Content | list[Content] = ""
    truncated: tuple[int, int] | None = None
    error: ToolError | None = None
    working_time: float | None = None
    metadata: dict[str, Any] | None = None
    span_id: str | None = None


class ScopeEvent(BaseModel):
    """Where a part of a sample begins or ends: a span (``span_begin``/``span_end``,
    with ``id``, ``parent_id`` and ``type``) or, in older logs, a step (``step``, with
    ``action`` begin/end, ``type`` and ``name``). Scorers run inside a ``scorer`` one."""

    event: Literal["span_begin", "span_end", "step"]
    id: str | None = None
    parent_id: str | None = None
    type: str | None = None
    action: str | None = None
    name: str | None = None


class OtherEvent(BaseModel):
    """Any other event (state changes, scores, ...): only its kind is read."""

    event: str


class KnownEvent(OtherEvent):
    """One of Inspect's other event kinds (inspect_ai 0.3.285's), by name: only its kind
    is read, as :class:`OtherEvent`'s."""

    event: Literal[
        "anchor",
        "approval",
        "branch",
        "checkpoint",
        "compaction",
        "error",
        "info",
        "input",
        "interrupt",
        "logger",
        "review",
        "sample_init",
        "sample_limit",
        "sandbox",
        "score",
        "score_edit",
        "sentinel",
        "state",
        "store",
        "subtask",
    ]


_KINDS = {
    "model": "ModelEvent",
    "tool": "ToolEvent",
    "span_begin": "ScopeEvent",
    "span_end": "ScopeEvent",
    "step": "ScopeEvent",
}


def _event_kind(event: Any) -> str:
    kind = event.get("event") if isinstance(event, dict) else getattr(event, "event", None)
    return _KINDS.get(str(kind), "OtherEvent")


AnyEvent = Annotated[
    Annotated[ModelEvent, Tag("ModelEvent")]
    | Annotated[ToolEvent, Tag("ToolEvent")]
    | Annotated[ScopeEvent, Tag("ScopeEvent")]
    | Annotated[OtherEvent, Tag("OtherEvent")],
    Discriminator(_event_kind),
]
"""An event of any kind, an unknown one as :class:`OtherEvent`. Its discriminator is a
function, which pydantic calls with each event built as Python objects, whole."""
_TAGS = {"ModelEvent", "ToolEvent", "ScopeEvent", "OtherEvent"}
Event = Annotated[ModelEvent | ToolEvent | ScopeEvent | KnownEvent, Field(discriminator="event")]
"""An event of a kind Inspect knows, told apart by its ``event`` field without building it
(a bench trajectory's sample validates in 0.50 ms of CPU instead of 0.85 with
:data:`AnyEvent`). A sample with an event of another kind is validated again with
:data:`AnyEvent` (:func:`_validated`)."""


class Score(BaseModel):
    """One scorer's score of a sample."""

    value: Value
    answer: str | None = None
    explanation: str | None = None
    metadata: dict[str, Any] | None = None


class SampleError(BaseModel):
    """The error that ended a sample."""

    message: str


class SampleLimit(BaseModel):
    """The limit (messages, tokens, time, ...) that ended a sample."""

    type: str
    limit: float


EVENTS = AliasChoices("events", AliasPath("transcript", "events"))
"""Where a sample's events are (``transcript.events`` in older logs)."""


class Sample(BaseModel):
    """One sample (and epoch) of an Inspect log: the fields evalnb reads."""

    id: int | str
    epoch: int
    input: str | list[Message]
    description: str | None = None
    messages: list[Message] = Field(default_factory=list)
    output: Output | None = None
    scores: dict[str, Score] | None = None
    score: Score | None = None  # before ``scores``
    metadata: dict[str, Any] = Field(default_factory=dict)
    events: list[Event] = Field(
        default_factory=list,
        validation_alias=EVENTS,
    )
    attachments: dict[str, str] = Field(
        default_factory=dict,
        validation_alias=AliasChoices("attachments", AliasPath("transcript", "content")),
    )
    error: SampleError | None = None
    limit: SampleLimit | None = None
    total_time: float | None = None
    model_usage: dict[str, Usage] = Field(default_factory=dict)

    @model_validator(mode="after")
    def _single_score(self) -> Sample:
        if self.score is not None and self.scores is None:
            self.scores = {SCORER_PLACEHOLDER: self.score}
        return self


class AnySample(Sample):
    """A :class:`Sample` whose events may be of any kind (:data:`AnyEvent`)."""

    events: list[AnyEvent] = Field(  # type: ignore[assignment]
        default_factory=list,
        validation_alias=EVENTS,
    )


class JsonLog(BaseModel):
    """A ``.json`` log: only its samples (``None`` when it was written without them)."""

    samples: list[Sample] | None = None


class AnyJsonLog(JsonLog):
    """A :class:`JsonLog` whose samples' events may be of any kind."""

    samples: list[AnySample] | None = None  # type: ignore[assignment]


SAMPLE = TypeAdapter(Sample)
ANY_SAMPLE: TypeAdapter[Sample] = TypeAdapter(AnySample)
JSON_LOG = TypeAdapter(JsonLog)
ANY_JSON_LOG: TypeAdapter[JsonLog] = TypeAdapter(AnyJsonLog)


def read_samples(
    path: Path, convert: Callable[[Sample], T], scorer: str | None = None
) -> list[T] | None:
    """``convert`` of each sample of an ``.eval`` or ``.json`` log, in Inspect's order.

    An ``.eval`` log's samples are ordered by epoch, then id (as ``read_eval_log``
    orders them); a sample logged twice counts once, its last version. Each sample is
    converted as soon as it is read, so only one is held at a time. ``scorer``: the
    name of the log's first scorer (its ``results``), which Inspect gives an older
    log's single ``score``. ``None``: a ``.json`` log written without samples.

    Example:
        >>> import tempfile
        >>> log = Path(tempfile.mkdtemp()) / "log.json"
        >>> _ = log.write_text('{"samples": [{"id": 7, "epoch": 1, "input": "hi"}]}')
        >>> read_samples(log, lambda sample: (sample.id, sample.input))
        [(7, 'hi')]
        >>> _ = log.write_text('{"samples": [{"id": "a", "epoch": "first", "input": ""}]}')
        >>> read_samples(log, str)
        Traceback (most recent call last):
        ...
        evalnb.errors.InputError: ...log.json: samples[0].epoch: not a readable Inspect log: \
Input should be a valid integer, unable to parse string as an integer (got "first")
    """
    if path.suffix != ".eval":
        samples = _validated(JSON_LOG, ANY_JSON_LOG, path.read_bytes(), path, "").samples
        return None if samples is None else [convert(_named(s, scorer)) for s in samples]
    keyed: list[tuple[tuple[int, str], T]] = []
    try:
        with zipfile.ZipFile(path) as archive:
            for name in dict.fromkeys(archive.namelist()):  # re-logged: zip reads the last
                if name.startswith(SAMPLES_DIR) and name.endswith(".json"):
                    sample = _named(_sample(path, name, archive.read(name)), scorer)
                    keyed.append((_order(sample), convert(sample)))
    except (OSError, zipfile.BadZipFile, RuntimeError, ValueError) as exc:
        raise InputError(path, None, None, f"{UNREADABLE}: {exc}") from None
    keyed.sort(key=lambda pair: pair[0])
    return [converted for _, converted in keyed]


def _named(sample: Sample, scorer: str | None) -> Sample:
    if scorer and sample.scores and SCORER_PLACEHOLDER in sample.scores:
        sample.scores[scorer] = sample.scores.pop(SCORER_PLACEHOLDER)
    return sample


def _order(sample: Sample) -> tuple[int, str]:
    """Inspect's sample order: epoch, then id (a number zero-padded, so 2 comes before 10)."""
    return sample.epoch, sample.id if isinstance(sample.id, str) else str(sample.id).zfill(20)


def _sample(path: Path, name: str, raw: bytes) -> Sample:
    return _validated(SAMPLE, ANY_SAMPLE, raw, path, f"{name}: ")


def _validated(
    fast: TypeAdapter[T], any_kind: TypeAdapter[T], raw: bytes, path: Path, where: str
) -> T:
    """``raw`` validated with ``fast`` (events of Inspect's kinds: :data:`Event`), else with
    ``any_kind`` (:data:`AnyEvent`): a document with an event of another kind is read all
    the same, and a bad one gets the error that names its field."""
    try:
        return fast.validate_json(raw)
    except ValidationError:
        try:
            return any_kind.validate_json(raw)
        except ValidationError as exc:
            raise _invalid(path, exc, where) from None


def _invalid(path: Path, exc: ValidationError, where: str) -> InputError:
    """The first error of ``exc`` as bad input naming the field (and ``where``: the sample)."""
    error = exc.errors(include_url=False)[0]
    loc = [part for part in error["loc"] if not _member_label(part)]
    field = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in loc).lstrip(".")
    place = f"{where}{field}" if field else where.removesuffix(": ")
    if error["type"] == "json_invalid":  # the document itself: its line, not its text
        line = re.search(r"at line (\d+)", error["msg"])
        return InputError(
            path, int(line[1]) if line else None, place, f"{UNREADABLE}: {error['msg']}"
        )
    got = json.dumps(error["input"], default=str)[:60] if error["type"] != "missing" else ""
    said = f" (got {got})" if got else ""
    return InputError(path, None, place or None, f"{UNREADABLE}: {error['msg']}{said}")


def _member_label(part: str | int) -> bool:
    """True for the parts of a pydantic error location that name a union member (an event
    kind, or a type such as ``str`` or ``list[ContentText]``), not a field."""
    return isinstance(part, str) and (
        part in _TAGS or part in {"str", "int", "float", "bool", "none"} or "[" in part
    )
