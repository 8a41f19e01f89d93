"""What a final reply or a settled receipt means for the caller. No I/O."""

import unittest

from writegateway import NotExecuted, ProtocolError, RejectedByProvider
from writegateway.outcomes import from_receipt, from_reply
from writegateway.results import Receipt
from writegateway.transport import Reply


def reply(code: str, status: int = 201, **headers: str) -> Reply:
    fields = [("Gateway-Status", code), ("X-Request-Id", "req-1")]
    fields += [(name.replace("_", "-"), value) for name, value in headers.items()]
    return Reply(status, tuple(fields), b'{"booking_id":"bk_1"}')


def receipt(state: str, committed_version=None, response=None, resolution=None) -> Receipt:
    return Receipt(id="op-1", state=state, attempts=1, committed_version=committed_version,
                   response=response, resolution=resolution, raw={})


class Replies(unittest.TestCase):
    def test_committed(self):
        result = from_reply("op-1", reply("committed", Committed_Version="4"))
        self.assertEqual((result.status, result.committed_version, result.replayed,
                          result.source, result.request_id), (201, 4, False, "reply", "req-1"))
        self.assertEqual(result.json(), {"booking_id": "bk_1"})

    def test_a_replayed_success_carries_its_version(self):
        result = from_reply("op-1", reply("historical_retry", Committed_Version="1",
                                          Idempotent_Replayed="true"))
        self.assertEqual((result.replayed, result.committed_version), (True, 1))

    def test_a_replay_without_a_version_is_a_replayed_refusal(self):
        with self.assertRaises(RejectedByProvider) as refused:
            from_reply("op-1", reply("historical_retry", 409))
        self.assertEqual((refused.exception.status, refused.exception.replayed), (409, True))

    def test_a_provider_refusal(self):
        with self.assertRaises(RejectedByProvider) as refused:
            from_reply("op-1", reply("rejected_by_provider", 409))
        self.assertEqual((refused.exception.replayed, refused.exception.body),
                         (False, b'{"booking_id":"bk_1"}'))

    def test_a_committed_reply_with_a_bad_version_says_it_was_executed(self):
        for bad in ({}, {"Committed_Version": "x"}, {"Committed_Version": "-1"}):
            with self.assertRaisesRegex(ProtocolError, "executed", msg=bad):
                from_reply("op-1", reply("committed", **bad))

    def test_a_gateway_refusal_is_not_a_provider_answer(self):
        with self.assertRaises(ValueError):
            from_reply("op-1", reply("version_conflict", 412))


class Receipts(unittest.TestCase):
    def test_succeeded_from_its_reply(self):
        result = from_receipt(receipt("succeeded", 3, {"status": 201, "sha256": "ab",
                                                       "length": 9}))
        self.assertEqual((result.status, result.committed_version, result.body, result.source),
                         (201, 3, None, "receipt"))
        with self.assertRaises(ValueError):
            result.json()

    def test_succeeded_from_evidence_has_no_status(self):
        result = from_receipt(receipt("succeeded", 1, resolution={"source": "lookup"}))
        self.assertEqual((result.status, result.committed_version), (None, 1))

    def test_rejected(self):
        with self.assertRaises(RejectedByProvider) as refused:
            from_receipt(receipt("rejected", response={"status": 409}))
        self.assertEqual((refused.exception.status, refused.exception.body), (409, None))

    def test_not_executed(self):
        with self.assertRaisesRegex(NotExecuted, "lookup") as gone:
            from_receipt(receipt("not_executed", resolution={"source": "lookup"}))
        self.assertEqual(gone.exception.operation_id, "op-1")

    def test_an_unsettled_receipt_is_no_result(self):
        for state in ("in_flight", "unknown"):
            with self.assertRaises(ValueError, msg=state):
                from_receipt(receipt(state))

    def test_a_succeeded_receipt_without_its_version_is_malformed(self):
        with self.assertRaises(ProtocolError):
            from_receipt(receipt("succeeded"))


class Parsing(unittest.TestCase):
    def test_a_receipt_body(self):
        body = (b'{"operation":{"id":"op-1","state":"succeeded","attempts":1,"method":"POST",'
                b'"provider":"booking","target":"/bookings","expected_version":0,'
                b'"committed_version":1,"response":null,"resolution":{"source":"lookup",'
                b'"resolved_ms":5,"evidence":3}},"code":"ok"}')
        parsed = Receipt.parse(body)
        self.assertEqual((parsed.state, parsed.committed_version, parsed.resolution["source"]),
                         ("succeeded", 1, "lookup"))
        self.assertTrue(parsed.settled)

    def test_a_body_of_another_shape(self):
        for body in (b"", b"[]", b'{"operation":{}}', b'{"code":"ok"}'):
            with self.assertRaises(ProtocolError, msg=body):
                Receipt.parse(body)


if __name__ == "__main__":
    unittest.main()
