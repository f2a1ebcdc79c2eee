"""The scenario YAML and the judge rubric YAML (spec 002), validated with pydantic.

Every model forbids unknown keys, so a typo is an error naming the key and its line.
Paths inside a scenario (``target.builtin``, ``target.path``, ``fixture``,
``guidance.file``, ``evaluation.judge.rubric``) are relative to the scenario file's
folder and must exist; the builtin's Python file is imported and the rubric loaded at
load time, so every problem shows before a model is called. Regexes (a gate's
``pattern`` and ``target.command_pattern``, both in the Rust dialect llm-tool-test uses,
:mod:`evalnb.records.rust_regex`), JSONPath expressions and ``command_json_path``
assertions are checked at load time too.

Gates may be listed at the top level (``gates:``) or, as in spec 002's example, under
``evaluation.gates``; not in both.

A scenario, in short (the full contract is the project's scenario documentation)::

    name: notes_capture                  # the task id
    target: {binary: notes, mode: builtin, builtin: ../tools/notes/notes.py:bashkit_builtin}
    task: "Capture three meeting notes."
    files: {"seed.txt": "..."}           # written into the workspace
    setup: {commands: ["notes init"]}
    guidance: {file: AGENTS.md, placement: both}
    gates:
      - {type: command_json_path, command: "notes list --format json", path: "$",
         assertion: "len >= 3"}
    evaluation:
      judge: {rubric: rubrics/notes.yaml, pass_threshold: 0.7}
      composite: {gate_weight: 0.5, judge_weight: 0.3, interaction_weight: 0.2}
    run: {max_turns: 12, timeout: 30}

Example:
    >>> s = Scenario.model_validate({
    ...     "name": "demo", "target": {"binary": "notes", "mode": "local"},
    ...     "task": "Add a note.", "gates": [{"type": "file_exists", "path": "notes.txt"}]})
    >>> s.gates[0].describe(), s.target.mode
    ('notes.txt exists', 'local')
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from functools import lru_cache
from pathlib import Path, PurePosixPath
from typing import Annotated, Any, Literal, TypedDict, cast

from jsonpath_ng import JSONPath
from jsonpath_ng.ext.parser import parse as parse_jsonpath
from pydantic import (
    AfterValidator,
    ConfigDict,
    Field,
    PrivateAttr,
    ValidationInfo,
    field_validator,
    model_validator,
)

from evalnb.errors import FallbackWarning, warn
from evalnb.records.base import Record
from evalnb.records.rust_regex import compile_pattern

ASSERTION = re.compile(
    r"^(?:exists|equals (?P<value>.+)|contains (?P<sub>.+)|len (?P<op>>=|==|>) (?P<n>\d+))$"
)
"""The ``command_json_path`` assertion forms of spec 002."""


@lru_cache(maxsize=1024)
def parse_json_path(path: str) -> JSONPath:
    """A ``command_json_path`` path parsed by jsonpath-ng's extended parser (filters included).

    Raises ValueError naming the path when it does not parse. Cached: a scenario's
    gates run once per attempt.

    Example:
        >>> parse_json_path("$.notes[0]")
        Child(Child(Root(), Fields('notes')), Index(indices=(0,)))
        >>> parse_json_path("$[")
        Traceback (most recent call last):
        ...
        ValueError: invalid JSONPath '$[': Parse error near the end of string!
    """
    try:
        return parse_jsonpath(path)
    except Exception as exc:  # jsonpath-ng raises several types for bad syntax
        raise ValueError(f"invalid JSONPath {path!r}: {exc}") from None


def default_command_pattern(binary: str) -> str:
    """The command pattern used when a scenario gives none: ``binary`` as a whole word.

    In the Rust dialect, without lookaround (:mod:`evalnb.records.rust_regex`):
    ``binary`` followed by whitespace and its first argument (capture group 1, the
    subcommand), or by a character that is not a word character, ``.`` or ``-``, or by
    the end of the text, so ``notes.txt``, ``notesx`` and ``notes-x`` are not ``notes``.
    A parsed command is matched at the start of its text, its name reduced to its
    basename (``./notes``, ``/x/bin/notes``); in plain text a match must also start a
    word, which :func:`evalnb._scoring.commands.pattern_matches` checks, so ``my-notes``
    and ``cat ./notes`` are not ``notes`` there.

    Example:
        >>> p = compile_pattern(default_command_pattern("notes"))
        >>> [p.captures_at(c).group(1) for c in (b"notes add x", b"notes", b"notes;ls")]
        [b'add', None, None]
        >>> [p.captures_at(c) for c in (b"notes.txt", b"notesx", b"notes-x")]
        [None, None, None]
    """
    return rf"{re.escape(binary)}(?:\s+([^\s;&|)]+)|[^\w.-]|$)"


class _Strict(Record):
    model_config = ConfigDict(extra="forbid")


class LoadContext(TypedDict, total=False):
    """What :func:`evalnb._formats.scenario.load_scenario` passes to validation.

    ``base_dir`` is the scenario file's folder (paths are relative to it; the current
    directory without it); ``load_rubric`` and ``load_callable`` load a judge's rubric
    and a builtin's callable, so every problem shows at load time.
    """

    base_dir: Path
    load_rubric: Callable[[Path], Rubric]
    load_callable: Callable[[str], Callable[..., Any]]


def _context(info: ValidationInfo) -> LoadContext:
    return cast(LoadContext, info.context or {})


def _resolve(path: str | Path, info: ValidationInfo) -> Path:
    """A scenario path, relative to the scenario file's folder (the cwd outside a load)."""
    base = _context(info).get("base_dir") or Path.cwd()
    return (base / Path(path)).resolve()


