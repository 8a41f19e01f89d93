#!/usr/bin/env python3
"""Writes the seed corpora in tests/fuzz/corpus/<harness>/ (run from anywhere; overwrites them).

Seeds are small real inputs, made the way the tests make them: requests as
tests/http/framing_http_tests.cpp sends them (smuggling-style heads included), grant tokens as
tests/core/grant_tests.cpp encodes them, the repo's config/*.json, provider paths from
tests/core/provider_path_tests.cpp, and Standard Webhooks deliveries signed as
tests/vectors/webhook_known_answers.py signs them.
"""
import base64
import hashlib
import hmac
import json
import os
import struct

here = os.path.dirname(os.path.abspath(__file__))
repo = os.path.dirname(os.path.dirname(here))


def write(harness, name, data):
    d = os.path.join(here, "corpus", harness)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, name), "wb") as f:
        f.write(data.encode() if isinstance(data, str) else data)


def compact(j):
    return json.dumps(j, separators=(",", ":"))


def b64u(b):
    return base64.urlsafe_b64encode(b).rstrip(b"=").decode()


# request_head_fuzz: one connection's bytes.
def req(method, target, fields, body=""):
    return f"{method} {target} HTTP/1.1\r\n" + "".join(f"{k}: {v}\r\n" for k, v in fields) + "\r\n" + body


H = "request_head_fuzz"
claim = '{"owner":"a","lease_ms":10}'
chunked_claim = "1b\r\n" + claim + "\r\n0\r\n\r\n"
T = "/v1/tenants/tenant-a/tasks/trip-42"
base = [("Host", "x"), ("Authorization", "Bearer dev-agent-token-a")]
booking = '{"slot":"2026-12-01T09:00","customer":"ada"}'
write(H, "claim", req("POST", T + "/claim", base + [("Content-Length", str(len(claim)))], claim))
write(H, "get_operation", req("GET", T + "/operations/book-slot-9am?x=1&y=%20", base))
write(H, "chunked_claim", req("POST", T + "/claim", base + [("Transfer-Encoding", "chunked")], chunked_claim))
write(H, "proxy_post", req("POST", T + "/providers/booking/bookings", base + [
    ("Fence-Grant", "eyJyZWFsbSI6InJlYWxtLTEifQ"), ("Idempotency-Key", "book-slot-9am"),
    ("Expected-Version", "0"), ("Content-Type", "application/json"),
    ("Content-Length", str(len(booking)))], booking))
write(H, "pipelined", req("GET", "/healthz", [("Host", "x")]) + req("GET", T + "/operations/a%2Fb", base)
      + req("HEAD", "/", [("Host", "x"), ("Connection", "close")]))
# Smuggling-style: a second request hidden behind ambiguous framing of the first.
smuggled = req("POST", T + "/claim", base + [("Content-Length", str(len(claim)))], claim)
write(H, "smuggle_te_cl", req("POST", T + "/claim", base + [("Transfer-Encoding", "chunked"), ("Content-Length", "40")],
                              chunked_claim) + smuggled)
write(H, "smuggle_te_te", req("POST", T + "/claim", base + [("Transfer-Encoding", "chunked"),
                                                           ("Transfer-Encoding", "chunked")], chunked_claim) + smuggled)
write(H, "smuggle_te_identity", req("POST", T + "/claim", base + [("Transfer-Encoding", "chunked, identity")],
                                    "0\r\n\r\n") + smuggled)
write(H, "smuggle_cl_cl", req("POST", T + "/claim", base + [("Content-Length", "0"),
                                                           ("Content-Length", str(len(claim)))], claim))
write(H, "method_override", req("POST", T + "/claim", base + [("X-HTTP-Method-Override", "DELETE"),
                                                             ("Content-Length", "2")], "{}"))
write(H, "expect_continue", req("POST", T + "/claim", base + [("Expect", "100-continue"),
                                                             ("Content-Length", str(len(claim)))], claim))
write(H, "high_byte_target", req("GET", "/v1/tenants/tenant-a/tasks/t\xe9/operations/x", base))

# grant_token_fuzz: token texts, and JSON the harness base64url-encodes itself.
G = "grant_token_fuzz"
token = {"realm": "realm-1", "tenant": "tenant-a", "task": "task-a", "owner": "region-a", "epoch": 7,
         "secret": "s3cret"}
write(G, "token_encoded", b64u(compact(token).encode()))
write(G, "token_sorted", b64u(json.dumps(token, sort_keys=True, separators=(",", ":")).encode()))
write(G, "json_token", compact(token))
write(G, "json_spaced", json.dumps(token, indent=1))
write(G, "token_real_secret", b64u(compact({**token, "realm": "55acc9c0-4a7e-4a57-9b9a-1f0c1d2e3f40",
                                            "epoch": 9223372036854775807, "secret": b64u(bytes(range(32)))}).encode()))
