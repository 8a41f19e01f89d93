"""What to do after each answer: docs/api.md's "What an agent may retry", as data. No I/O.

The one rule behind the table: a request is sent again only when the gateway has said, or the
socket proves, that it did not act on it. A mutation that may have reached the provider (a
timeout or reset after sending, `unknown_outcome`) is never sent again by the client: its
outcome is read from the receipt instead.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from email.utils import parsedate_to_datetime
from enum import Enum


class Call(Enum):
    CLAIM = "claim"
    RENEW = "renew"
    RELEASE = "release"
    MUTATE = "mutate"
    RECEIPT = "receipt"


class Action(Enum):
    DONE = "done"                    # the answer is final: return it or raise it
    RETRY = "retry"                  # send the same request again (same key and bytes), later
    AWAIT_RECEIPT = "await_receipt"  # it may have acted: never resend; read the receipt
    GIVE_UP = "give_up"              # retryable, but the budget (or Retry-After) is spent


# Codes after which the exact request may go again. Every code absent from a call's set is
# final for it, except those in AWAIT below.
_RETRY_CODES: dict[Call, frozenset[str]] = {
    # A claim refused with 503 may still have committed a grant whose token was lost; its retry
    # then gets `busy` until that lease ends, which is safe (docs/operations.md).
    Call.CLAIM: frozenset({"authority_unavailable"}),
    # Renewals never shorten a lease, and releases end only this grant: both are idempotent.
    Call.RENEW: frozenset({"authority_unavailable", "internal_error", ""}),
    Call.RELEASE: frozenset({"authority_unavailable", "internal_error", ""}),
    # Nothing was forwarded (503), the earlier attempt is still being forwarded and its answer
    # will be the ledger's (in flight), or the provider did not execute it (502 not_executed).
    Call.MUTATE: frozenset({"authority_unavailable", "operation_in_flight",
                            "provider_unavailable"}),
    Call.RECEIPT: frozenset({"authority_unavailable", "internal_error", ""}),
}

# Mutation answers that do not say what happened at the provider. `""` is a reply without
# Gateway-Status: not the gateway's application speaking, so nothing about the ledger is known.
_AWAIT_CODES = frozenset({"unknown_outcome", "resolved_without_reply", "internal_error", ""})

# Calls whose request can be sent again after the reply was lost in transit: reads, and
# ownership calls that cannot act twice. A claim lost after sending may have granted a lease.
_RESEND_AFTER_SENT = frozenset({Call.RENEW, Call.RELEASE, Call.RECEIPT})


def action_for_reply(call: Call, code: str | None) -> Action:
    """What the table says about a reply whose Gateway-Status is `code` (None: absent)."""
    code = code or ""
    if code in _RETRY_CODES[call]:
        return Action.RETRY
    if call is Call.MUTATE and code in _AWAIT_CODES:
        return Action.AWAIT_RECEIPT
    return Action.DONE


def action_for_failure(call: Call, *, sent: bool) -> Action:
    """What the table says when no reply came. `sent`: a request byte may have left."""
    if not sent:
        return Action.RETRY  # the connection never opened: the gateway saw nothing
    if call in _RESEND_AFTER_SENT:
        return Action.RETRY
    return Action.AWAIT_RECEIPT if call is Call.MUTATE else Action.DONE


@dataclass(frozen=True)
class RetryPolicy:
    """How many times, and how far apart. Seconds throughout."""

    max_attempts: int = 6          # attempts of one call, the first included
    base_delay: float = 0.2        # the first backoff's ceiling; it doubles with each attempt
    max_delay: float = 5.0         # no backoff ceiling grows past this
    max_retry_after: float = 60.0  # a longer Retry-After is handed to the caller instead

    def __post_init__(self):
        if not isinstance(self.max_attempts, int) or isinstance(self.max_attempts, bool) \
                or self.max_attempts < 1:
            raise ValueError(f"max_attempts must be an integer >= 1, not {self.max_attempts!r}")
        for name in ("base_delay", "max_delay", "max_retry_after"):
            value = getattr(self, name)
            if not isinstance(value, (int, float)) or isinstance(value, bool) or value < 0:
                raise ValueError(f"{name} must be a number of seconds >= 0, not {value!r}")
        if self.max_delay < self.base_delay:
            raise ValueError("max_delay must not be below base_delay")


def backoff(policy: RetryPolicy, attempt: int, rng: random.Random) -> float:
    """The pause after the `attempt`-th try (1-based): exponential, with "equal" jitter.

    Half the ceiling is fixed and half random, so many clients that failed together spread
    out, and none comes back at once.
    """
    ceiling = min(policy.max_delay, policy.base_delay * 2 ** min(attempt - 1, 60))
    return ceiling / 2 + rng.uniform(0, ceiling / 2)


def retry_delay(policy: RetryPolicy, attempt: int, retry_after: float | None,
                rng: random.Random) -> float:
    """Backoff, but never sooner than the server's Retry-After."""
    return max(backoff(policy, attempt, rng), retry_after or 0.0)


@dataclass(frozen=True)
class Decision:
    action: Action
    delay: float = 0.0


def decide(call: Call, attempt: int, policy: RetryPolicy, rng: random.Random, *,
           code: str | None = None, failed: bool = False, sent: bool = False,
           retry_after: float | None = None) -> Decision:
    """The next step after the `attempt`-th try of a bounded call: a reply's `code`, or a
    failure (`failed`, with `sent` saying whether a request byte may have left)."""
    action = action_for_failure(call, sent=sent) if failed else action_for_reply(call, code)
    if action is not Action.RETRY:
        return Decision(action)
    if attempt >= policy.max_attempts:
        return Decision(Action.GIVE_UP)
    if retry_after is not None and retry_after > policy.max_retry_after:
        return Decision(Action.GIVE_UP)
    return Decision(Action.RETRY, retry_delay(policy, attempt, retry_after, rng))


def parse_retry_after(value: str | None, now_epoch: float) -> float | None:
    """Seconds to wait from a Retry-After header (delta-seconds or an HTTP-date), or None."""
    if value is None:
        return None
    value = value.strip()
    if value.isascii() and value.isdigit():
        return float(int(value))
    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError):
        return None
    if when.tzinfo is None:
        return None  # RFC 9110 dates are GMT; one without a zone is not one
    return max(0.0, when.timestamp() - now_epoch)
