"""The task handle against the real stack: claims, renewals, release, and a lease that is lost
(refused, revoked, or outlived by a paused process) stopping every send."""

import os
import signal
import subprocess
import sys
import unittest
from pathlib import Path

from writegateway import Busy, ExpiredOwner, Gateway, LeaseLost
from writegateway.lease import lease_clock

from . import stack
from .relay import Relay
from .stack import AGENT_TOKEN, TENANT, fresh_name, wait_for

S: stack.Stack


def setUpModule():
    global S
    S = stack.shared()


def book(slot: str) -> dict:
    return {"slot": slot, "customer": "ada"}


class Ownership(unittest.TestCase):
    def test_a_claim_gives_a_grant_and_the_exit_releases_it(self):
        name = fresh_name("trip")
        gateway = Gateway(S.url, AGENT_TOKEN)
        with gateway.claim(TENANT, name, "region-eu", 60_000) as task:
            self.assertEqual((task.grant["owner"], task.version), ("region-eu", 0))
            with self.assertRaises(Busy) as busy:
                gateway.claim(TENANT, name, "region-us", 60_000)
            self.assertEqual(busy.exception.status, 409)
            self.assertTrue(busy.exception.request_id)
        self.assertTrue(task.lease_lost.is_set())
        # Released, so another owner can claim at once.
        with gateway.claim(TENANT, name, "region-us", 60_000) as second:
            self.assertGreater(second.grant["epoch"], task.grant["epoch"])

    def test_renewals_keep_the_lease_past_its_length(self):
        gateway = Gateway(S.url, AGENT_TOKEN)
        lease_ms = 3000
        with gateway.claim(TENANT, fresh_name("trip"), "region-eu", lease_ms) as task:
            claimed = lease_clock()
            first = task._keepalive.deadline
            wait_for(lambda: lease_clock() > claimed + 2.5 * lease_ms / 1000,
                     "two and a half lease lengths to pass")
            self.assertFalse(task.lease_lost.is_set(), task.lost_reason)
            self.assertGreater(task._keepalive.deadline, first + lease_ms / 1000)
            result = task.mutate("booking", "POST", "/bookings", book(fresh_name("slot")),
                                 "book-late")
            self.assertEqual(result.committed_version, 1)

    def test_a_mutation_after_release_sends_nothing(self):
        name = fresh_name("trip")
        with Gateway(S.url, AGENT_TOKEN).claim(TENANT, name, "region-eu", 60_000) as task:
            pass
        with self.assertRaises(LeaseLost):
            task.mutate("booking", "POST", "/bookings", book(fresh_name("slot")), "book-1")
        self.assertEqual(S.rejections(name), [])


    def test_bad_arguments_are_refused_before_anything_is_sent(self):
        name = fresh_name("trip")
        relay = Relay(int(S.url.rsplit(":", 1)[1]))
        self.addCleanup(relay.close)
        with Gateway(relay.url, AGENT_TOKEN).claim(TENANT, name, "region-eu", 60_000) as task:
            before = relay.accepted
            for args, error in [(("booking", "GET", "/bookings", None, "op"), ValueError),
                                (("booking", "POST", "bookings", None, "op"), ValueError),
                                (("booking", "POST", "/b", None, None), TypeError),
                                (("booking", "POST", "/b", None, "op id"), ValueError),
                                (("book ing", "POST", "/b", None, "op"), ValueError),
                                (("booking", "POST", "/b", {"x": object()}, "op"), TypeError)]:
                with self.assertRaises(error, msg=args):
                    task.mutate(*args)
            for keyword in ({"outcome_wait": -1}, {"timeout": 0}, {"timeout": "5"}):
                with self.assertRaises(ValueError, msg=keyword):
                    task.mutate("booking", "POST", "/b", None, "op", **keyword)
            self.assertEqual(relay.accepted, before)
        released = relay.accepted
        for args in [("tenant a", name, "o", 1000), (TENANT, name, "", 1000),
                     (TENANT, name, "o", 0), (TENANT, name, "o", 2.5)]:
            with self.assertRaises((ValueError, TypeError), msg=args):
                Gateway(relay.url, AGENT_TOKEN).claim(*args)
        self.assertEqual(relay.accepted, released)