def _rust_regex(value: str) -> str:
    compile_pattern(value)
    return value


RustPattern = Annotated[str, Field(min_length=1), AfterValidator(_rust_regex)]
"""A gate's pattern or a command pattern: Rust's regex dialect
(:func:`evalnb.records.rust_regex.compile_pattern`)."""
Command = Annotated[str, Field(min_length=1)]


class Target(_Strict):
    """The tool under test: its command name, how to recognise it, and how it runs.

    ``command_pattern`` finds the tool's commands (spec 002; :func:`default_command_pattern`
    of ``binary`` without one), in the Rust regex dialect llm-tool-test matches it with,
    so a pattern with lookaround or a backreference is refused when the scenario loads.
    ``short_help``: the tool treats ``-h`` as ``--help``, so its commands with ``-h``
    among their arguments count as help-seeking (spec 002 "Help-seeking",
    ``help_invocations``); by default only ``--help`` and ``help`` do, as ``-h`` means
    something else for many tools.
    """

    binary: str = Field(pattern=r"^[A-Za-z0-9._+-]+$")
    command_pattern: RustPattern | None = None
    short_help: bool = False
    env: dict[str, str] = Field(default_factory=dict)
    health_check: Command | None = None
    mode: Literal["builtin", "local"] = "builtin"
    builtin: str | None = None
    path: Path | None = None

    @model_validator(mode="before")
    @classmethod
    def _default_mode(cls, data: Any) -> Any:
        """Without ``mode``: ``builtin`` when a builtin is named, else ``local``.

        An llm-tool-test target (only ``binary``) is a real program on ``PATH`` or in
        the workspace, so it runs in the local sandbox.
        """
        if isinstance(data, dict) and "mode" not in data:
            return {**data, "mode": "builtin" if "builtin" in data else "local"}
        return data

    @field_validator("path")
    @classmethod
    def _existing_dir(cls, value: Path | None, info: ValidationInfo) -> Path | None:
        if value is None:
            return None
        resolved = _resolve(value, info)
        if not resolved.is_dir():
            raise ValueError(f"folder {value} not found (looked in {resolved})")
        return resolved

    @field_validator("builtin")
    @classmethod
    def _builtin_ref(cls, value: str | None, info: ValidationInfo) -> str | None:
        if value is None:
            return None
        file, sep, name = value.rpartition(":")
        if not sep or not file or not name.isidentifier():
            raise ValueError(f"builtin must be 'path/to/file.py:callable', got {value!r}")
        resolved = _resolve(file, info)
        if not resolved.is_file():
            raise ValueError(f"file {file} not found (looked in {resolved})")
        load = _context(info).get("load_callable")
        if load is not None:
            load(f"{resolved}:{name}")  # import it now: a broken tool fails at load time
        return f"{resolved}:{name}"

    @model_validator(mode="after")
    def _mode_fields(self) -> Target:
        if self.mode == "builtin":
            if self.builtin is None:
                raise ValueError("mode 'builtin' needs 'builtin: file.py:callable'")
            if self.path is not None:
                raise ValueError("'path' is for mode 'local'; builtin mode runs inside bashkit")
        elif self.builtin is not None:
            raise ValueError(
                "'builtin' is for mode 'builtin'; mode 'local' runs 'path' executables"
            )
        return self

    @property
    def pattern(self) -> str:
        """``command_pattern``, or :func:`default_command_pattern` of ``binary``."""
        return self.command_pattern or default_command_pattern(self.binary)