write(G, "json_duplicate", '{"realm":"r","tenant":"t","task":"k","owner":"o","epoch":1,"secret":"s","owner":"x"}')
write(G, "json_extra", compact({**token, "admin": True}))
write(G, "json_bad_epoch", compact({**token, "epoch": 1.0}))
write(G, "json_bad_label", compact({**token, "owner": "has space"}))
write(G, "padded", b64u(compact(token).encode()) + "==")

# json_body_fuzz: request and webhook bodies, and the strict-JSON edge cases.
J = "json_body_fuzz"
write(J, "claim", claim)
write(J, "release", '{"grant_token":"eyJyZWFsbSI6InJlYWxtLTEifQ"}')
write(J, "booking", booking)
write(J, "nested", '{"a":1,"b":[1,2,{"a":3}],"c":{"a":{"a":4}}}')
write(J, "duplicate_deep", '[0,{"k":[{"z":1,"z":1}]}]')
write(J, "escaped_duplicate", '{"a\\u0062":1,"ab":2}')
write(J, "webhook", '{"type":"operation.settled","idempotency_key":"gw1-abc","state":"executed","status":201}')
write(J, "numbers", "[0,-0,1e308,-1.5E-3,9223372036854775807,18446744073709551615,18446744073709551616]")
write(J, "strings", '["\\u00e9\\ud83d\\ude00","caf\xc3\xa9","\\n\\t\\"\\\\\\/"]')
write(J, "invalid", '{"a":1}x')

# config_fuzz: the repo's configs and the shapes the config tests use.
C = "config_fuzz"
for name in ("dev.json", "docker.json"):
    with open(os.path.join(repo, "config", name), "rb") as f:
        write(C, name, f.read())
write(C, "minimal", compact({"database": {"url": "host=127.0.0.1 dbname=x"},
                             "agents": [{"name": "a", "token_sha256": "a" * 64, "tenants": ["tenant-a"]}]}))
write(C, "webhooks", json.dumps({
    "database": {"url_env": "GW_TEST_DB_URL"},
    "agents": [{"name": "a", "token_sha256": "a" * 64, "tenants": ["tenant-a"]}],
    "providers": [{"name": "crm", "base_url": "https://[::1]:9102/base/",
                   "credential": {"env": "GW_TEST_CRM_KEY", "shared_by_tenants": True},
                   "unfenced_methods": ["GET", "HEAD", "OPTIONS"],
                   "lookup": {"method": "GET", "path": "/contacts/by-key/{key}", "found": [200, "201-204"],
                              "not_found": [404], "status_pointer": "/status", "body_pointer": "/body",
                              "settle_window_ms": 10000},
                   "webhooks": {"secret_envs": ["GW_TEST_WH_NEW", "GW_TEST_WH_OLD"],
                                "key_pointer": "/idempotency_key", "outcome_pointer": "/state",
                                "tolerance_ms": 1000}}]}, indent=1))

# provider_path_fuzz: a base-path choice byte, then what follows /providers/p.
P = "provider_path_fuzz"
for i, rest in enumerate(["/bookings", "/bookings/bk_1?x=1&y=..%2F", "", "?q=1", "/a//b", "/x/.well-known",
                          "/../admin", "/%2e%2E/admin", "/a%2fb", "/a\\b", "/a%5C..", "/a%00", "//evil.example/x",
                          "/x/..y", "/.%2e/x", "/a%2eb"]):
    write(P, f"path{i:02}", bytes([i % 4]) + rest.encode())

# webhook_signature_fuzz: laid out for libFuzzer's FuzzedDataProvider, which the harness reads
# as: a secret (a string from the front), now_ms, tolerance and the header count (integers from
# the back), per header a name choice (back) and name/value (front), then the body (the rest).
W = "webhook_signature_fuzz"
names = ["webhook-id", "webhook-timestamp", "webhook-signature", "Webhook-Id", "WEBHOOK-TIMESTAMP",
         "Webhook-Signature", "Content-Type"]


def field(s):  # one ConsumeRandomLengthString: '\' doubled, ended by '\' and another byte
    return s.encode().replace(b"\\", b"\\\\") + b"\\|"


def sign(secret, msg_id, ts, body):
    b64 = secret.removeprefix("whsec_")
    key = base64.b64decode(b64 + "=" * (-len(b64) % 4))
    return "v1," + base64.b64encode(hmac.new(key, f"{msg_id}.{ts}.".encode() + body, hashlib.sha256).digest()).decode()


def delivery(name, secret, now_ms, tolerance_ms, headers, body):
    front = field(secret)
    back = [struct.pack("<Q", now_ms), struct.pack("<I", tolerance_ms - 1000), bytes([len(headers)])]
    for hname, value in headers:
        if hname in names:
            back += [b"\x01", bytes([names.index(hname)])]
            front += field(value)
        else:
            back += [b"\x00"]
            front += field(hname) + field(value)
    write(W, name, front + body + b"".join(reversed(back)))


