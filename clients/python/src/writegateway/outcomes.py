"""What a final answer means for the caller: a result, or the error it raises. No I/O.

Two sources: the gateway's reply to the mutation itself (committed, a replay, a provider's
refusal), and the operation's receipt when that reply is not to be had (lost, or settled from
evidence).
"""

from __future__ import annotations

from .errors import NotExecuted, ProtocolError, RejectedByProvider
from .results import MutationResult, Receipt
from .transport import Reply

# The reply codes that say what the provider did, as opposed to a refusal by the gateway.
PROVIDER_ANSWERS = frozenset({"committed", "historical_retry", "rejected_by_provider"})


def from_reply(operation_id: str, reply: Reply) -> MutationResult:
    """The result of a reply whose code is in PROVIDER_ANSWERS; RejectedByProvider for a
    refusal, first-hand or replayed (a replay of a success carries Committed-Version)."""
    replayed = reply.code == "historical_retry"
    committed = reply.header("Committed-Version")
    if reply.code == "committed" or (replayed and committed is not None):
        return MutationResult(operation_id=operation_id, status=reply.status,
                              committed_version=_version(committed), body=reply.body,
                              headers=reply.headers, replayed=replayed, source="reply",
                              request_id=reply.request_id)
    if reply.code not in PROVIDER_ANSWERS:
        raise ValueError(f"{reply.code!r} is not a provider's answer")
    raise RejectedByProvider(status=reply.status, code="rejected_by_provider", problem=None,
                             body=reply.body, request_id=reply.request_id, replayed=replayed,
                             headers=reply.headers)


def from_receipt(receipt: Receipt) -> MutationResult:
    """The result of a settled receipt: no body (the gateway keeps only the reply's status
    and digest), or the error for what the operation became."""
    status = receipt.response["status"] if receipt.response else None
    if receipt.state == "succeeded":
        if receipt.committed_version is None:
            raise ProtocolError("a succeeded receipt without committed_version")
        return MutationResult(operation_id=receipt.id, status=status,
                              committed_version=receipt.committed_version, body=None,
                              headers=(), replayed=False, source="receipt", request_id=None,
                              receipt=receipt)
    if receipt.state == "rejected":
        raise RejectedByProvider(status=status, code="rejected_by_provider", problem=None,
                                 body=None, request_id=None)
    if receipt.state == "not_executed":
        how = receipt.resolution["source"] if receipt.resolution else "the provider's answer"
        raise NotExecuted(f"operation {receipt.id!r} was not executed (settled by {how}); "
                          "the same operation id may be sent again", operation_id=receipt.id,
                          receipt=receipt)
    raise ValueError(f"the receipt is not settled: {receipt.state!r}")


def _version(value: str | None) -> int:
    if value is None or not value.isascii() or not value.isdigit():
        raise ProtocolError(f"the provider executed it, but the reply's Committed-Version is "
                            f"{value!r}; read the receipt for the version")
    return int(value)
