"""Lease arithmetic on the client's clock. No I/O, no threads.

The gateway starts a lease at its own "now", which is after the claim (or renewal) left the
client. So "when the request was sent + lease_ms" can only fall before the gateway's end, never
after, and needs no clock shared with the authority. The safety margin covers what that bound
leaves out: a later protected request's own transit to the gateway, and the two clocks running
at slightly different rates.
"""

from __future__ import annotations

import random
import time
from dataclasses import dataclass


def lease_clock() -> float:
    """Seconds on a clock that never steps and keeps counting through a suspend.

    CLOCK_MONOTONIC stops while a Linux machine (or VM) is suspended, but the authority's lease
    does not; CLOCK_BOOTTIME counts that time too. Elsewhere, the monotonic clock.
    """
    return time.clock_gettime(_CLOCK)


_CLOCK = getattr(time, "CLOCK_BOOTTIME", time.CLOCK_MONOTONIC)

# The shortest renewal period's jitter: each renewal is sent between 75% and 100% of a third of
# the lease after the last one, so a fleet claimed together does not renew together, and the
# jitter only ever makes a renewal earlier.
_JITTER_FLOOR = 0.75


def default_safety_margin_ms(lease_ms: int) -> int:
    """One second, or a quarter of a short lease."""
    return min(1000, lease_ms // 4)


@dataclass(frozen=True)
class LeaseTerms:
    lease_ms: int
    safety_margin_ms: int

    @staticmethod
    def of(lease_ms: int, safety_margin_ms: int | None = None) -> "LeaseTerms":
        if not isinstance(lease_ms, int) or isinstance(lease_ms, bool) or lease_ms < 1:
            raise ValueError(f"lease_ms must be an integer >= 1, not {lease_ms!r}")
        if safety_margin_ms is None:
            safety_margin_ms = default_safety_margin_ms(lease_ms)
        if not isinstance(safety_margin_ms, int) or isinstance(safety_margin_ms, bool) \
                or not 0 <= safety_margin_ms < lease_ms:
            raise ValueError(f"safety_margin_ms must be an integer from 0 to lease_ms - 1 "
                             f"({lease_ms - 1}), not {safety_margin_ms!r}")
        return LeaseTerms(lease_ms, safety_margin_ms)

    def deadline(self, sent_at: float) -> float:
        """The last moment (lease clock) at which the lease is certainly still held, given a
        claim or renewal the gateway granted that was sent at `sent_at`."""
        return sent_at + (self.lease_ms - self.safety_margin_ms) / 1000

    def extend(self, deadline: float, sent_at: float) -> float:
        """The deadline after a granted renewal sent at `sent_at`. A renewal never shortens a
        lease (docs/api.md, renew), so neither does this."""
        return max(deadline, self.deadline(sent_at))

    def next_renewal(self, sent_at: float, rng: random.Random) -> float:
        """When to renew after a claim or renewal sent at `sent_at`: a third of the lease, less
        up to a quarter of that as jitter."""
        period = self.lease_ms / 3000
        return sent_at + period * rng.uniform(_JITTER_FLOOR, 1.0)


def is_live(deadline: float, now: float) -> bool:
    """Whether the lease can still be relied on at `now`."""
    return now < deadline
