"""The keep-alive's threads with a scripted renewal function instead of the network: a
renewal that hangs, one refused, one that fails and is retried, and a handle whose threads
never ran. Waits are on events, with generous timeouts; nothing asserts a speed."""

import random
import threading
import unittest

from writegateway import LeaseLost, StaleOwner
from writegateway.gateway import Gateway
from writegateway.keepalive import KeepAlive
from writegateway.lease import LeaseTerms, lease_clock
from writegateway.retry import RetryPolicy
from writegateway.transport import Reply

from .stack import wait_for

GATEWAY = Gateway("http://127.0.0.1:1", "token")  # its reply readers only; never connected
QUICK = RetryPolicy(base_delay=0.01, max_delay=0.01)


def reply(code: str, status: int = 200, retry_after: str | None = None) -> Reply:
    headers = [("Gateway-Status", code)] + ([("Retry-After", retry_after)] if retry_after else [])
    return Reply(status, tuple(headers), b'{"code":"%s"}' % code.encode())


def keepalive(terms: LeaseTerms, renew) -> KeepAlive:
    return KeepAlive(terms=terms, sent_at=lease_clock(), renew=renew,
                     refusal=GATEWAY._refusal, retry_after=GATEWAY._retry_after, policy=QUICK,
                     rng=random.Random(1), max_timeout=30.0, name="test")


class Threads(unittest.TestCase):
    def test_the_lease_is_lost_at_its_deadline_while_a_renewal_hangs(self):
        started, unblock = threading.Event(), threading.Event()

        def renew(timeout):
            started.set()
            unblock.wait(60)
            return reply("renewed")
        alive = keepalive(LeaseTerms.of(600, 100), renew)
        alive.start()
        self.addCleanup(unblock.set)
        self.assertTrue(alive.lost.wait(60))
        self.assertTrue(started.is_set())  # lost while the renewal was still out
        self.assertIn("can no longer be ruled out", alive.reason)
        unblock.set()  # a grant arriving afterwards does not undo it
        with self.assertRaises(LeaseLost):
            alive.check()

    def test_a_refused_renewal_loses_the_lease_at_once(self):
        alive = keepalive(LeaseTerms.of(600_000), lambda timeout: reply("stale_owner", 409))
        alive._next = lease_clock()  # renew now rather than in 200 s
        alive.start()
        self.assertTrue(alive.lost.wait(60))
        self.assertIsInstance(alive.error, StaleOwner)
        with self.assertRaises(LeaseLost) as lost:
            alive.check()
        self.assertIsInstance(lost.exception.__cause__, StaleOwner)

    def test_an_unanswered_renewal_is_retried_and_the_lease_kept(self):
        answers = iter([reply("authority_unavailable", 503, "0")] + [reply("renewed")] * 1000)
        calls = []

        def renew(timeout):
            calls.append(timeout)
            return next(answers)
        alive = keepalive(LeaseTerms.of(3000, 0), renew)
        first = alive.deadline
        alive.start()
        self.addCleanup(alive.mark_lost, "test over")
        wait_for(lambda: len(calls) >= 3, "three renewals")
        self.assertFalse(alive.lost.is_set(), alive.reason)
        self.assertGreater(alive.deadline, first)
        self.assertTrue(all(0 < timeout <= 30.0 for timeout in calls))


class WithoutThreads(unittest.TestCase):
    def test_check_compares_with_the_clock_itself(self):
        # As after SIGCONT: the deadline has passed and no background thread has run yet.
        alive = keepalive(LeaseTerms.of(50, 10), lambda timeout: reply("renewed"))
        wait_for(lambda: lease_clock() > alive.deadline, "the deadline to pass")
        self.assertFalse(alive.lost.is_set())
        with self.assertRaises(LeaseLost):
            alive.check()
        self.assertTrue(alive.lost.is_set())


if __name__ == "__main__":
    unittest.main()
