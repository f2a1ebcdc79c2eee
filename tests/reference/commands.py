"""Spec 002 layer 1: the target commands an attempt ran, and its interaction counts.

Command identification (spec 002 "Command Identification", README "Interaction
metrics"): a tool call whose runs of the tool under test were recorded
(``invocations``, the structured events spec 002 prefers) gives one command per run,
with that run's exit code, whether or not the pattern matches it (its subcommand is
then unknown); a run without an exit code was killed and failed. Any other call is
read from its text: each simple command of the script is one, sharing the call's exit
code (none: not failed). The scripts these tests generate are simple commands of plain
words joined by ``&&``, ``||``, ``|`` and ``;``, so splitting at those operators finds
them exactly. A command is named by the basename of its first word; with a pattern, a
text command counts only when the pattern matches at the start of its words joined by
spaces, and its subcommand is group 1; without one every command counts and its
subcommand is its name.

Counts per attempt, commands in call order: total, unique (distinct words), errors,
retries (an execution whose previous execution of the same command failed),
help-seeking (``--help`` among the arguments, ``help`` as first argument or name, and
``-h`` for the commands whose ``-h`` means help, or the scenario's own tool when it says
so), first-try successes (distinct commands whose first execution did not fail).
"""

from __future__ import annotations

import posixpath
import re
from dataclasses import dataclass
from typing import Any

SHORT_HELP = {"curl", "git", "jq", "node", "npm", "pip", "pip3", "python", "python3", "yq"}
"""README: the commands whose ``-h`` means ``--help``."""

OPERATORS = re.compile(r"\s*(?:&&|\|\||\||;)\s*")

COUNTS = [
    "total_commands",
    "unique_commands",
    "error_count",
    "retry_count",
    "help_invocations",
    "first_try_successes",
]


@dataclass
class Command:
    """One execution of a target command, flagged."""

    words: tuple[str, ...]
    subcommand: str | None
    failed: bool
    is_help: bool
    is_first: bool = False
    is_retry: bool = False


def commands(record: dict[str, Any], pattern: str | None) -> list[Command]:
    """The target commands of one attempt's record, in the order they ran, flagged."""
    regex = re.compile(pattern) if pattern is not None else None
    tool = (record.get("extra") or {}).get("short_help_tool")
    found: list[Command] = []
    for call in sorted(record["trace"]["tool_calls"], key=lambda c: c["call_index"]):
        if call.get("invocations") is not None:
            for run in sorted(call["invocations"], key=lambda r: r["invocation_index"]):
                words = _named(run["argv"])
                found.append(
                    Command(
                        words,
                        _subcommand(words, regex),
                        failed=run["exit_code"] != 0,  # None: killed, so failed
                        is_help=_is_help(words, tool),
                    )
                )
            continue
        for part in OPERATORS.split(call["commands"].strip()):
            words = _named(part.split())
            if not words or (regex is not None and not regex.match(" ".join(words))):
                continue
            code = call["exit_code"]
            found.append(
                Command(
                    words,
                    _subcommand(words, regex),
                    failed=code is not None and code != 0,
                    is_help=_is_help(words, tool),
                )
            )
    seen: dict[tuple[str, ...], bool] = {}  # words -> did its last execution fail
    for command in found:
        command.is_first = command.words not in seen
        command.is_retry = seen.get(command.words, False)
        seen[command.words] = command.failed
    return found


def counts(found: list[Command]) -> dict[str, int]:
    """The six counts of spec 002 over some flagged commands."""
    return {
        "total_commands": len(found),
        "unique_commands": sum(c.is_first for c in found),
        "error_count": sum(c.failed for c in found),
        "retry_count": sum(c.is_retry for c in found),
        "help_invocations": sum(c.is_help for c in found),
        "first_try_successes": sum(c.is_first and not c.failed for c in found),
    }


def rates(summed: dict[str, int]) -> dict[str, float | None]:
    """Spec 002's rates from summed counts (null with no command)."""
    total = summed["total_commands"]

    def share(n: int) -> float | None:
        return n / total if total else None

    return {
        "error_rate": share(summed["error_count"]),
        "retry_rate": share(total - summed["unique_commands"]),
        "first_try_success_rate": share(summed["first_try_successes"]),
        "iteration_ratio": share(summed["unique_commands"]),
    }


def _named(words: list[str]) -> tuple[str, ...]:
    return (posixpath.basename(words[0]), *words[1:]) if words else ()


def _subcommand(words: tuple[str, ...], regex: re.Pattern[str] | None) -> str | None:
    if regex is None:
        return words[0]
    match = regex.match(" ".join(words))
    return match.group(1) if match and regex.groups else None


def _is_help(words: tuple[str, ...], tool: str | None) -> bool:
    name, args = words[0], words[1:]
    dash_h = "-h" in args and (name in SHORT_HELP or name == tool)
    return name == "help" or args[:1] == ("help",) or "--help" in args or dash_h