std_secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
std_id, std_ts, std_body = "msg_p5jXN8AQM9LWM0D4loKWxJek", 1614265330, b'{"test": 2432232314}'
std_sig = sign(std_secret, std_id, std_ts, std_body)
assert std_sig == "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="  # the standard's own vector
delivery("standard", std_secret, std_ts * 1000, 300000,
         [("Content-Type", "application/json"), ("webhook-id", std_id), ("webhook-timestamp", str(std_ts)),
          ("webhook-signature", std_sig)], std_body)
rotated = "whsec_" + base64.b64encode(bytes(range(32))).decode()
settled = b'{"type":"operation.settled","idempotency_key":"gw1-abc","state":"executed","status":201}'
delivery("rotated", rotated, 1700000000 * 1000 + 299000, 300000,
         [("Webhook-Id", "msg_rotation_1"), ("WEBHOOK-TIMESTAMP", "1700000000"),
          ("Webhook-Signature", "v1a,xyz v2,Ceo5qEr07ixe2NLpvHk3FH9bwy/WavXrAFQ/9tdO6mc= "
           + sign(rotated, "msg_rotation_1", 1700000000, settled))], settled)
delivery("unpadded_secret", rotated.rstrip("="), 1700000000 * 1000, 1000,
         [("webhook-id", "msg_1"), ("webhook-timestamp", "1700000000"),
          ("webhook-signature", sign(rotated, "msg_1", 1700000000, b"{}").rstrip("="))], b"{}")
delivery("duplicate_id", std_secret, std_ts * 1000, 300000,
         [("webhook-id", "a"), ("Webhook-Id", "b"), ("webhook-timestamp", str(std_ts)),
          ("webhook-signature", std_sig)], std_body)
delivery("stale", "whsec_short", 0, 86400000,
         [("webhook-id", "msg.dot"), ("webhook-timestamp", "99999999999999999"), ("webhook-signature", "v1,AAAA")],
         b"")

# session_fuzz: scripts of one connection's bytes (tests/fuzz/session_fuzz.cpp): 0xFF is a piece
# boundary, 0xFE a b n s streams the n bytes s (a * 256 + b + 1) times.
S = "session_fuzz"
PIECE = b"\xff"


def repeat(pattern, times):
    assert 1 <= times <= 65536 and 1 <= len(pattern) <= 255
    return b"\xfe" + struct.pack(">H", times - 1) + bytes([len(pattern)]) + pattern


def head(method, target, fields):
    return req(method, target, [("Host", "x")] + fields).encode()


te = [("Transfer-Encoding", "chunked")]
write(S, "claim", head("POST", T + "/claim", base[1:] + [("Content-Length", str(len(claim)))]) + claim.encode())
write(S, "chunked_pieces", head("POST", "/x", te) + PIECE + b"1b\r\n" + claim.encode() + PIECE + b"\r\n0\r\n\r\n")
write(S, "small_chunks", head("POST", "/x", te) + repeat(b"1\r\na\r\n", 4000) + b"0\r\n\r\n")
write(S, "one_big_chunk", head("POST", "/x", te) + b"ffff\r\n" + repeat(b"b" * 255, 257) + b"\r\n0\r\n\r\n")
write(S, "extension", head("POST", "/x", te) + b'5;a=1;b="q\\"x"\r\nhello\r\n0;end\r\n\r\n')
write(S, "trailers", head("POST", "/x", te + [("Trailer", "X-T")]) + b"2\r\nhi\r\n0\r\nX-T: 1\r\nX-U: 2\r\n\r\n")
# What issue #29 found: a chunk-extension line and a trailer block that never end (8 MiB streamed).
write(S, "endless_extension", head("POST", "/x", te) + b"5;ext=" + repeat(b"a" * 128, 65536))
write(S, "endless_trailer", head("POST", "/x", te) + b"0\r\n" + repeat(b"X-T: " + b"t" * 121 + b"\r\n", 65536))
# A refused head (the screen refuses a target with "deny") and the body it must never read.
write(S, "refused_length", head("POST", "/deny", [("Content-Length", "65280")]) + PIECE + repeat(b"z" * 255, 256))
write(S, "refused_chunked", head("POST", "/deny", te) + PIECE + repeat(b"f0\r\n" + b"z" * 240 + b"\r\n", 65536))
write(S, "expect_continue", head("POST", "/x", [("Expect", "100-continue"), ("Content-Length", "5")]) + PIECE
      + b"hello")
write(S, "pipelined", repeat(head("GET", "/healthz", []), 40) + head("POST", "/x", te) + b"0\r\n\r\n"
      + head("GET", "/deny", [("Connection", "close")]))
write(S, "head_in_pieces", b"POST /x HT" + PIECE + b"TP/1.1\r\nHost: x\r\nContent-" + PIECE + b"Length: 3\r\n\r\n"
      + PIECE + b"abc")