class Revoked(unittest.TestCase):
    def test_a_refused_renewal_marks_the_lease_lost_and_nothing_more_is_sent(self):
        name, slot = fresh_name("trip"), fresh_name("slot")
        relay = Relay(int(S.url.rsplit(":", 1)[1]))
        self.addCleanup(relay.close)
        # Renewed every 1.5-2 s; the deadline is 5 s after the last: the refusal comes first.
        with Gateway(relay.url, AGENT_TOKEN).claim(TENANT, name, "region-eu", 6000) as task:
            status, _ = S.operator("POST", f"/v1/admin/tasks/{TENANT}/{name}/revoke")
            self.assertEqual(status, 200)
            self.assertTrue(task.lease_lost.wait(60), "the lease was never marked lost")
            self.assertIsInstance(task._keepalive.error, ExpiredOwner)
            before = relay.accepted
            with self.assertRaises(LeaseLost):
                task.mutate("booking", "POST", "/bookings", book(slot), "book-1")
        self.assertEqual(relay.accepted, before)  # no mutation, and no release either
        self.assertEqual(S.rejections(name), [])
        self.assertFalse(any(slot in r["body"] for r in S.booking.requests()))

    def test_a_grant_refused_at_the_write_marks_the_lease_lost(self):
        name = fresh_name("trip")
        with Gateway(S.url, AGENT_TOKEN).claim(TENANT, name, "region-eu", 600_000) as task:
            S.operator("POST", f"/v1/admin/tasks/{TENANT}/{name}/revoke")
            with self.assertRaises(ExpiredOwner):  # the next renewal is minutes away
                task.mutate("booking", "POST", "/bookings", book(fresh_name("slot")), "book-1")
            self.assertTrue(task.lease_lost.is_set())
            with self.assertRaises(LeaseLost):
                task.mutate("booking", "POST", "/bookings", book(fresh_name("slot")), "book-2")
        self.assertEqual([r["code"] for r in S.rejections(name)], ["expired_owner"])


class PausedAgent(unittest.TestCase):
    def test_a_process_stopped_past_its_lease_sends_nothing_when_it_continues(self):
        name, slot = fresh_name("trip"), fresh_name("slot")
        relay = Relay(int(S.url.rsplit(":", 1)[1]))
        self.addCleanup(relay.close)
        script = Path(__file__).with_name("paused_agent.py")
        child = subprocess.Popen([sys.executable, str(script), relay.url, TENANT, name, "3000",
                                  slot], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                 text=True)
        self.addCleanup(child.stdout.close)
        self.addCleanup(child.stdin.close)
        self.addCleanup(lambda: child.poll() is None and child.kill())
        self.assertEqual(child.stdout.readline().strip(), "claimed")
        os.kill(child.pid, signal.SIGSTOP)
        self.addCleanup(lambda: child.poll() is None and os.kill(child.pid, signal.SIGCONT))
        # Stopped until the authority itself says the lease is over.
        wait_for(lambda: S.task_view(name).get("expired") is True,
                 "the authority to see the lease expired")
        before = relay.accepted
        child.stdin.write("go\n")
        child.stdin.flush()
        os.kill(child.pid, signal.SIGCONT)
        said = child.stdout.readline().strip()
        self.assertEqual(child.wait(60), 0)
        self.assertEqual(said, "lease_lost")
        self.assertEqual(relay.accepted, before)  # not a mutation, renewal or release
        self.assertEqual(S.rejections(name), [])
        self.assertFalse(any(slot in r["body"] for r in S.booking.requests()))


if __name__ == "__main__":
    unittest.main()