class Setup(_Strict):
    """Commands run in the workspace before the agent; a failure is a setup error."""

    commands: list[Command] = Field(default_factory=list)


class Guidance(_Strict):
    """The guidance document (AGENTS.md) and where it goes."""

    file: Path | None = None
    placement: Literal["workspace", "system_prompt", "both"] = "workspace"

    @field_validator("file")
    @classmethod
    def _existing_file(cls, value: Path | None, info: ValidationInfo) -> Path | None:
        return None if value is None else _existing(value, info)


def _existing(value: Path, info: ValidationInfo) -> Path:
    resolved = _resolve(value, info)
    if not resolved.is_file():
        raise ValueError(f"file {value} not found (looked in {resolved})")
    return resolved


class _Gate(_Strict):
    """A gate; ``description`` (llm-tool-test writes one on any gate) is documentation only."""

    description: str = ""


class CommandSucceeds(_Gate):
    """Run ``command`` in the workspace; pass on exit code 0."""

    type: Literal["command_succeeds"]
    command: Command

    def describe(self) -> str:
        """``notes doctor`` exits 0."""
        return f"`{self.command}` exits 0"


class CommandOutputContains(_Gate):
    """Run ``command``; pass when its stdout contains ``substring``."""

    type: Literal["command_output_contains"]
    command: Command
    substring: str = Field(min_length=1)

    def describe(self) -> str:
        """``notes list`` stdout contains 'x'."""
        return f"`{self.command}` stdout contains {self.substring!r}"


class CommandOutputMatches(_Gate):
    """Run ``command``; pass when ``pattern`` (Rust's dialect) matches in its stdout."""

    type: Literal["command_output_matches"]
    command: Command
    pattern: RustPattern

    def describe(self) -> str:
        """``notes list`` stdout matches /p/."""
        return f"`{self.command}` stdout matches /{self.pattern}/"


class CommandJsonPath(_Gate):
    """Run ``command``, parse stdout as JSON and apply ``assertion`` to the value at ``path``."""

    type: Literal["command_json_path"]
    command: Command
    path: str = Field(min_length=1)
    assertion: str

    @field_validator("path")
    @classmethod
    def _valid_path(cls, value: str) -> str:
        parse_json_path(value)
        return value

    @field_validator("assertion")
    @classmethod
    def _valid_assertion(cls, value: str) -> str:
        if not ASSERTION.match(value.strip()):
            raise ValueError(
                f"unknown assertion {value!r}: use 'exists', 'equals <value>', "
                "'contains <substring>', 'len >= N', 'len == N' or 'len > N'"
            )
        return value.strip()

    def describe(self) -> str:
        """``cmd`` JSON at $: len >= 3."""
        return f"`{self.command}` JSON at {self.path}: {self.assertion}"


