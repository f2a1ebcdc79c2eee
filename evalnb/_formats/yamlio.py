"""Load YAML (or JSON) into a pydantic model with errors that name file, line and field.

Example:
    >>> import tempfile, pathlib
    >>> from pydantic import BaseModel, ConfigDict
    >>> class Cfg(BaseModel):
    ...     model_config = ConfigDict(extra="forbid")
    ...     name: str
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "c.yaml"
    >>> _ = p.write_text("name: x\\ncolour: red\\n")
    >>> try:
    ...     load_model(p, Cfg)
    ... except Exception as e:
    ...     print(e)
    c.yaml:2: colour: Extra inputs are not permitted
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, TypeVar, overload

import yaml
from pydantic import BaseModel, TypeAdapter, ValidationError

from evalnb.errors import InputError, read_input

M = TypeVar("M")

MAX_DEPTH = 200
"""The deepest nesting of mappings and sequences a YAML input (JSON read as YAML
included) may have."""

TOO_DEEP = f"nested too deeply (over {MAX_DEPTH} levels)"

MAX_ALIAS_NODES = 100_000
"""The most nodes (scalars, mappings and sequences) that a YAML input's aliases (``*name``,
merge keys ``<<: *name`` included) may add when expanded: each alias adds the nodes of
what its anchor names, aliases inside that counted expanded too. A document over it (an
"alias bomb", where a few lines of nested aliases expand to billions of nodes) is
refused at the alias that crosses it. JSON has no aliases, so this never limits JSON."""

LIBYAML_DEPTH_PROBLEM = "exceeded maximum nesting depth"
"""What libyaml 0.2.6 and later (PyYAML 6.0.3's wheels onwards) say at 1,000 levels. Its
scanner reads flow collections ahead of the parse events, so on a flow-style input it can
stop before :func:`_refuse_deep_or_huge` has counted :data:`MAX_DEPTH` levels; both mean the
input nests deeper than evalnb reads, and both say so in the same words."""

LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
"""libyaml's safe loader where PyYAML was built with it (parsing in C), else PyYAML's own."""


@overload
def load_model(
    path: str | Path, model: type[M], *, display: str | None = None, context: Any = None
) -> M: ...
@overload
def load_model(
    path: str | Path, model: Any, *, display: str | None = None, context: Any = None
) -> Any: ...
def load_model(
    path: str | Path,
    model: Any,
    *,
    display: str | None = None,
    context: Any = None,
) -> Any:
    """Parse ``path`` as YAML (JSON is YAML) and validate it as ``model``.

    ``model`` may be a pydantic model class or any type a TypeAdapter accepts.
    ``display`` is the file name used in messages (default: the path's name);
    ``context`` is passed to pydantic validators (``ValidationInfo.context``).

    Example:
        >>> import tempfile, pathlib
        >>> p = pathlib.Path(tempfile.mkdtemp()) / "n.yaml"
        >>> _ = p.write_text("[1, 2]\\n")
        >>> load_model(p, list[int])
        [1, 2]
    """
    path = Path(path)
    shown = display or path.name
    text = read_input(path, shown)
    if not text.strip():
        raise InputError(shown, None, None, "empty file")
    try:
        _refuse_deep_or_huge(shown, text)
        node, data = _compose_and_construct(shown, text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = mark.line + 1 if mark else None
        problem = getattr(exc, "problem", None) or str(exc)
        if problem == LIBYAML_DEPTH_PROBLEM:
            problem = TOO_DEEP
        raise InputError(shown, line, None, f"invalid YAML: {problem}") from None
    except RecursionError:  # PyYAML's own composer, deep in an already deep stack
        raise InputError(shown, None, None, "invalid YAML: nested too deeply") from None
    adapter = model if isinstance(model, TypeAdapter) else None
    try:
        if adapter is not None:
            return adapter.validate_python(data, context=context)
        if isinstance(model, type) and issubclass(model, BaseModel):
            return model.model_validate(data, context=context)
        return TypeAdapter(model).validate_python(data, context=context)
    except ValidationError as exc:
        err = exc.errors()[0]
        loc = [p for p in err["loc"]]
        line = _line_of(node, loc)
        field = ".".join(str(p) for p in loc) or "(document)"
        raise InputError(shown, line, field, err["msg"].removeprefix("Value error, ")) from None


def _compose_and_construct(shown: str, text: str) -> tuple[yaml.Node | None, Any]:
    """The node tree of ``text`` (for line numbers) and the data built from it.

    Duplicate keys are looked for in between: building the data folds each merge key's
    mappings into the mapping holding it, where a key that overrides a merged one would
    then look like a duplicate.
    """
    loader = LOADER(text)
    try:
        node = loader.get_single_node()
        _refuse_duplicate_keys(shown, node)
        return node, None if node is None else loader.construct_document(node)
    finally:
        loader.dispose()


def _refuse_deep_or_huge(shown: str, text: str) -> None:
    """Raise InputError where collections nest deeper than :data:`MAX_DEPTH` or aliases
    expand to more than :data:`MAX_ALIAS_NODES` nodes.

    Both are checked in one pass over the flat stream of parse events, before any node
    tree is built: building it recurses once per level (libyaml's composer would overflow
    the C stack), and everything that walks the built data (the duplicate-key check,
    pydantic) visits an aliased node once per alias. An anchored node's size is the count
    of nodes between its start and end events, its own aliases expanded.
    """
    depth = 0
    nodes = 0  # nodes so far, aliases expanded
    added = 0  # of which added by aliases
    open_anchors: list[tuple[str | None, int]] = []  # (anchor, nodes before it) per collection
    sizes: dict[str, int] = {}  # expanded size of each anchored node
    for event in yaml.parse(text, Loader=LOADER):
        if isinstance(event, yaml.AliasEvent):
            size = sizes.get(event.anchor or "", 0)
            nodes += size
            added += size
            if added > MAX_ALIAS_NODES:
                line = event.start_mark.line + 1 if event.start_mark else None
                problem = f"aliases expand to over {MAX_ALIAS_NODES:,} nodes (an alias bomb?)"
                raise InputError(shown, line, None, f"invalid YAML: {problem}")
        elif isinstance(event, yaml.ScalarEvent):
            nodes += 1
            if event.anchor:
                sizes[event.anchor] = 1
        elif isinstance(event, yaml.CollectionStartEvent):
            depth += 1
            if depth > MAX_DEPTH:
                line = event.start_mark.line + 1 if event.start_mark else None
                raise InputError(shown, line, None, f"invalid YAML: {TOO_DEEP}")
            open_anchors.append((event.anchor, nodes))
            nodes += 1
        elif isinstance(event, yaml.CollectionEndEvent):
            depth -= 1
            anchor, before = open_anchors.pop()
            if anchor:
                sizes[anchor] = nodes - before


def _refuse_duplicate_keys(shown: str, root: yaml.Node | None) -> None:
    """Raise InputError at the second of two equal keys in one mapping (YAML keeps the last
    silently; JSON input is YAML here, so this covers JSON's duplicate keys too). A node
    that several aliases share is visited once, under the first path that reaches it."""
    stack = [(root, "")]
    seen_nodes: set[int] = set()
    while stack:
        node, path = stack.pop()
        if id(node) in seen_nodes:
            continue
        seen_nodes.add(id(node))
        if isinstance(node, yaml.MappingNode):
            seen: set[str] = set()
            for key, value in node.value:
                name = str(key.value) if isinstance(key, yaml.ScalarNode) else None
                here = f"{path}.{name}" if path else str(name)
                if name is not None and name != "<<":
                    if name in seen:
                        line = key.start_mark.line + 1
                        raise InputError(shown, line, here, "duplicate key in one mapping")
                    seen.add(name)
                stack.append((value, here))
        elif isinstance(node, yaml.SequenceNode):
            stack += [
                (item, f"{path}.{i}" if path else str(i)) for i, item in enumerate(node.value)
            ]


def _line_of(node: yaml.Node | None, loc: list[Any]) -> int | None:
    """The 1-based line of the deepest YAML node that ``loc`` reaches."""
    if node is None:
        return None
    line = node.start_mark.line + 1
    for key in loc:
        if isinstance(node, yaml.MappingNode):
            match = next((kv for kv in node.value if kv[0].value == str(key)), None)
            if match is None:
                break
            key_node, node = match
            line = key_node.start_mark.line + 1
        elif isinstance(node, yaml.SequenceNode) and isinstance(key, int):
            if key >= len(node.value):
                break
            node = node.value[key]
            line = node.start_mark.line + 1
        else:
            break
    return line
