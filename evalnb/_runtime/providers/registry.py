"""The provider registry: turns a ``--model`` string into a provider.

Example:
    >>> resolve_provider("reference").model
    'reference'
"""

from __future__ import annotations

from pathlib import Path

from evalnb.errors import InputError
from evalnb.records.interfaces import Provider
from evalnb.records.run import Connection


def resolve_provider(
    spec: str,
    *,
    connection: Connection | None = None,
    seed: int = 7,
    sim_sleep: bool = False,
    origin: tuple[str | Path, str] = ("evalnb run", "--model"),
) -> Provider:
    """Turn a ``--model`` value into a provider.

    ``anthropic/<model>``, ``openai/<model>`` (``connection`` says how to reach them:
    ``base_url`` for an OpenAI-compatible server, ``anthropic_base_url`` for an
    Anthropic-compatible one, timeouts, retries), ``reference``, ``scripted:<file>``,
    ``replay:<run folder or bashkit-eval JSON>``, ``sim/<persona>``. A spec that names no
    model (or no persona) is an :class:`~evalnb.errors.InputError` at ``origin``: the file
    and field it was read from (``--model`` of ``evalnb run`` unless said otherwise).

    Example:
        >>> resolve_provider("reference").model
        'reference'
        >>> resolve_provider("gpt-5", origin=("runs/r1/run.json", "settings.spec"))
        Traceback (most recent call last):
        ...
        evalnb.errors.InputError: runs/r1/run.json: settings.spec: unknown model 'gpt-5': use \
anthropic/<model>, openai/<model>, reference, scripted:<file>, replay:<source> or sim/<persona>
    """
    if spec == "reference":
        from evalnb._runtime.providers.offline import ReferenceProvider

        return ReferenceProvider()
    if spec.startswith("scripted:"):
        from evalnb._runtime.providers.offline import ScriptedProvider

        return ScriptedProvider(spec.removeprefix("scripted:"))
    if spec.startswith("replay:"):
        from evalnb._runtime.providers.replay import ReplayProvider

        return ReplayProvider(spec.removeprefix("replay:"))
    if spec.startswith("sim/"):
        from evalnb._runtime.providers.sim import SimProvider

        try:
            return SimProvider(spec.removeprefix("sim/"), seed=seed, sleep=sim_sleep)
        except ValueError as exc:  # an unknown persona: the one value SimProvider refuses
            raise InputError(origin[0], None, origin[1], str(exc)) from None
    if spec.startswith("anthropic/"):
        from evalnb._runtime.providers import anthropic

        return anthropic.from_spec(spec.removeprefix("anthropic/"), connection or Connection())
    if spec.startswith("openai/"):
        from evalnb._runtime.providers import openai

        return openai.from_spec(spec.removeprefix("openai/"), connection or Connection())
    msg = (
        f"unknown model {spec!r}: use anthropic/<model>, openai/<model>, reference, "
        "scripted:<file>, replay:<source> or sim/<persona>"
    )
    raise InputError(origin[0], None, origin[1], msg)