class FileExists(_Gate):
    """Pass when ``path`` (relative to the workspace) exists."""

    type: Literal["file_exists"]
    path: str = Field(min_length=1)

    def describe(self) -> str:
        """notes.txt exists."""
        return f"{self.path} exists"


class FileContains(_Gate):
    """Pass when file ``path`` contains ``substring``."""

    type: Literal["file_contains"]
    path: str = Field(min_length=1)
    substring: str = Field(min_length=1)

    def describe(self) -> str:
        """report.md contains 'x'."""
        return f"{self.path} contains {self.substring!r}"


class FileMatches(_Gate):
    """Pass when ``pattern`` (Rust's dialect) matches in the content of ``path``."""

    type: Literal["file_matches"]
    path: str = Field(min_length=1)
    pattern: RustPattern

    def describe(self) -> str:
        """report.md matches /p/."""
        return f"{self.path} matches /{self.pattern}/"


class NoTranscriptErrors(_Gate):
    """Pass when no target-tool command of the attempt exited non-zero."""

    type: Literal["no_transcript_errors"]

    def describe(self) -> str:
        """No failed target-tool command."""
        return "no target-tool command failed"


class Script(_Gate):
    """Run a check script; exit 0 passes, or its stdout JSON ``{passed, message}`` decides."""

    type: Literal["script"]
    command: Command
    description: str = Field(min_length=1)

    def describe(self) -> str:
        """description (`command`)."""
        return f"{self.description} (`{self.command}`)"


Gate = Annotated[
    CommandSucceeds
    | CommandOutputContains
    | CommandOutputMatches
    | CommandJsonPath
    | FileExists
    | FileContains
    | FileMatches
    | NoTranscriptErrors
    | Script,
    Field(discriminator="type"),
]
"""One of spec 002's nine generic gates, chosen by its ``type``."""


class JudgeResponse(Record):
    """Spec 002's ``JudgeResponse``: what the judge submits through its tool call.

    ``scores`` is always required; a rubric's ``output.require_fields`` decides which
    of the other fields the judge must give.
    """

    model_config = ConfigDict(extra="forbid")

    scores: dict[str, Annotated[float, Field(ge=0, le=1)]]
    weighted_score: float | None = Field(default=None, ge=0, le=1)
    confidence: float | None = Field(default=None, ge=0, le=1)
    issues: list[str] = Field(default_factory=list)
    highlights: list[str] = Field(default_factory=list)


JUDGE_FIELDS = tuple(JudgeResponse.model_fields)
"""The fields of spec 002's ``JudgeResponse``."""


class Criterion(_Strict):
    """One rubric criterion: an id, its weight and what the judge should look for."""

    id: str = Field(pattern=r"^[A-Za-z_][A-Za-z0-9_]*$")
    weight: float = Field(gt=0, le=1)
    description: str = Field(min_length=1)


class RubricOutput(_Strict):
    """The rubric's ``output`` section: the judge answers JSON with these fields."""

    format: Literal["json"] = "json"
    require_fields: list[str] = Field(default_factory=lambda: list(JUDGE_FIELDS))

    @field_validator("require_fields")
    @classmethod
    def _known_fields(cls, fields: list[str]) -> list[str]:
        unknown = [f for f in fields if f not in JUDGE_FIELDS]
        if unknown:
            raise ValueError(f"unknown field(s) {unknown}: JudgeResponse has {list(JUDGE_FIELDS)}")
        return fields


