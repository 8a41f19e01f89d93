#!/usr/bin/env python3
"""Known answers for tests/core/outcome_tests.cpp, computed without the project's code.

The gateway frames each part as b"<decimal length>:<bytes>" and hashes the
concatenation with SHA-256 (core/fingerprint.cpp). This script re-derives the
vectors from that description alone; run it and compare with the test.
"""
import base64
import hashlib


def framed(*parts: bytes) -> bytes:
    return b"".join(str(len(p)).encode() + b":" + p for p in parts)


def fingerprint(method, provider, target, expected_version, body):
    return hashlib.sha256(framed(b"write-gateway/fingerprint/v1", method, provider, target,
                                 str(expected_version).encode(), body)).hexdigest()


def upstream_key(tenant, task, operation):
    digest = hashlib.sha256(framed(b"write-gateway/operation/v1", tenant, task, operation)).digest()
    return "gw1-" + base64.urlsafe_b64encode(digest).rstrip(b"=").decode()


print(fingerprint(b"POST", b"booking", b"/bookings?x=1", 0, b'{"slot":"a"}'))
print(fingerprint(b"DELETE", b"crm", b"/contacts/7", 2**63 - 1, b""))
print(fingerprint(b"PUT", b"booking", b"/b", 42, bytes(range(256))))
print(upstream_key(b"tenant-a", b"task-a", b"op-1"))
print(upstream_key(b"tenant-b", b"trip-42", b"book-slot-9am"))
