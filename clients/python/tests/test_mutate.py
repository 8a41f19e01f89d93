"""mutate() against the real stack: versions, replays, rejections, and every fault of the retry
table (a lost reply, a timeout, the authority down and back, the provider not executing, a
held operation settled by the gateway's lookup). Effects are counted at the provider."""

import threading
import unittest

from writegateway import (Gateway, OutcomeUnknown, RejectedByProvider, RetryPolicy,
                          TransportError)

from . import stack
from .relay import Relay
from .stack import AGENT_TOKEN, TENANT, fresh_name, wait_for

S: stack.Stack


def setUpModule():
    global S
    S = stack.shared()


def book(slot: str) -> dict:
    return {"slot": slot, "customer": "ada"}


def effects(task: str, operation: str) -> int:
    return S.booking.effects_by_key().get(S.upstream_key(task, operation), 0)


def provider_saw(task: str, operation: str) -> int:
    key = S.upstream_key(task, operation)
    return sum(1 for request in S.booking.requests()
               if any(name.lower() == "idempotency-key" and value == key
                      for name, value in request["headers"].items()))


class Basics(unittest.TestCase):
    def test_versions_are_tracked_and_an_exact_retry_is_a_replay(self):
        name = fresh_name("trip")
        nine, ten = book(fresh_name("slot")), book(fresh_name("slot"))
        with Gateway(S.url, AGENT_TOKEN).claim(TENANT, name, "region-eu", 60_000) as task:
            first = task.mutate("booking", "POST", "/bookings", nine, "book-9am")
            self.assertEqual((first.status, first.committed_version, first.replayed,
                              first.source), (201, 1, False, "reply"))
            self.assertEqual(first.json()["status"], "confirmed")
            second = task.mutate("booking", "POST", "/bookings", ten, "book-10am")
            self.assertEqual((second.committed_version, task.version), (2, 2))
            # The same intent again, after the version moved on: the same Expected-Version is
            # sent (it is part of the operation), so it is replayed, byte for byte.
            again = task.mutate("booking", "POST", "/bookings", dict(reversed(nine.items())),
                                "book-9am")
            self.assertEqual((again.replayed, again.committed_version, again.body),
                             (True, 1, first.body))
        self.assertEqual((effects(name, "book-9am"), effects(name, "book-10am")), (1, 1))

    def test_a_provider_refusal_is_an_error_and_leaves_the_version(self):
        name, slot = fresh_name("trip"), fresh_name("slot")
        with Gateway(S.url, AGENT_TOKEN).claim(TENANT, name, "region-eu", 60_000) as task:
            task.mutate("booking", "POST", "/bookings", book(slot), "book-a")
            with self.assertRaises(RejectedByProvider) as refused:
                task.mutate("booking", "POST", "/bookings", book(slot), "book-b")
            self.assertEqual((refused.exception.status, refused.exception.replayed), (409, False))
            self.assertIn(b"slot_taken", refused.exception.body)
            self.assertEqual(task.version, 1)
            with self.assertRaises(RejectedByProvider) as replayed:
                task.mutate("booking", "POST", "/bookings", book(slot), "book-b")
            self.assertTrue(replayed.exception.replayed)


