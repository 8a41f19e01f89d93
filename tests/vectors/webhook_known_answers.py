#!/usr/bin/env python3
"""Known answers for tests/core/webhook_signature_tests.cpp, computed without the project's code.

Standard Webhooks (https://www.standardwebhooks.com): the signature is
"v1," + base64(HMAC-SHA256(key, b"<id>.<timestamp>.<body>")), where the key is the
base64 part of a "whsec_<base64>" secret. The first vector is the one the standard's
own libraries test (standard-webhooks/standard-webhooks, libraries/*/ "sign function works").
"""
import base64
import hashlib
import hmac


def sign(secret: str, msg_id: str, timestamp: int, body: bytes) -> str:
    key = base64.b64decode(secret.removeprefix("whsec_"))
    signed = msg_id.encode() + b"." + str(timestamp).encode() + b"." + body
    return "v1," + base64.b64encode(hmac.new(key, signed, hashlib.sha256).digest()).decode()


# The standard's vector: expect v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=
print(sign("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", "msg_p5jXN8AQM9LWM0D4loKWxJek", 1614265330,
           b'{"test": 2432232314}'))
# A rotated 32-byte secret (bytes 0..31) over a demo-provider style body.
rotated = "whsec_" + base64.b64encode(bytes(range(32))).decode()
print(rotated)
print(sign(rotated, "msg_rotation_1", 1700000000,
           b'{"type":"operation.settled","idempotency_key":"gw1-abc","state":"executed","status":201}'))
