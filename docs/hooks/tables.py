"""MkDocs hook: the tables evalnb's own code can make, made when the site is built, so
they cannot drift from the code.

- ``<!-- personas -->`` becomes the simulated agents' parameters
  (:func:`evalnb._runtime.providers.sim.persona_table`).
- ``<!-- options: NAME -->`` becomes the table of subcommand NAME, from the argparse
  parsers ``evalnb`` itself runs: one row per argument and option, with its value, its
  default and its help. The page that holds such lines must hold one for every
  subcommand, and only those: a subcommand added without a table, or a table of one that
  is gone, fails the build.

The default column is argparse's default where the parser sets one (``off`` for a
flag); where it leaves the value to the command (``None``: taken from ``run.json`` on
``--resume``, from the environment, or by format), the ``(default ...)`` its help states,
or the value its help marks ``NAME (default)``. An option's help is shown without its
``(default ...)``, so each default is said once; a flag's keeps it, saying what "off"
does.

Why not a plugin: the argparse plugins for MkDocs render argparse's own help text (or a
rich console picture of it), not a table with a default column.
"""

from __future__ import annotations

import argparse
import html
import re
from typing import Any

from evalnb._cli import _parser
from evalnb._runtime.providers.sim import persona_table

_PLACEHOLDER = re.compile(r"^<!-- options: (\S+) -->$", re.MULTILINE)
_STATED_DEFAULT = re.compile(r"\s*\(default:? ([^)]+)\)")
_NAMED_DEFAULT = re.compile(r"([\w./-]+) \(default\)")
_NO_DEFAULT = (None, False, [], argparse.SUPPRESS)


def on_page_markdown(markdown: str, **kwargs: Any) -> str:
    """Replace each placeholder line with its table (see the module docstring)."""
    markdown = markdown.replace("<!-- personas -->", persona_table())
    tables = _PLACEHOLDER.findall(markdown)
    if not tables:
        return markdown
    commands = subcommands()
    if sorted(tables) != sorted(commands):
        missing, unknown = sorted(set(commands) - set(tables)), sorted(set(tables) - set(commands))
        raise ValueError(
            f"{kwargs['page'].file.src_path}: one options table per subcommand: "
            f"missing {missing}, unknown {unknown}"
        )
    return _PLACEHOLDER.sub(lambda m: options_table(commands[m[1]]), markdown)


def subcommands() -> dict[str, argparse.ArgumentParser]:
    """Every ``evalnb`` subcommand's parser, by name, in the order ``evalnb --help`` lists them."""
    parser = _parser()
    (sub,) = (a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return dict(sub.choices)


def options_table(parser: argparse.ArgumentParser) -> str:
    """The Markdown table of ``parser``'s arguments and options (``-h`` left out)."""
    rows = ["| argument | value | default | what it does |", "|---|---|---|---|"]
    formatter = parser._get_formatter()
    for action in parser._actions:
        if isinstance(action, argparse._HelpAction):
            continue
        help_text = html.escape(formatter._expand_help(action) if action.help else "", quote=False)
        default = _default(action)
        stated = _STATED_DEFAULT.search(help_text)
        if stated and action.nargs != 0:  # a flag's stated default says what "off" does
            help_text = _STATED_DEFAULT.sub("", help_text)
            if default == "–":
                default = _cell(stated[1])
        elif default == "–" and (named := _NAMED_DEFAULT.search(help_text)):
            default = f"`{named[1]}`"
        if action.choices:
            help_text += f" (one of: {', '.join(f'`{c}`' for c in action.choices)})"
        if isinstance(action, argparse._AppendAction) and "repeatable" not in help_text:
            help_text += " (repeatable)"
        rows.append(f"| {_name(action)} | {_value(action)} | {default} | {_cell(help_text)} |")
    return "\n".join(rows)


def _name(action: argparse.Action) -> str:
    if action.option_strings:
        return ", ".join(f"`{flag}`" for flag in action.option_strings)
    return f"`{action.metavar or action.dest}`"


def _value(action: argparse.Action) -> str:
    if action.nargs == 0:
        return ""
    shown = f"`{action.metavar or action.dest.upper()}`" if action.option_strings else ""
    many = {"?": "optional", "+": "one or more", "*": "any number"}.get(str(action.nargs), "")
    return " ".join(part for part in (shown, many) if part) or "required"


def _default(action: argparse.Action) -> str:
    """The parser's own default: ``off`` for a flag, ``–`` where it sets none."""
    if action.nargs == 0:
        return "off"
    if action.default in _NO_DEFAULT:
        return "–"
    value = action.default
    return f"`{value:g}`" if isinstance(value, float) else f"`{value}`"


def _cell(text: str) -> str:
    return text.replace("|", "\\|").strip()