class Rubric(_Strict):
    """Weighted criteria for the judge; the weights sum to 1.

    Example:
        >>> r = Rubric(criteria=[{"id": "a", "weight": 0.25, "description": "x"},
        ...                      {"id": "b", "weight": 0.75, "description": "y"}])
        >>> [c.weight for c in r.criteria], r.output.format
        ([0.25, 0.75], 'json')
    """

    criteria: list[Criterion] = Field(min_length=1)
    output: RubricOutput = Field(default_factory=RubricOutput)

    @model_validator(mode="after")
    def _weights(self) -> Rubric:
        ids = [c.id for c in self.criteria]
        dupes = sorted({i for i in ids if ids.count(i) > 1})
        if dupes:
            raise ValueError(f"duplicate criterion id(s) {dupes}")
        total = math.fsum(c.weight for c in self.criteria)
        if abs(total - 1) > 1e-6:
            raise ValueError(f"criterion weights sum to {total:g}, not 1")
        return self


class JudgeConfig(_Strict):
    """``evaluation.judge``: rubric, pass threshold and (optionally) the judge model."""

    enabled: bool = True
    rubric: Path | None = None
    pass_threshold: float | None = Field(default=None, ge=0, le=1)
    model: str | None = None
    _rubric: Rubric | None = PrivateAttr(default=None)

    @field_validator("rubric")
    @classmethod
    def _existing_rubric(cls, value: Path | None, info: ValidationInfo) -> Path | None:
        return None if value is None else _existing(value, info)

    @model_validator(mode="after")
    def _complete(self, info: ValidationInfo) -> JudgeConfig:
        if self.enabled:
            if self.rubric is None:
                raise ValueError("an enabled judge needs 'rubric'")
            if self.pass_threshold is None:
                raise ValueError("an enabled judge needs 'pass_threshold' (0 to 1)")
            load = _context(info).get("load_rubric")
            if load is not None:
                self._rubric = load(self.rubric)
        return self

    @property
    def loaded_rubric(self) -> Rubric | None:
        """The rubric, loaded and validated at load time (None when the judge is disabled)."""
        return self._rubric


class Composite(_Strict):
    """Optional composite weights (spec 002); they sum to 1."""

    gate_weight: float = Field(ge=0, le=1)
    judge_weight: float = Field(ge=0, le=1)
    interaction_weight: float = Field(ge=0, le=1)

    @model_validator(mode="after")
    def _sum(self) -> Composite:
        total = math.fsum((self.gate_weight, self.judge_weight, self.interaction_weight))
        if abs(total - 1) > 1e-6:
            raise ValueError(f"composite weights sum to {total:g}, not 1")
        return self


class Evaluation(_Strict):
    """``evaluation``: judge, composite weights and (spec 002 layout) gates."""

    judge: JudgeConfig | None = None
    composite: Composite | None = None
    gates: list[Gate] = Field(default_factory=list)

    @property
    def judge_enabled(self) -> bool:
        """True when a judge section is present and enabled."""
        return self.judge is not None and self.judge.enabled


class RunSettings(_Strict):
    """``run``: the turn limit and the per-command timeout in seconds (see ``timeout_secs``)."""

    max_turns: int | None = Field(default=None, ge=1)
    timeout: float | None = Field(default=None, gt=0)
    timeout_secs: float | None = Field(default=None, gt=0)

    @model_validator(mode="after")
    def _run_budget(self) -> RunSettings:
        """llm-tool-test's ``timeout_secs`` bounds the whole run; evalnb has no attempt clock,
        so it caps every command's timeout (no command may outlast the run's budget)."""
        if self.timeout_secs is not None:
            self.timeout = min(self.timeout or self.timeout_secs, self.timeout_secs)
        return self


