"""A claimed task: its lease kept alive, and the only way to mutate a provider through it."""

from __future__ import annotations

import json
import threading
import time
from typing import Any

from . import outcomes, wire
from .errors import (GatewayError, GrantRefused, LeaseLost, OutcomeUnknown, TransportError,
                     WriteGatewayError)
from .gateway import Gateway, new_request_id
from .keepalive import KeepAlive
from .lease import LeaseTerms
from .results import MutationResult, Receipt
from .retry import Action, Call, backoff, decide
from .transport import Reply


class Task:
    """Made by Gateway.claim(). Use it as a context manager; the lease is released on exit.

    `lease_lost` is set as soon as a renewal is refused or the lease's end can no longer be
    ruled out; from then on mutate() sends nothing and raises LeaseLost. `version` is the
    task's business version as this handle last learned it; mutate() sends it as
    Expected-Version.
    """

    def __init__(self, gateway: Gateway, tenant: str, task: str, owner: str,
                 terms: LeaseTerms, *, grant: dict, grant_token: str, version: int,
                 sent_at: float):
        self.gateway = gateway
        self.tenant = tenant
        self.task = task
        self.owner = owner
        self.terms = terms
        self.grant = grant
        self._grant_token = grant_token
        self._lock = threading.Lock()
        self._version = version
        # The Expected-Version each operation id was first sent with: it is part of the
        # operation's fingerprint, so sending the same id again must repeat it.
        self._pinned: dict[str, int] = {}
        self._released = False
        renew_target = wire.task_target(gateway.base, tenant, task, "renew")
        renew_body = json.dumps({"grant_token": grant_token, "lease_ms": terms.lease_ms}).encode()
        self._keepalive = KeepAlive(
            terms=terms, sent_at=sent_at,
            renew=lambda timeout: gateway._exchange("POST", renew_target, body=renew_body,
                                                    timeout=timeout),
            refusal=gateway._refusal, retry_after=gateway._retry_after, policy=gateway.retry,
            rng=gateway._rng, max_timeout=gateway.timeout, name=f"lease {tenant}/{task}")
        self.lease_lost = self._keepalive.lost
        self._keepalive.start()

    def __repr__(self) -> str:
        return (f"Task({self.tenant!r}, {self.task!r}, owner={self.owner!r}, "
                f"epoch={self.grant.get('epoch')!r})")  # never the grant token

    def __enter__(self) -> "Task":
        return self

    def __exit__(self, exc_type, exc, tb) -> bool:
        try:
            self.release()
        except WriteGatewayError:
            if exc_type is None:
                raise  # otherwise the body's own exception matters more; the lease will end
        return False

    @property
    def version(self) -> int:
        with self._lock:
            return self._version

    @property
    def lost_reason(self) -> str | None:
        return self._keepalive.reason

    def ensure_live(self) -> None:
        """Raise LeaseLost unless the lease is certainly still held."""
        self._keepalive.check()

    def release(self) -> None:
        """End the lease now. Later calls do nothing; mutate() refuses from the first one on.

        Once the lease is lost nothing is sent: the lease may be over, and if it is not, it
        ends by itself within the safety margin.
        """
        with self._lock:
            if self._released:
                return
            self._released = True
        if self.lease_lost.is_set():
            return  # the lease may be over already, and a process that lost it sends nothing
        self._keepalive.mark_lost("the task was released")
        target = wire.task_target(self.gateway.base, self.tenant, self.task, "release")
        body = json.dumps({"grant_token": self._grant_token}).encode()
        reply = self.gateway._bounded(Call.RELEASE, "POST", target, body=body)
        if reply.code == "released":
            return
        error = self.gateway._refusal(reply)
        if not isinstance(error, GrantRefused):  # a lease already over needs no release
            raise error

    def mutate(self, provider: str, method: str, path: str, body: Any = None,
               operation_id: str | None = None, *, content_type: str | None = None,
               outcome_wait: float | None = None,
               timeout: float | None = None) -> MutationResult:
        """Send one protected mutation through the gateway, at most once at the provider.

        `operation_id` names the intent: the same id with the same request is the same action
        (replayed, never repeated); another action needs another id. `body` is bytes, str, or
        a JSON value (sent compact with sorted keys). Retries follow docs/api.md's table with
        the same key and bytes. When the outcome is unknown, waits up to `outcome_wait`
        seconds (default: the gateway's) for the receipt, then raises OutcomeUnknown.
        `timeout` bounds each socket operation of this request (default: the gateway's); when
        it runs out after sending, the outcome is read from the receipt, never resent.

        Returns only when the provider executed it. Raises RejectedByProvider when the
        provider refused it, LeaseLost (nothing sent) when the lease may be over, OutcomeUnknown
        also when the lease ended while the request was being forwarded (the gateway recorded
        its outcome: read it with outcome() on a new claim), and the gateway's refusal otherwise
        (VersionConflict, StaleOwner, ...).
        """
        wire.label("provider", provider)
        wire.mutation_method(method)
        wire.label("operation_id", operation_id)
        wait = self.gateway.outcome_wait if outcome_wait is None else outcome_wait
        if not isinstance(wait, (int, float)) or isinstance(wait, bool) or wait < 0:
            raise ValueError(f"outcome_wait must be a number of seconds >= 0, not {wait!r}")
        if timeout is not None and (not isinstance(timeout, (int, float))
                                    or isinstance(timeout, bool) or timeout <= 0):
            raise ValueError(f"timeout must be a number of seconds > 0, not {timeout!r}")
        payload, ctype = wire.encode_body(body, content_type)
        target = wire.proxy_target(self.gateway.base, self.tenant, self.task, provider, path)
        with self._lock:
            expected = self._pinned.get(operation_id, self._version)
        headers = {"Fence-Grant": self._grant_token, "Idempotency-Key": operation_id,
                   "Expected-Version": str(expected)}
        if ctype:
            headers["Content-Type"] = ctype
        request_id = new_request_id()
        forwarding = False  # an earlier attempt is being forwarded: its outcome is pending
        attempt = 0
        while True:
            attempt += 1
            try:
                # Checked before connecting (a lost lease opens no connection), and again once
                # connected, the last thing before the first byte (a connect can take long).
                self._keepalive.check()
                reply = self.gateway._exchange(method, target, headers=headers, body=payload,
                                               request_id=f"{request_id}-{attempt}",
                                               timeout=timeout,
                                               before_send=self._keepalive.check)
            except LeaseLost as lost:
                if forwarding:
                    raise self._unknown(operation_id, f"{lost}, and an earlier attempt was "
                                        "still being forwarded") from lost
                raise
            except TransportError as error:
                step = decide(Call.MUTATE, attempt, self.gateway.retry, self.gateway._rng,
                              failed=True, sent=error.sent)
                if step.action is Action.AWAIT_RECEIPT:
                    self._pin(operation_id, expected)
                    return self._await(operation_id, wait, f"the reply was lost after the "
                                       f"request was sent ({error})", cause=error)
                if step.action is not Action.RETRY:
                    if forwarding:
                        return self._await(operation_id, wait, str(error), cause=error)
                    raise
            else:
                retry_after = self.gateway._retry_after(reply)
                step = decide(Call.MUTATE, attempt, self.gateway.retry, self.gateway._rng,
                              code=reply.code, retry_after=retry_after)
                if reply.code in ("operation_in_flight", "provider_unavailable"):
                    self._pin(operation_id, expected)  # the ledger holds it under this version
                    forwarding = forwarding or reply.code == "operation_in_flight"
                if step.action is Action.DONE:
                    return self._finish(operation_id, expected, reply)
                if step.action is Action.AWAIT_RECEIPT or (
                        forwarding and step.action is Action.GIVE_UP):
                    self._pin(operation_id, expected)
                    return self._await(operation_id, wait, _describe(reply), reply=reply)
                if step.action is Action.GIVE_UP:
                    raise self._refused(reply)
            # Sleep on the lease: if it is lost meanwhile, the next check says so at once.
            self._keepalive.lost.wait(step.delay)

    def outcome(self, operation_id: str, timeout: float | None = None) -> MutationResult:
        """Wait for an operation's receipt to settle (None: no limit), reading it with backoff.

        Returns the MutationResult of an executed operation (`source == "receipt"`, no body);
        raises RejectedByProvider, NotExecuted, or OutcomeUnknown when `timeout` passes or the
        receipt cannot be read with this grant any more.
        """
        wire.label("operation_id", operation_id)
        if timeout is not None and (not isinstance(timeout, (int, float))
                                    or isinstance(timeout, bool) or timeout < 0):
            raise ValueError(f"timeout must be a number of seconds >= 0 or None, not {timeout!r}")
        give_up_at = None if timeout is None else time.monotonic() + timeout
        last: Receipt | None = None
        reads = 0
        pause = threading.Event()  # never set: a timer to sleep on
        while True:
            reads += 1
            try:
                receipt, retry_after = self._read_receipt(operation_id)
            except GatewayError as error:
                raise self._unknown(operation_id, f"the receipt could not be read ({error}); "
                                    "the outcome stays unknown to this grant: claim the task "
                                    "again and call outcome() on the new handle",
                                    receipt=last) from error
            if receipt is not None:
                last = receipt
                if receipt.settled:
                    return self._from_receipt(receipt)
            delay = max(backoff(self.gateway.retry, reads, self.gateway._rng), retry_after or 0)
            if give_up_at is not None and time.monotonic() + delay > give_up_at:
                state = last.state if last else "no record of it yet"
                raise self._unknown(operation_id, f"still {state} after waiting", receipt=last)
            pause.wait(delay)

    def receipt(self, operation_id: str) -> Receipt | None:
        """The operation's receipt now, or None when the gateway has no record of it."""
        wire.label("operation_id", operation_id)
        return self._read_receipt(operation_id)[0]

    # What the answers mean.

    def _read_receipt(self, operation_id: str) -> tuple[Receipt | None, float | None]:
        """One read. (None, retry_after) when there is no record yet or no answer now; raises
        the refusal when this grant may not read it."""
        target = wire.task_target(self.gateway.base, self.tenant, self.task, "operations",
                                  operation_id)
        try:
            reply = self.gateway._exchange("GET", target,
                                           headers={"Fence-Grant": self._grant_token})
        except TransportError:
            return None, None
        if reply.code == "ok":
            return Receipt.parse(reply.body), None
        if reply.code == "not_found":
            return None, None
        if decide(Call.RECEIPT, 1, self.gateway.retry, self.gateway._rng,
                  code=reply.code).action is not Action.DONE:
            return None, self.gateway._retry_after(reply)
        raise self._refused(reply)

    def _finish(self, operation_id: str, expected: int, reply: Reply) -> MutationResult:
        if reply.code not in outcomes.PROVIDER_ANSWERS:
            error = self._refused(reply)
            recorded = (error.problem or {}).get("outcome_recorded") is True
            if isinstance(error, GrantRefused) and recorded:
                # The lease ended while the request was forwarded: it went out, and what became
                # of it is recorded. Not "nothing was done": acting again under a new id could
                # act twice. It is read with a new grant instead.
                raise self._unknown(
                    operation_id, f"{error}; the request was forwarded and its outcome recorded: "
                    f"claim the task again and call outcome({operation_id!r}) on the new handle",
                    reply=reply, problem=error.problem) from error
            raise error
        self._pin(operation_id, expected)  # recorded: sending the id again must repeat it
        result = outcomes.from_reply(operation_id, reply)
        self._learn(result.committed_version)
        return result

    def _from_receipt(self, receipt: Receipt) -> MutationResult:
        result = outcomes.from_receipt(receipt)
        self._learn(result.committed_version)
        return result

    def _await(self, operation_id: str, wait: float, why: str, *, reply: Reply | None = None,
               cause: BaseException | None = None) -> MutationResult:
        """The outcome may be anything: read the receipt for up to `wait`, never resend."""
        problem = None
        if reply is not None:
            problem = self.gateway._refusal(reply).problem
        if wait > 0:
            try:
                return self.outcome(operation_id, wait)
            except OutcomeUnknown as still:
                raise self._unknown(operation_id, f"{why}; {still}", receipt=still.receipt,
                                    reply=reply, problem=problem) from cause or still
        raise self._unknown(operation_id, why, reply=reply, problem=problem) from cause

    def _unknown(self, operation_id: str, why: str, *, receipt: Receipt | None = None,
                 reply: Reply | None = None, problem: dict | None = None) -> OutcomeUnknown:
        return OutcomeUnknown(f"operation {operation_id!r}: outcome unknown: {why}",
                              operation_id=operation_id,
                              waiter=lambda timeout: self.outcome(operation_id, timeout),
                              status=reply.status if reply else None, problem=problem,
                              request_id=reply.request_id if reply else None, receipt=receipt)

    def _refused(self, reply: Reply) -> GatewayError:
        error = self.gateway._refusal(reply)
        if isinstance(error, GrantRefused):
            self._keepalive.mark_lost(f"the gateway refused the grant: {error}", error)
        return error

    def _pin(self, operation_id: str, expected: int) -> None:
        with self._lock:
            self._pinned.setdefault(operation_id, expected)

    def _learn(self, committed_version: int) -> None:
        with self._lock:
            self._version = max(self._version, committed_version)


def _describe(reply: Reply) -> str:
    return f"the gateway answered {reply.status} {reply.code or '(no Gateway-Status)'}"
