"""docs/api.md's "What an agent may retry", as the client applies it: every row, no I/O."""

import random
import unittest

from writegateway.retry import (Action, Call, RetryPolicy, action_for_failure, action_for_reply,
                                backoff, decide, parse_retry_after, retry_delay)

POLICY = RetryPolicy(max_attempts=4, base_delay=0.2, max_delay=1.0, max_retry_after=10.0)


class MutationTable(unittest.TestCase):
    def test_codes_that_prove_nothing_was_done_are_retried(self):
        for code in ("authority_unavailable", "operation_in_flight", "provider_unavailable"):
            self.assertIs(action_for_reply(Call.MUTATE, code), Action.RETRY, code)

    def test_answers_that_do_not_say_what_happened_wait_for_the_receipt(self):
        for code in ("unknown_outcome", "resolved_without_reply", "internal_error", None):
            self.assertIs(action_for_reply(Call.MUTATE, code), Action.AWAIT_RECEIPT, code)

    def test_every_other_answer_is_final(self):
        for code in ("committed", "historical_retry", "rejected_by_provider", "stale_owner",
                     "expired_owner", "version_conflict", "operation_conflict",
                     "unresolved_operation", "invalid_grant", "forbidden", "not_found",
                     "payload_too_large", "busy", "some_future_code"):
            self.assertIs(action_for_reply(Call.MUTATE, code), Action.DONE, code)

    def test_a_failure_before_sending_is_retried_after_sending_never(self):
        self.assertIs(action_for_failure(Call.MUTATE, sent=False), Action.RETRY)
        self.assertIs(action_for_failure(Call.MUTATE, sent=True), Action.AWAIT_RECEIPT)


class OwnershipTable(unittest.TestCase):
    def test_a_claim_is_retried_only_when_nothing_could_have_been_granted_to_nobody(self):
        self.assertIs(action_for_reply(Call.CLAIM, "authority_unavailable"), Action.RETRY)
        self.assertIs(action_for_failure(Call.CLAIM, sent=False), Action.RETRY)
        self.assertIs(action_for_failure(Call.CLAIM, sent=True), Action.DONE)
        self.assertIs(action_for_reply(Call.CLAIM, "busy"), Action.DONE)

    def test_renewals_releases_and_receipt_reads_are_resent_after_a_lost_reply(self):
        for call in (Call.RENEW, Call.RELEASE, Call.RECEIPT):
            self.assertIs(action_for_failure(call, sent=True), Action.RETRY, call)
            self.assertIs(action_for_reply(call, "authority_unavailable"), Action.RETRY, call)
            for code in ("stale_owner", "expired_owner", "authority_generation_mismatch"):
                self.assertIs(action_for_reply(call, code), Action.DONE, (call, code))


class Budget(unittest.TestCase):
    def test_retries_stop_at_max_attempts(self):
        rng = random.Random(1)
        steps = [decide(Call.MUTATE, n, POLICY, rng, code="authority_unavailable").action
                 for n in range(1, 6)]
        self.assertEqual(steps, [Action.RETRY] * 3 + [Action.GIVE_UP] * 2)

    def test_a_retry_after_beyond_the_policy_is_handed_to_the_caller(self):
        step = decide(Call.MUTATE, 1, POLICY, random.Random(1), code="provider_unavailable",
                      retry_after=11.0)
        self.assertIs(step.action, Action.GIVE_UP)

    def test_the_delay_honours_retry_after(self):
        step = decide(Call.MUTATE, 1, POLICY, random.Random(1), code="authority_unavailable",
                      retry_after=3.0)
        self.assertEqual((step.action, step.delay), (Action.RETRY, 3.0))

    def test_final_answers_carry_no_delay(self):
        step = decide(Call.MUTATE, 1, POLICY, random.Random(1), failed=True, sent=True)
        self.assertEqual((step.action, step.delay), (Action.AWAIT_RECEIPT, 0.0))


class Backoff(unittest.TestCase):
    def test_exponential_with_equal_jitter_under_the_cap(self):
        rng = random.Random(7)
        for attempt, ceiling in [(1, 0.2), (2, 0.4), (3, 0.8), (4, 1.0), (30, 1.0), (500, 1.0)]:
            for _ in range(200):
                delay = backoff(POLICY, attempt, rng)
                self.assertGreaterEqual(delay, ceiling / 2, attempt)
                self.assertLessEqual(delay, ceiling, attempt)

    def test_jitter_spreads_clients(self):
        rng = random.Random(3)
        self.assertGreater(len({backoff(POLICY, 3, rng) for _ in range(50)}), 40)

    def test_retry_delay_is_never_below_retry_after(self):
        self.assertEqual(retry_delay(POLICY, 1, 5.0, random.Random(1)), 5.0)
        self.assertLessEqual(retry_delay(POLICY, 1, None, random.Random(1)), 0.2)


class RetryAfter(unittest.TestCase):
    def test_delta_seconds(self):
        self.assertEqual(parse_retry_after("1", 0), 1.0)
        self.assertEqual(parse_retry_after(" 120 ", 0), 120.0)

    def test_http_date(self):
        now = 1_700_000_000.0  # Tue, 14 Nov 2023 22:13:20 GMT
        self.assertEqual(parse_retry_after("Tue, 14 Nov 2023 22:13:30 GMT", now), 10.0)
        self.assertEqual(parse_retry_after("Tue, 14 Nov 2023 22:13:00 GMT", now), 0.0)

    def test_anything_else_is_no_retry_after(self):
        for value in (None, "", "-1", "1.5", "soon", "٣", "Tue, 14 Nov 2023 22:13:30"):
            self.assertIsNone(parse_retry_after(value, 0), value)


class Policy(unittest.TestCase):
    def test_bad_policies_are_refused(self):
        for fields in ({"max_attempts": 0}, {"max_attempts": True}, {"base_delay": -1},
                       {"max_delay": 0.1, "base_delay": 0.2}, {"max_retry_after": "5"}):
            with self.assertRaises(ValueError, msg=fields):
                RetryPolicy(**fields)


if __name__ == "__main__":
    unittest.main()
