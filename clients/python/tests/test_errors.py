"""One typed error per code of docs/api.md's "Codes" table, and what each carries."""

import re
import unittest
from pathlib import Path

import writegateway
from writegateway.errors import REFUSALS, SUCCESSES, GrantRefused, refusal

API = Path(__file__).resolve().parents[3] / "docs/api.md"


def documented_codes() -> set[str]:
    text = API.read_text()
    table = text.split("\n## Codes\n", 1)[1].split("\n\n", 2)[1]
    return set(re.findall(r"`([a-z_]+)`", table))


class Table(unittest.TestCase):
    def test_every_documented_code_is_a_success_or_has_its_class(self):
        codes = documented_codes()
        self.assertIn("stale_owner", codes)  # the table was found
        classes = set(REFUSALS) | {"unknown_outcome"}  # OutcomeUnknown, built by the task
        self.assertEqual(codes - SUCCESSES - {"rejected_by_provider"} - classes, set())
        self.assertEqual((classes | SUCCESSES) - codes, set())

    def test_each_class_is_exported_under_a_plain_name(self):
        for code, cls in REFUSALS.items():
            self.assertIs(getattr(writegateway, cls.__name__), cls, code)
        self.assertEqual(writegateway.OutcomeUnknown.code, "unknown_outcome")

    def test_the_grant_codes_share_a_base(self):
        for code in ("invalid_grant", "authority_generation_mismatch", "scope_mismatch",
                     "stale_owner", "expired_owner"):
            self.assertTrue(issubclass(REFUSALS[code], GrantRefused), code)


class Carried(unittest.TestCase):
    def test_a_refusal_carries_its_problem_status_and_request_id(self):
        body = (b'{"type":"urn:write-gateway:code:version_conflict","title":"t","status":412,'
                b'"code":"version_conflict","detail":"expected 0, the task is at 1"}')
        error = refusal(status=412, code="version_conflict", body=body, request_id="req-1")
        self.assertIsInstance(error, writegateway.VersionConflict)
        self.assertEqual((error.status, error.code, error.request_id), (412, "version_conflict",
                                                                        "req-1"))
        self.assertEqual(error.problem["detail"], "expected 0, the task is at 1")
        self.assertIn("expected 0, the task is at 1", str(error))

    def test_an_unknown_code_or_body_is_still_an_error(self):
        error = refusal(status=418, code="brand_new", body=b"<html>", request_id=None)
        self.assertIs(type(error), writegateway.GatewayError)
        self.assertIsNone(error.problem)
        error = refusal(status=502, code=None, body=b"", request_id=None)
        self.assertEqual(error.code, "(no Gateway-Status)")


if __name__ == "__main__":
    unittest.main()
