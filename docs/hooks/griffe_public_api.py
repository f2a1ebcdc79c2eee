"""Griffe extension for the API pages: evalnb's public names as Python sees them.

Griffe reads the source without running it, and two of evalnb's idioms read differently
that way:

- ``evalnb/__init__.py`` binds ``summary = checked(_summary.summary)``: a wrapper that
  checks the arguments (``functools.wraps`` keeps the function's name, signature and
  docstring). Griffe sees a variable; each such public name becomes an alias of the
  function it wraps, so its page shows that function's signature and docstring.
- ``evalnb/charts.py`` and ``evalnb/widgets.py`` replace themselves in ``sys.modules``
  with ``evalnb._present.charts`` and ``evalnb._present.widgets``. Griffe sees a module with
  nothing in it; each such stand-in gets the docstring and the public members of the
  module it stands for (public as griffe judges it, with ``griffe_public_redundant_aliases``
  counting ``from x import y as y`` as a re-export), under its own name.

The docstrings are written for the doctests and for ``help()``: a Google-style
``Example:`` section, Sphinx roles (``:func:`name```) and ``::`` before a literal block.
For the pages, ``Example:`` reads as griffe's ``Examples:`` (its doctest lines become code),
a role becomes code (``~a.b`` shows ``b``, as Sphinx does) and ``::`` a colon. The
docstrings themselves are not changed.
"""

from __future__ import annotations

import importlib
import inspect
import re
from typing import Any

import griffe

_EXAMPLE = re.compile(r"^(\s*)Example:[ \t]*$", re.MULTILINE)
_ROLE = re.compile(r":(?:py:)?(?:func|class|meth|mod|data|attr|exc|obj|const):`(~?)([^`]+)`")
_LITERAL = re.compile(r"::[ \t]*$", re.MULTILINE)


class PublicApi(griffe.Extension):
    """Aliases for evalnb's wrapped functions and stand-in modules; docstrings as Markdown."""

    def on_package(self, *, pkg: griffe.Module, loader: griffe.GriffeLoader, **kwargs: Any) -> None:
        """Rework the loaded ``evalnb`` package (see the module docstring)."""
        if pkg.path != "evalnb":
            return
        _as_markdown(pkg)
        evalnb = importlib.import_module("evalnb")
        for name in evalnb.__all__:
            value = getattr(evalnb, name)
            if inspect.ismodule(value):
                if value.__name__ != f"evalnb.{name}":
                    _stand_in(pkg.members[name], pkg[value.__name__.removeprefix("evalnb.")])
            elif inspect.isfunction(value) or inspect.isclass(value):
                real = inspect.unwrap(value)
                path = f"{real.__module__}.{real.__qualname__}"
                member = pkg.members[name]
                if path != (member.target_path if member.is_alias else member.path):
                    pkg.set_member(name, griffe.Alias(name, path, parent=pkg))


def _stand_in(module: griffe.Module, real: griffe.Module) -> None:
    """Give the stand-in ``module`` the docstring and public members of ``real``."""
    module.docstring = real.docstring
    for name, member in real.members.items():
        if member.is_public:
            alias = griffe.Alias(name, member, parent=module)
            alias.public = True
            module.set_member(name, alias)


def _as_markdown(obj: griffe.Object) -> None:
    """Rewrite the docstrings of ``obj`` and of everything defined in it for the pages."""
    if obj.docstring is not None:
        text = _EXAMPLE.sub(r"\1Examples:", obj.docstring.value)
        text = _ROLE.sub(lambda m: f"`{m[2].rsplit('.', 1)[-1] if m[1] else m[2]}`", text)
        obj.docstring.value = _LITERAL.sub(":", text)
    for member in obj.members.values():
        if not member.is_alias:
            _as_markdown(member)
