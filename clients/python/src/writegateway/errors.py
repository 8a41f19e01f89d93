"""Everything the client raises: one class per gateway code, and the client's own refusals.

Bad arguments are ValueError or TypeError, raised before anything is sent. Everything else
derives from WriteGatewayError:

- GatewayError: the gateway answered with a refusal code (one subclass per code in docs/api.md's
  "Codes" table), carrying the HTTP status, the problem body and the X-Request-Id.
- OutcomeUnknown: a mutation may or may not have acted (`unknown_outcome`, or a reply lost after
  the request was sent). Never resent; `.wait()` reads the receipt until the gateway knows.
- LeaseLost: the task's lease may have ended, so the client refused to send.
- NotExecuted: the gateway settled the operation as never executed; the same operation id may be
  sent again, deliberately.
- TransportError: the gateway could not be reached (or its reply was lost on a call that is not
  a mutation).
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any, Callable

if TYPE_CHECKING:
    from .results import MutationResult


class WriteGatewayError(Exception):
    """Base of every error the client raises other than ValueError and TypeError."""


class TransportError(WriteGatewayError):
    """No reply from the gateway. `sent` says whether any request byte may have left."""

    def __init__(self, message: str, *, sent: bool):
        super().__init__(message)
        self.sent = sent


class ProtocolError(WriteGatewayError):
    """The gateway's reply does not have the shape docs/api.md gives it."""


class LeaseLost(WriteGatewayError):
    """The lease may have ended: nothing was sent. Claim the task again to go on."""


class NotExecuted(WriteGatewayError):
    """The gateway settled the operation as not executed (from evidence, or a resolve).

    Nothing happened at the provider. Sending the same operation id again is recovery, not a
    second action, but it is the caller's decision: the client never resends on its own.
    """

    def __init__(self, message: str, *, operation_id: str, receipt: Any):
        super().__init__(message)
        self.operation_id = operation_id
        self.receipt = receipt


class GatewayError(WriteGatewayError):
    """A reply whose Gateway-Status is a refusal. Subclasses name the code."""

    code: str = ""

    def __init__(self, *, status: int | None, code: str, problem: dict | None,
                 body: bytes | None, request_id: str | None, retry_after: float | None = None):
        detail = (problem or {}).get("detail") or (problem or {}).get("title") or ""
        head = code if status is None else f"{status} {code}"
        super().__init__(head + (f": {detail}" if detail else ""))
        self.status = status
        self.code = code
        self.problem = problem
        self.body = body
        self.request_id = request_id
        self.retry_after = retry_after


class OutcomeUnknown(WriteGatewayError):
    """The mutation may have acted at the provider, and the gateway does not know yet.

    Raised for `unknown_outcome`, and for a reply lost after the request was sent (a timeout, a
    reset). The client never resends it. `wait()` reads the operation's receipt (with backoff)
    until the gateway has settled it, then returns the MutationResult or raises what it became
    (RejectedByProvider, NotExecuted). If the lease ends first, claim the task again and call
    `task.outcome(operation_id)` on the new handle.
    """

    code = "unknown_outcome"

    def __init__(self, message: str, *, operation_id: str,
                 waiter: Callable[[float | None], "MutationResult"],
                 status: int | None = None, problem: dict | None = None,
                 request_id: str | None = None, receipt: Any = None):
        super().__init__(message)
        self.operation_id = operation_id
        self.status = status
        self.problem = problem
        self.request_id = request_id
        self.receipt = receipt
        self._waiter = waiter

    def wait(self, timeout: float | None = None) -> "MutationResult":
        """Block until the outcome is known (or `timeout` seconds pass: OutcomeUnknown again)."""
        return self._waiter(timeout)


# The gateway's refusal codes (docs/api.md, "Codes"), grouped the way a caller reacts to them.

class GrantRefused(GatewayError):
    """The grant is not the task's current, unexpired one: this handle can do nothing more."""


class InvalidGrant(GrantRefused):
    code = "invalid_grant"


class AuthorityGenerationMismatch(GrantRefused):
    """The grant is from another realm (the authority was restored or rotated)."""
    code = "authority_generation_mismatch"


class ScopeMismatch(GrantRefused):
    code = "scope_mismatch"


