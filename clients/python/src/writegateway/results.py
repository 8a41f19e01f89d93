"""What a successful mutation returns, and an operation's receipt as the gateway keeps it."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from .errors import ProtocolError


@dataclass(frozen=True)
class Receipt:
    """`GET .../operations/{id}` (docs/api.md, "operation receipt")."""

    id: str
    state: str  # in_flight, unknown, succeeded, rejected, not_executed
    attempts: int
    committed_version: int | None
    response: dict | None    # {"status", "sha256", "length"} when a provider reply settled it
    resolution: dict | None  # {"source", "resolved_ms", "evidence"} when evidence settled it
    raw: dict

    SETTLED = frozenset({"succeeded", "rejected", "not_executed"})

    @property
    def settled(self) -> bool:
        return self.state in self.SETTLED

    @staticmethod
    def parse(body: bytes) -> "Receipt":
        try:
            operation = json.loads(body)["operation"]
            return Receipt(id=operation["id"], state=operation["state"],
                           attempts=operation["attempts"],
                           committed_version=operation["committed_version"],
                           response=operation.get("response"),
                           resolution=operation.get("resolution"), raw=operation)
        except (ValueError, KeyError, TypeError) as error:
            raise ProtocolError(f"the receipt does not have the documented shape: {error}") \
                from None


@dataclass(frozen=True)
class MutationResult:
    """A mutation the provider executed, exactly once.

    `body` and `headers` are the provider's reply. When that reply was lost and the outcome was
    read from the receipt instead (`source == "receipt"`), `body` is None: the gateway keeps
    only the reply's status and digest there (`receipt.response`).
    """

    operation_id: str
    status: int
    committed_version: int
    body: bytes | None
    headers: tuple[tuple[str, str], ...]
    replayed: bool  # the recorded reply of an earlier attempt (Idempotent-Replayed)
    source: str     # "reply" or "receipt"
    request_id: str | None
    receipt: Receipt | None = None

    def json(self) -> Any:
        if self.body is None:
            raise ValueError("no reply body: the outcome was read from the receipt")
        return json.loads(self.body)
