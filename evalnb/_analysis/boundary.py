"""The notebook API's boundary: arguments checked against their annotations, by name.

``en.summary("x")`` would otherwise fail deep inside with ``'str' object has no attribute
'scan'``. :func:`checked` wraps a public function so that each argument is checked
against the function's own annotation before the function runs, with ``isinstance``
semantics: a class (``Runs``, ``str``, ``Path``) by ``isinstance``, a union by any of its
members, a ``Literal`` by its choices, a generic (``list[str]``, ``Mapping[str, float]``)
by its container class alone (the items are not walked); ``int`` and ``float`` take no
``bool``, and ``float`` takes an ``int`` (PEP 484's numeric tower). A value of the wrong
type raises TypeError, a string outside a ``Literal``'s choices ValueError; either names
the function, the argument and what it must be. The arguments are passed on unchanged.

Why not a library: pydantic's ``TypeAdapter`` checks a model or dataclass by that class's
own (lax) configuration, so a ``dict`` passes for ``Thresholds``, and it refuses a
configuration for a bare model; typeguard or beartype would be a new dependency for the
few lines below.

Example:
    >>> @checked
    ... def twice(n: int, unit: Literal["s", "ms"] = "s") -> str:
    ...     return f"{2 * n} {unit}"
    >>> twice(3)
    '6 s'
    >>> twice("3")
    Traceback (most recent call last):
    ...
    TypeError: twice(): n must be int, got str '3'
    >>> twice(3, unit="h")
    Traceback (most recent call last):
    ...
    ValueError: twice(): unit must be Literal['s', 'ms'], got str 'h'
"""

from __future__ import annotations

import functools
import inspect
import re
import reprlib
import types
import typing
from collections.abc import Callable
from typing import Any, Literal, ParamSpec, TypeVar

P = ParamSpec("P")
R = TypeVar("R")

_MODULE_PATH = re.compile(r"\b(?:[A-Za-z_]\w*\.)+([A-Za-z_]\w*)")


def checked(fn: Callable[P, R]) -> Callable[P, R]:
    """``fn`` with its arguments checked against its annotations (see the module docstring).

    Example:
        >>> @checked
        ... def first(*names: str) -> str:
        ...     return names[0]
        >>> first("a", 2)
        Traceback (most recent call last):
        ...
        TypeError: first(): names[1] must be str, got int 2
    """
    signature = inspect.signature(fn)
    hints = typing.get_type_hints(fn)

    def check(name: str, shown: str, value: Any) -> None:
        hint = hints.get(name, Any)
        if _accepts(hint, value):
            return
        choice = typing.get_origin(hint) is Literal and isinstance(value, str)
        wanted = _MODULE_PATH.sub(r"\1", hint.__name__ if isinstance(hint, type) else str(hint))
        got = f"{type(value).__name__} {reprlib.repr(value)}"
        error = ValueError if choice else TypeError
        raise error(f"{fn.__name__}(): {shown} must be {wanted}, got {got}")

    @functools.wraps(fn)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        try:
            bound = signature.bind(*args, **kwargs)
        except TypeError as exc:  # a missing or unknown argument, named with the function
            raise TypeError(f"{fn.__name__}(): {exc}") from None
        for name, value in bound.arguments.items():
            kind = signature.parameters[name].kind
            if kind is inspect.Parameter.VAR_POSITIONAL:
                for i, item in enumerate(value):
                    check(name, f"{name}[{i}]", item)
            elif kind is inspect.Parameter.VAR_KEYWORD:
                for key, item in value.items():
                    check(name, key, item)
            else:
                check(name, name, value)
        return fn(*args, **kwargs)

    return wrapper


def _accepts(hint: Any, value: Any) -> bool:
    """Whether ``value`` fits ``hint`` (the rules of the module docstring).

    Example:
        >>> _accepts(int | None, None), _accepts(float, 3), _accepts(int, True)
        (True, True, False)
        >>> _accepts(list[str], ["a"]), _accepts(Literal["a", "b"], "c")
        (True, False)
    """
    origin = typing.get_origin(hint)
    if hint is Any:
        return True
    if hint is None or hint is type(None):
        return value is None
    if origin in (typing.Union, types.UnionType):
        return any(_accepts(member, value) for member in typing.get_args(hint))
    if origin is Literal:
        return any(type(value) is type(c) and value == c for c in typing.get_args(hint))
    if hint in (int, float) and isinstance(value, bool):
        return False
    if hint is float:
        return isinstance(value, int | float)
    cls = origin or hint
    return isinstance(value, cls) if isinstance(cls, type) else True