class LostReply(unittest.TestCase):
    def test_a_reply_lost_after_the_gateway_acted_is_read_from_the_receipt_never_resent(self):
        name, slot = fresh_name("trip"), fresh_name("slot")
        relay = Relay(int(S.url.rsplit(":", 1)[1]))
        self.addCleanup(relay.close)
        gateway = Gateway(relay.url, AGENT_TOKEN, outcome_wait=60)
        with gateway.claim(TENANT, name, "region-eu", 60_000) as task:
            relay.drop_next_replies(1)
            lost = task.mutate("booking", "POST", "/bookings", book(slot), "book-9am")
            self.assertEqual((lost.source, lost.body, lost.committed_version),
                             ("receipt", None, 1))
            self.assertEqual((lost.status, lost.receipt.state), (201, "succeeded"))
            # The caller's exact retry of the same intent: the recorded reply, with its body.
            retry = task.mutate("booking", "POST", "/bookings", book(slot), "book-9am")
            self.assertEqual((retry.replayed, retry.committed_version, retry.status),
                             (True, 1, 201))
            self.assertEqual(retry.json()["slot"], slot)
        self.assertEqual(effects(name, "book-9am"), 1)
        self.assertEqual(provider_saw(name, "book-9am"), 1)

    def test_a_request_lost_before_the_gateway_is_unknown_until_the_caller_sends_it_again(self):
        name, slot = fresh_name("trip"), fresh_name("slot")
        relay = Relay(int(S.url.rsplit(":", 1)[1]))
        self.addCleanup(relay.close)
        with Gateway(relay.url, AGENT_TOKEN).claim(TENANT, name, "region-eu", 60_000) as task:
            relay.swallow_next_requests(1)
            with self.assertRaises(OutcomeUnknown) as unknown:
                task.mutate("booking", "POST", "/bookings", book(slot), "book-9am",
                            outcome_wait=1)
            self.assertIsNone(unknown.exception.receipt)  # no record: it proves nothing
            self.assertIsNone(task.receipt("book-9am"))
            # Sending the same intent again is the caller's decision, and safe: the gateway's
            # ledger would answer an admitted one with its recorded state.
            result = task.mutate("booking", "POST", "/bookings", book(slot), "book-9am")
            self.assertEqual((result.source, result.replayed, result.committed_version),
                             ("reply", False, 1))
        self.assertEqual(effects(name, "book-9am"), 1)

    def test_a_timeout_waits_for_the_receipt_and_sends_nothing_again(self):
        name, slot = fresh_name("trip"), fresh_name("slot")
        gateway = Gateway(S.url, AGENT_TOKEN, outcome_wait=120)
        with gateway.claim(TENANT, name, "region-eu", 60_000) as task:
            S.booking.fault("hold", count=1)
            self.addCleanup(S.booking.fault, "none")
            reads = S.replies_total("operation", "ok")
            outcome = {}
            worker = threading.Thread(target=lambda: outcome.update(
                result=task.mutate("booking", "POST", "/bookings", book(slot), "book-9am",
                                   timeout=1.0)))
            worker.start()
            # The client timed out and is reading the receipt (in flight): let the provider go.
            wait_for(lambda: S.replies_total("operation", "ok") > reads,
                     "the client to read the receipt")
            S.booking.release_held()
            worker.join(180)
            self.assertEqual(outcome["result"].committed_version, 1)
            self.assertEqual(outcome["result"].source, "receipt")
        self.assertEqual(effects(name, "book-9am"), 1)
        self.assertEqual(provider_saw(name, "book-9am"), 1)
        self.assertEqual(S.rejections(name), [])  # no resend reached even the gateway

    def test_a_connection_that_never_opened_sent_nothing(self):
        relay = Relay(int(S.url.rsplit(":", 1)[1]))
        self.addCleanup(relay.close)
        gateway = Gateway(relay.url, AGENT_TOKEN,
                          retry=RetryPolicy(max_attempts=3, base_delay=0.01, max_delay=0.01))
        name = fresh_name("trip")
        with gateway.claim(TENANT, name, "region-eu", 60_000) as task:
            relay.stop_listening()  # connects are refused: no request byte can leave
            with self.assertRaises(TransportError) as failed:
                task.mutate("booking", "POST", "/bookings", book(fresh_name("slot")), "book-1")
            self.assertFalse(failed.exception.sent)
            relay.listen_again()
        self.assertEqual(S.operator("GET", f"/v1/admin/operations/{TENANT}/{name}/book-1")[0],
                         404)  # never admitted


class Unavailable(unittest.TestCase):
    def test_the_authority_down_and_back_gives_one_effect(self):
        name = fresh_name("trip")
        patient = RetryPolicy(max_attempts=120, base_delay=0.2, max_delay=1.0)
        gateway = Gateway(S.url, AGENT_TOKEN, retry=patient)
        with gateway.claim(TENANT, name, "region-eu", 600_000) as task:
            refusals = S.replies_total("proxy", "authority_unavailable")
            S.stop_database()
            self.addCleanup(S.wait_ready)
            self.addCleanup(S.start_database)
            outcome = {}

            def mutate():
                try:
                    outcome["result"] = task.mutate("booking", "POST", "/bookings",
                                                    book(fresh_name("slot")), "book-9am")
                except BaseException as error:  # reported by the assertion below
                    outcome["error"] = error
            worker = threading.Thread(target=mutate)
            worker.start()
            # Refused with 503 and retried after Retry-After, while the database is down.
            wait_for(lambda: S.replies_total("proxy", "authority_unavailable") >= refusals + 2,
                     "two authority_unavailable replies")
            S.start_database()
            worker.join(300)
            self.assertNotIn("error", outcome)
            self.assertEqual(outcome["result"].committed_version, 1)
        self.assertEqual(effects(name, "book-9am"), 1)

    def test_not_executed_at_the_provider_is_retried_after_its_retry_after(self):
        name = fresh_name("trip")
        with Gateway(S.url, AGENT_TOKEN).claim(TENANT, name, "region-eu", 60_000) as task:
            S.booking.fault("reply_status", status=429, retry_after="1", count=1)
            self.addCleanup(S.booking.fault, "none")
            result = task.mutate("booking", "POST", "/bookings", book(fresh_name("slot")),
                                 "book-9am")
            self.assertEqual(result.committed_version, 1)
        self.assertEqual(effects(name, "book-9am"), 1)
        self.assertEqual(provider_saw(name, "book-9am"), 2)  # the same key both times


