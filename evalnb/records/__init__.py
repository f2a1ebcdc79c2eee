"""The records evalnb reads and writes: tasks, traces, scores, runs and scenarios.

Pydantic models only; every other layer builds on them. Field names follow the specs
(spec 000's ``ToolCallResult``, ``AgentTrace``, ``TaskScore``; spec 003's per-call
metrics; spec 002's scenario, gates and judge) wherever a spec names a field.

Example:
    >>> from evalnb.records import Task
    >>> Task(id="t", category="c", prompt="p").id
    't'
"""

from evalnb.records.run import Connection, Filters, RunMeta, RunSettings
from evalnb.records.score import (
    JudgeRating,
    Layer,
    ReplayAgreement,
    ScenarioResult,
    ScoreResult,
    TaskRecord,
    TaskScore,
)
from evalnb.records.task import CHECK_KINDS, Expectation, Task, parse_check
from evalnb.records.trace import (
    AgentTrace,
    ContentBlock,
    LLMCall,
    Message,
    ToolCallResult,
    ToolInvocation,
    cumulative_inputs,
)

__all__ = [
    "CHECK_KINDS",
    "AgentTrace",
    "Connection",
    "ContentBlock",
    "Expectation",
    "Filters",
    "JudgeRating",
    "LLMCall",
    "Layer",
    "Message",
    "ReplayAgreement",
    "RunMeta",
    "RunSettings",
    "ScenarioResult",
    "ScoreResult",
    "Task",
    "TaskRecord",
    "TaskScore",
    "ToolCallResult",
    "ToolInvocation",
    "cumulative_inputs",
    "parse_check",
]
