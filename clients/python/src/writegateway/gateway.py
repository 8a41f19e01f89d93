"""The gateway as one agent sees it: a base URL, an agent token, and claims of tasks."""

from __future__ import annotations

import json
import random
import secrets
import ssl
import threading
import time
from typing import Any

from . import wire
from .errors import ProtocolError, TransportError, refusal
from .lease import LeaseTerms, lease_clock
from .retry import Action, Call, RetryPolicy, decide, parse_retry_after
from .transport import Reply, exchange
from .wire import BaseUrl


class Gateway:
    """A connection-less handle on one gateway. Thread-safe; share one per process.

    `timeout` bounds each socket operation of each request, in seconds. `outcome_wait` is how
    long a mutation whose outcome is unknown waits for the receipt before raising
    OutcomeUnknown (0: raise at once). `retry` bounds the retries of docs/api.md's table.
    """

    def __init__(self, base_url: str, token: str, *, timeout: float = 30.0,
                 outcome_wait: float = 30.0, retry: RetryPolicy | None = None,
                 ssl_context: ssl.SSLContext | None = None, rng: random.Random | None = None):
        self.base = BaseUrl.parse(base_url)
        self._token = wire.token("token", token)
        self.timeout = _seconds("timeout", timeout, positive=True)
        self.outcome_wait = _seconds("outcome_wait", outcome_wait)
        self.retry = retry if retry is not None else RetryPolicy()
        if not isinstance(self.retry, RetryPolicy):
            raise TypeError("retry must be a RetryPolicy")
        if ssl_context is not None and self.base.scheme != "https":
            raise ValueError("ssl_context is for an https base_url")
        self._ssl_context = ssl_context
        self._rng = rng or random.SystemRandom()

    def __repr__(self) -> str:
        return f"Gateway({str(self.base)!r})"  # never the token

    def claim(self, tenant: str, task: str, owner: str, lease_ms: int, *,
              safety_margin_ms: int | None = None) -> "Task":
        """Claim the task for `owner` for `lease_ms`, and keep the lease alive until release.

        Use the handle as a context manager: the lease is released on exit. Raises Busy while
        another unexpired lease is held (this owner's included).
        """
        from .task import Task  # the task module imports this one

        wire.label("tenant", tenant)
        wire.label("task", task)
        wire.label("owner", owner)
        terms = LeaseTerms.of(lease_ms, safety_margin_ms)
        target = wire.task_target(self.base, tenant, task, "claim")
        body = json.dumps({"owner": owner, "lease_ms": lease_ms}).encode()
        sent_at = [0.0]

        def stamp() -> None:
            sent_at[0] = lease_clock()  # the attempt that is granted is the one that counts

        reply = self._bounded(Call.CLAIM, "POST", target, body=body, before_each=stamp)
        granted = self._success(reply, "granted")
        try:
            grant, grant_token = granted["grant"], granted["grant_token"]
            version = granted["version"]
            wire.token("grant_token", grant_token)
        except (KeyError, TypeError, ValueError) as error:
            raise ProtocolError(f"the claim's reply lacks {error}") from None
        return Task(self, tenant, task, owner, terms, grant=grant, grant_token=grant_token,
                    version=version, sent_at=sent_at[0])

    def task_view(self, tenant: str, task: str) -> dict:
        """The diagnostic task view. A read for people: never base a write decision on it."""
        target = wire.task_target(self.base, wire.label("tenant", tenant),
                                  wire.label("task", task))
        return self._success(self._bounded(Call.RECEIPT, "GET", target), "ok")

    # The machinery the task handle shares.

    def _exchange(self, method: str, target: str, *, headers: dict[str, str] | None = None,
                  body: bytes = b"", timeout: float | None = None,
                  request_id: str | None = None, before_send=None) -> Reply:
        all_headers = {"Authorization": f"Bearer {self._token}",
                       "X-Request-Id": request_id or new_request_id(),
                       "Accept": "application/json"}
        if body and not (headers and "Content-Type" in headers):
            all_headers["Content-Type"] = "application/json"
        all_headers.update(headers or {})
        return exchange(self.base, method, target, all_headers, body,
                        self.timeout if timeout is None else timeout, self._ssl_context,
                        before_send)

    def _bounded(self, call: Call, method: str, target: str, *, body: bytes = b"",
                 headers: dict[str, str] | None = None, before_each=None) -> Reply:
        """One call with the table's retries (same request every time). Returns the final
        reply; raises TransportError when no attempt got one."""
        attempt = 0
        while True:
            attempt += 1
            if before_each:
                before_each()
            try:
                reply = self._exchange(method, target, headers=headers, body=body)
            except TransportError as error:
                step = decide(call, attempt, self.retry, self._rng, failed=True,
                              sent=error.sent)
                if step.action is not Action.RETRY:
                    raise
            else:
                step = decide(call, attempt, self.retry, self._rng, code=reply.code,
                              retry_after=self._retry_after(reply))
                if step.action is not Action.RETRY:
                    return reply
            threading.Event().wait(step.delay)  # a timer: nothing ever sets it

    def _success(self, reply: Reply, code: str) -> dict:
        """The JSON body of a reply with this success code, or the typed refusal."""
        if reply.code != code:
            raise self._refusal(reply)
        try:
            value = json.loads(reply.body)
        except ValueError:
            raise ProtocolError(f"a {code} reply that is not JSON") from None
        if not isinstance(value, dict):
            raise ProtocolError(f"a {code} reply that is not a JSON object")
        return value

    def _refusal(self, reply: Reply):
        return refusal(status=reply.status, code=reply.code, body=reply.body,
                       request_id=reply.request_id, retry_after=self._retry_after(reply))

    @staticmethod
    def _retry_after(reply: Reply) -> float | None:
        return parse_retry_after(reply.header("Retry-After"), time.time())


def new_request_id() -> str:
    """An X-Request-Id the gateway keeps (a label), to find this request in its log."""
    return "py-" + secrets.token_hex(12)


def _seconds(name: str, value: Any, *, positive: bool = False) -> float:
    if not isinstance(value, (int, float)) or isinstance(value, bool) or value < 0 \
            or (positive and value == 0):
        raise ValueError(f"{name} must be a number of seconds {'> 0' if positive else '>= 0'}, "
                         f"not {value!r}")
    return float(value)