class StaleOwner(GrantRefused):
    """Another owner (or a later claim) holds the task now."""
    code = "stale_owner"


class ExpiredOwner(GrantRefused):
    """The lease ended in authority time."""
    code = "expired_owner"


class Busy(GatewayError):
    """An unexpired lease is held, by anyone (this owner included): claim again after it ends."""
    code = "busy"


class EpochExhausted(GatewayError):
    code = "epoch_exhausted"


class InvalidRequest(GatewayError):
    code = "invalid_request"


class Unauthenticated(GatewayError):
    code = "unauthenticated"


class Forbidden(GatewayError):
    code = "forbidden"


class NotFound(GatewayError):
    code = "not_found"


class MethodNotAllowed(GatewayError):
    code = "method_not_allowed"


class PayloadTooLarge(GatewayError):
    code = "payload_too_large"


class MissingIdempotencyKey(GatewayError):
    code = "missing_idempotency_key"


class MissingExpectedVersion(GatewayError):
    code = "missing_expected_version"


class OperationConflict(GatewayError):
    """This operation id was used with another payload (or another Expected-Version)."""
    code = "operation_conflict"


class OperationInFlight(GatewayError):
    """An earlier attempt of this operation is being forwarded now."""
    code = "operation_in_flight"


class UnresolvedOperation(GatewayError):
    """Another operation of the task is held until its outcome is known."""
    code = "unresolved_operation"


class VersionConflict(GatewayError):
    """Expected-Version is not the task's business version: re-read, then decide again."""
    code = "version_conflict"


class VersionExhausted(GatewayError):
    code = "version_exhausted"


class ResolvedWithoutReply(GatewayError):
    """Settled from evidence: there is no provider reply to replay (the receipt says what)."""
    code = "resolved_without_reply"


class OperationNotHeld(GatewayError):
    code = "operation_not_held"


class AuthorityUnavailable(GatewayError):
    """The gateway had no authoritative answer; nothing was forwarded. Retry after Retry-After."""
    code = "authority_unavailable"


class AuthorityClockRollback(GatewayError):
    code = "authority_clock_rollback"


class ProviderUnavailable(GatewayError):
    """The provider was not reached, or answered "not executed" (408/429): nothing happened."""
    code = "provider_unavailable"


class InternalError(GatewayError):
    code = "internal_error"


class RejectedByProvider(GatewayError):
    """The provider definitively refused the mutation; the refusal is recorded.

    `status` and `body` are the provider's (`body` is None when the outcome came from the
    receipt). `replayed` is true when this is the recorded reply of an earlier attempt.
    """

    code = "rejected_by_provider"

    def __init__(self, *, replayed: bool = False, headers: tuple = (), **kwargs):
        super().__init__(**kwargs)
        self.replayed = replayed
        self.headers = headers


def _refusal_classes() -> dict[str, type[GatewayError]]:
    table: dict[str, type[GatewayError]] = {}
    pending = list(GatewayError.__subclasses__())
    while pending:
        cls = pending.pop()
        pending.extend(cls.__subclasses__())
        if cls.code:
            table[cls.code] = cls
    return table


# Every refusal code, to its class. `unknown_outcome` is OutcomeUnknown, which is built by the
# task (it needs a way to wait), never from this table.
REFUSALS: dict[str, type[GatewayError]] = _refusal_classes()

# Codes that mean the request did what was asked.
SUCCESSES = frozenset({"ok", "granted", "renewed", "released", "committed", "historical_retry",
                       "resolved", "revoked", "realm_rotated"})


def parse_problem(body: bytes) -> dict | None:
    try:
        value = json.loads(body)
    except (ValueError, UnicodeDecodeError):
        return None
    return value if isinstance(value, dict) else None


def refusal(*, status: int, code: str | None, body: bytes, request_id: str | None,
            retry_after: float | None = None) -> GatewayError:
    """The typed error for a refusal reply. An unknown or missing code is a plain GatewayError."""
    code = code or ""
    cls = REFUSALS.get(code, GatewayError)
    return cls(status=status, code=code or "(no Gateway-Status)", problem=parse_problem(body),
               body=body, request_id=request_id, retry_after=retry_after)

__all__ = sorted(name for name, value in list(globals().items())
                 if isinstance(value, type) and issubclass(value, WriteGatewayError))
