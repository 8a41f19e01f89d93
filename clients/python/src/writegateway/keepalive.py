"""A lease kept alive in the background, and the moment it can no longer be relied on.

Two daemon threads per task, both asleep on timers between events: the renewer sends a renewal
a third of the lease (less jitter) after the last granted one; the watchdog wakes at the
deadline. The deadline is "when the last granted claim or renewal was sent + lease - margin"
(lease.py), so `lost` is set as soon as the lease's end can no longer be ruled out, even while a
renewal hangs or the process was stopped: `check()` compares with the clock itself, so a thread
resuming after SIGCONT sees the lease lost before any background thread has run.

A renewal the gateway refuses (stale_owner, expired_owner, ...) sets `lost` at once. One that
got no answer (authority_unavailable, a network failure) is retried with backoff while the
deadline lasts: the lease was not lost by it, and the watchdog fires if it runs out.
"""

from __future__ import annotations

import random
import threading
from typing import Callable

from .errors import GatewayError, LeaseLost, TransportError
from .lease import LeaseTerms, is_live, lease_clock
from .retry import Action, Call, RetryPolicy, action_for_reply, retry_delay
from .transport import Reply


class KeepAlive:
    def __init__(self, *, terms: LeaseTerms, sent_at: float, renew: Callable[[float], Reply],
                 refusal: Callable[[Reply], GatewayError],
                 retry_after: Callable[[Reply], float | None], policy: RetryPolicy,
                 rng: random.Random, max_timeout: float, name: str):
        self.lost = threading.Event()
        self.reason: str | None = None
        self.error: BaseException | None = None
        self._terms = terms
        self._renew = renew
        self._refusal = refusal
        self._retry_after = retry_after
        self._policy = policy
        self._rng = rng
        self._max_timeout = max_timeout
        self._changed = threading.Condition()
        self._deadline = terms.deadline(sent_at)
        self._next = terms.next_renewal(sent_at, rng)
        self._threads = [threading.Thread(target=self._renew_loop, name=f"{name} renew",
                                          daemon=True),
                         threading.Thread(target=self._watch, name=f"{name} watchdog",
                                          daemon=True)]

    def start(self) -> None:
        for thread in self._threads:
            thread.start()

    @property
    def deadline(self) -> float:
        with self._changed:
            return self._deadline

    def check(self) -> None:
        """Raise LeaseLost unless the lease is certainly still held now."""
        with self._changed:
            if not self.lost.is_set() and not is_live(self._deadline, lease_clock()):
                self._mark_lost_locked("the lease's end can no longer be ruled out "
                                       "(no renewal was granted in time)")
            if self.lost.is_set():
                raise LeaseLost(f"not sent: {self.reason}") from self.error

    def mark_lost(self, reason: str, error: BaseException | None = None) -> None:
        with self._changed:
            self._mark_lost_locked(reason, error)

    def _mark_lost_locked(self, reason: str, error: BaseException | None = None) -> None:
        if not self.lost.is_set():
            self.reason, self.error = reason, error
            self.lost.set()
            self._changed.notify_all()

    def _watch(self) -> None:
        with self._changed:
            while not self.lost.is_set():
                remaining = self._deadline - lease_clock()
                if remaining <= 0:
                    self._mark_lost_locked("the lease's end can no longer be ruled out "
                                           "(no renewal was granted in time)")
                    return
                self._changed.wait(remaining)

    def _renew_loop(self) -> None:
        failures = 0
        while True:
            with self._changed:
                pause = self._next - lease_clock()
            if self.lost.wait(max(0.0, pause)):
                return
            with self._changed:
                sent_at = lease_clock()
                if not is_live(self._deadline, sent_at):
                    return  # the watchdog marks it; a renewal now could only be refused
                timeout = min(self._max_timeout, self._deadline - sent_at)
            retry_after = None
            try:
                reply = self._renew(timeout)
            except TransportError:
                pass
            else:
                if reply.code == "renewed":
                    with self._changed:
                        self._deadline = self._terms.extend(self._deadline, sent_at)
                        self._next = self._terms.next_renewal(sent_at, self._rng)
                        self._changed.notify_all()
                    failures = 0
                    continue
                if action_for_reply(Call.RENEW, reply.code) is not Action.RETRY:
                    error = self._refusal(reply)
                    self.mark_lost(f"the gateway refused the renewal: {error}", error)
                    return
                retry_after = self._retry_after(reply)
            failures += 1
            with self._changed:
                self._next = lease_clock() + retry_delay(self._policy, failures, retry_after,
                                                         self._rng)