class InFlight(unittest.TestCase):
    def test_an_exact_retry_while_the_first_is_forwarded_waits_for_its_outcome(self):
        name, slot = fresh_name("trip"), fresh_name("slot")
        patient = RetryPolicy(max_attempts=60, base_delay=0.2, max_delay=1.0)
        with Gateway(S.url, AGENT_TOKEN, retry=patient).claim(TENANT, name, "region-eu",
                                                               60_000) as task:
            S.booking.fault("hold", count=1)
            self.addCleanup(S.booking.fault, "none")
            results = {}

            def mutate(who):
                results[who] = task.mutate("booking", "POST", "/bookings", book(slot),
                                           "book-9am")
            first = threading.Thread(target=mutate, args=("first",))
            first.start()
            wait_for(lambda: S.booking.activity()["held"] == 1, "the provider to hold it")
            second = threading.Thread(target=mutate, args=("second",))
            second.start()
            wait_for(lambda: any(r["code"] == "operation_in_flight" for r in S.rejections(name)),
                     "the second attempt to meet the first in flight")
            S.booking.release_held()
            first.join(120)
            second.join(120)
            self.assertEqual((results["first"].replayed, results["first"].committed_version),
                             (False, 1))
            self.assertEqual((results["second"].replayed, results["second"].body),
                             (True, results["first"].body))
        self.assertEqual(effects(name, "book-9am"), 1)
        self.assertEqual(provider_saw(name, "book-9am"), 1)


class LeaseEndedWhileForwarded(unittest.TestCase):
    def test_a_grant_code_after_the_forward_is_an_unknown_outcome_read_with_a_new_grant(self):
        name, slot = fresh_name("trip"), fresh_name("slot")
        gateway = Gateway(S.url, AGENT_TOKEN)
        caught = {}
        with gateway.claim(TENANT, name, "region-eu", 600_000) as task:
            S.booking.fault("hold", count=1)
            self.addCleanup(S.booking.fault, "none")

            def mutate():
                try:
                    task.mutate("booking", "POST", "/bookings", book(slot), "book-9am")
                except Exception as error:  # noqa: BLE001 - the test looks at what it was
                    caught["error"] = error
            sender = threading.Thread(target=mutate)
            sender.start()
            wait_for(lambda: S.booking.activity()["held"] == 1, "the provider to hold it")
            # The lease ends while the provider holds the request; then the provider acts.
            status, _ = S.operator("POST", f"/v1/admin/tasks/{TENANT}/{name}/revoke")
            self.assertEqual(status, 200)
            S.booking.release_held()
            sender.join(120)
        error = caught.get("error")
        # The grant code alone would read "nothing was done": it is an unknown outcome instead.
        self.assertIsInstance(error, OutcomeUnknown)
        self.assertEqual(error.problem["code"], "expired_owner")
        self.assertIs(error.problem["outcome_recorded"], True)
        self.assertEqual(effects(name, "book-9am"), 1)
        # A new claim reads what it became, and the same intent is never sent again.
        with gateway.claim(TENANT, name, "region-eu", 60_000) as again:
            result = again.outcome("book-9am", 30)
            self.assertEqual((result.source, result.committed_version), ("receipt", 1))
        self.assertEqual(provider_saw(name, "book-9am"), 1)


class Held(unittest.TestCase):
    def test_an_unknown_outcome_is_waited_for_until_the_lookup_settles_it(self):
        name = fresh_name("trip")
        with Gateway(S.url, AGENT_TOKEN, outcome_wait=120).claim(TENANT, name, "region-eu",
                                                                 60_000) as task:
            S.booking.fault("drop_after_execute", count=1)
            self.addCleanup(S.booking.fault, "none")
            result = task.mutate("booking", "POST", "/bookings", book(fresh_name("slot")),
                                 "book-9am")
            self.assertEqual((result.source, result.committed_version), ("receipt", 1))
            self.assertEqual(result.receipt.resolution["source"], "lookup")
            self.assertEqual(task.version, 1)
        self.assertEqual(effects(name, "book-9am"), 1)
        self.assertEqual(provider_saw(name, "book-9am"), 1)

    def test_outcome_unknown_can_be_waited_on_and_its_retry_is_not_resent(self):
        name = fresh_name("trip")
        with Gateway(S.url, AGENT_TOKEN).claim(TENANT, name, "region-eu", 60_000) as task:
            S.booking.fault("drop_after_execute", count=1)
            self.addCleanup(S.booking.fault, "none")
            slot = fresh_name("slot")
            with self.assertRaises(OutcomeUnknown) as unknown:
                task.mutate("booking", "POST", "/bookings", book(slot), "book-9am",
                            outcome_wait=0)
            self.assertEqual(unknown.exception.status, 504)
            self.assertTrue(unknown.exception.request_id)
            result = unknown.exception.wait(120)
            self.assertEqual((result.committed_version, result.receipt.state), (1, "succeeded"))
            # Settled from evidence: the exact retry has no reply to replay, so it is answered
            # from the receipt, and nothing goes to the provider.
            again = task.mutate("booking", "POST", "/bookings", book(slot), "book-9am")
            self.assertEqual((again.source, again.committed_version), ("receipt", 1))
        self.assertEqual(effects(name, "book-9am"), 1)
        self.assertEqual(provider_saw(name, "book-9am"), 1)


if __name__ == "__main__":
    unittest.main()
