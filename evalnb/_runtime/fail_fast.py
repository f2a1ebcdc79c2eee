"""Fail fast: stop a run whose provider is down, never one that is only flaky.

An attempt *could not reach* its provider when its error begins
:data:`~evalnb._runtime.agent.UNREACHABLE` (the SDK's retries all failed to connect or
timed out); any other ending (success, an HTTP error answer, a bad answer, a failed
check) *reached* it. Attempts run concurrently and finish in any order, so a burst of
slow failures can end together on a healthy server: a streak alone proves nothing.

The rule: a run stops (status ``partial``) when the last :data:`FAIL_FAST_AFTER`
attempts to finish could not reach the provider **and** no attempt has reached it for
the last :data:`WINDOW_S` seconds, or not once since the run began (or resumed) when
that is shorter: an endpoint never reached is down, one that answered a moment ago is
not. When the attempt that trips the rule is the run's last, nothing is stopped: the
run finalizes (``complete``, with its tables), its errored attempts counted.

Example:
    >>> watch = FailFast()
    >>> [watch.down(reached=False) for _ in range(FAIL_FAST_AFTER)]  # never reached
    [False, False, False, False, True]
    >>> watch = FailFast()
    >>> watch.down(reached=True)
    False
    >>> [watch.down(reached=False) for _ in range(FAIL_FAST_AFTER)]  # reached just now
    [False, False, False, False, False]
"""

from __future__ import annotations

import time
from dataclasses import dataclass

FAIL_FAST_AFTER = 5
"""Attempts in a row, in the order they finish, that could not reach the provider."""
WINDOW_S = 30.0
"""How long no attempt may reach a provider that was reached before (with
:data:`FAIL_FAST_AFTER` failures in a row) before the run stops."""


@dataclass
class FailFast:
    """The fail-fast state of one run in one process (see the module docstring)."""

    failures: int = 0
    last_reached: float | None = None

    def down(self, *, reached: bool) -> bool:
        """Count one finished attempt; True when the provider looks down (stop the run)."""
        now = time.monotonic()
        if reached:
            self.failures, self.last_reached = 0, now
            return False
        self.failures += 1
        quiet = self.last_reached is None or now - self.last_reached >= WINDOW_S
        return self.failures >= FAIL_FAST_AFTER and quiet
