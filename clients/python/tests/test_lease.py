"""Lease deadline arithmetic: measured from when the claim or renewal was sent. No I/O."""

import random
import time
import unittest

from writegateway import lease
from writegateway.lease import LeaseTerms, default_safety_margin_ms, is_live, lease_clock


class Deadline(unittest.TestCase):
    def test_the_deadline_counts_from_the_send_minus_the_margin(self):
        terms = LeaseTerms.of(30_000, 1_000)
        self.assertEqual(terms.deadline(100.0), 129.0)
        self.assertTrue(is_live(129.0, 128.999))
        self.assertFalse(is_live(129.0, 129.0))  # at the deadline, no longer

    def test_a_renewal_extends_from_its_own_send(self):
        terms = LeaseTerms.of(30_000, 1_000)
        self.assertEqual(terms.extend(129.0, 110.0), 139.0)

    def test_a_renewal_never_shortens(self):
        # A renewal sent long ago (a slow reply) cannot move the deadline back.
        terms = LeaseTerms.of(30_000, 1_000)
        self.assertEqual(terms.extend(139.0, 105.0), 139.0)

    def test_the_default_margin(self):
        self.assertEqual(default_safety_margin_ms(60_000), 1_000)
        self.assertEqual(default_safety_margin_ms(2_000), 500)
        self.assertEqual(LeaseTerms.of(3).safety_margin_ms, 0)


class Renewal(unittest.TestCase):
    def test_renewals_come_at_a_third_of_the_lease_less_jitter(self):
        terms = LeaseTerms.of(30_000)
        rng = random.Random(5)
        times = [terms.next_renewal(100.0, rng) for _ in range(500)]
        self.assertTrue(all(107.5 <= t <= 110.0 for t in times))
        self.assertGreater(len(set(times)), 450)

    def test_the_first_renewal_is_long_before_the_deadline(self):
        terms = LeaseTerms.of(3_000)
        self.assertLess(terms.next_renewal(0.0, random.Random(1)), terms.deadline(0.0))


class Terms(unittest.TestCase):
    def test_bad_terms_are_refused(self):
        for lease_ms, margin in [(0, None), (-5, None), (1.5, None), (True, None), ("60", None),
                                 (1000, 1000), (1000, -1), (1000, 0.5)]:
            with self.assertRaises(ValueError, msg=(lease_ms, margin)):
                LeaseTerms.of(lease_ms, margin)


class Clock(unittest.TestCase):
    def test_the_lease_clock_does_not_go_back(self):
        readings = [lease_clock() for _ in range(1000)]
        self.assertEqual(readings, sorted(readings))

    @unittest.skipUnless(hasattr(time, "CLOCK_BOOTTIME"), "no CLOCK_BOOTTIME here")
    def test_the_lease_clock_counts_through_a_suspend_where_it_can(self):
        self.assertEqual(lease._CLOCK, time.CLOCK_BOOTTIME)


if __name__ == "__main__":
    unittest.main()