class Scenario(_Strict):
    """One CLI-tool scenario (see the scenario contract in the module docstring)."""

    name: str = Field(pattern=r"^[A-Za-z0-9_.-]+$")
    description: str = ""
    category: str = Field(default="scenario", min_length=1)
    tags: list[str] = Field(default_factory=list)
    tier: int = Field(default=1, ge=0)
    target: Target
    task: str = Field(min_length=1)
    files: dict[str, str] = Field(default_factory=dict)
    fixture: Path | None = None
    template_folder: Path | None = None
    setup: Setup = Field(default_factory=Setup)
    guidance: Guidance | None = None
    gates: list[Gate] = Field(default_factory=list)
    evaluation: Evaluation = Field(default_factory=Evaluation)
    run: RunSettings = Field(default_factory=RunSettings)
    scripts: dict[str, Any] | None = None
    tool_matrix: list[dict[str, Any]] | None = None

    @field_validator("task", mode="before")
    @classmethod
    def _task_prompt(cls, value: Any) -> Any:
        """llm-tool-test writes ``task: {prompt: ...}``; the prompt is the task."""
        if isinstance(value, dict):
            unknown = sorted(set(value) - {"prompt"})
            if unknown:
                raise ValueError(f"only 'prompt' is read from a task mapping, not {unknown}")
            return value.get("prompt")
        return value

    @field_validator("template_folder")
    @classmethod
    def _template(cls, value: Path | None, info: ValidationInfo) -> Path | None:
        """llm-tool-test's ``template_folder``: ``templates/<name>`` beside the scenario."""
        if value is None:
            return None
        tried = [_resolve(Path("templates") / value, info), _resolve(value, info)]
        found = next((p for p in tried if p.is_dir()), None)
        if found is None:
            raise ValueError(
                f"folder {value} not found (looked in {' and '.join(map(str, tried))})"
            )
        return found

    @field_validator("scripts")
    @classmethod
    def _no_scripts(cls, value: dict[str, Any] | None) -> dict[str, Any] | None:
        """llm-tool-test's hook scripts are not run by evalnb: refuse them by name.

        Upstream runs ``scripts.post`` (``sh -c`` in the fixture folder after the agent,
        ``LLM_TOOL_TEST_*`` variables set, 30 s timeout) and ``scripts.evaluators``
        (named scoring scripts, 60 s) itself; evalnb has no hook stage and no contract
        for an evaluator's score, so a scenario using either is refused at the
        ``scripts:`` line rather than run without them.
        """
        used = sorted(k for k, v in (value or {}).items() if v)
        if used:
            names = ", ".join(f"scripts.{k}" for k in used)
            raise ValueError(
                f"not supported: evalnb does not run llm-tool-test's {names} "
                "(post-execution hooks and evaluator scripts); express the check as a gate "
                "of type script, or remove it"
            )
        return value

    @field_validator("tool_matrix")
    @classmethod
    def _matrix_unused(cls, value: list[dict[str, Any]] | None) -> list[dict[str, Any]] | None:
        if value:
            warn(
                "tool_matrix is not used: evalnb runs the models given with --model",
                FallbackWarning,
            )
        return value

    @field_validator("files")
    @classmethod
    def _relative_files(cls, files: dict[str, str]) -> dict[str, str]:
        for rel in files:
            parts = PurePosixPath(rel).parts
            if not parts or rel.startswith("/") or ".." in parts:
                raise ValueError(f"file path {rel!r} must be relative to the workspace")
        return files

    @field_validator("fixture")
    @classmethod
    def _existing_fixture(cls, value: Path | None, info: ValidationInfo) -> Path | None:
        if value is None:
            return None
        resolved = _resolve(value, info)
        if not resolved.is_dir():
            raise ValueError(f"fixture folder {value} not found (looked in {resolved})")
        return resolved

    @model_validator(mode="after")
    def _consistent(self) -> Scenario:
        if self.template_folder is not None:
            if self.fixture is not None:
                raise ValueError("give fixture or template_folder, not both")
            self.fixture = self.template_folder
        if self.gates and self.evaluation.gates:
            raise ValueError("gates are listed both at the top level and under evaluation")
        if self.evaluation.gates:
            self.gates = list(self.evaluation.gates)
        weights = self.evaluation.composite
        if weights and weights.judge_weight > 0 and not self.evaluation.judge_enabled:
            raise ValueError("composite.judge_weight > 0 needs an enabled judge")
        if weights and weights.gate_weight > 0 and not self.gates:
            raise ValueError("composite.gate_weight > 0 needs at least one gate")
        return self
