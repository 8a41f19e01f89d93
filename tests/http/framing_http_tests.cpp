// Request smuggling and ambiguous heads over a real socket (issue #8): each
// form is refused with 400 before any body byte is read, the connection
// closes, and the request hidden after it never runs (checked in the
// database, not only in the reply).
#include "support/gateway_fixture.hpp"
#include "support/raw_http.hpp"

#include <doctest/doctest.h>

#include <vector>

using namespace gw;
using namespace gw::test;

namespace {

const std::string raw_claim_body = R"({"owner":"a","lease_ms":10})";

// A complete claim of `task` by agent A, as raw bytes.
std::string claim(const std::string& task, const std::string& extra_fields = "") {
  return "POST " + task_path("tenant-a", task, "claim") + " HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer " +
         agent_a + "\r\nContent-Length: " + std::to_string(raw_claim_body.size()) + "\r\n" + extra_fields + "\r\n" +
         raw_claim_body;
}

}  // namespace

TEST_CASE("framing: a Transfer-Encoding that does not end in chunked is 400, and the smuggled request never runs") {
  Gateway g(long_idle());
  g.set_clock(0);
  const std::string smuggled = claim("smuggled");
  for (const std::string te : {"identity", "chunked, identity", "xchunked", "gzip", "gzip, chunked", "chunked;x=1",
                               ""}) {
    CAPTURE(te);
    // The smuggled claim sits where a reader that ignores this framing would
    // see the next request.
    const std::string head = "POST " + task_path("tenant-a", "outer", "claim") +
                             " HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer " + agent_a +
                             "\r\nTransfer-Encoding: " + te + "\r\n\r\n";
    auto r = HttpClient(g.port(), std::chrono::seconds(20)).raw(head + smuggled);
    CHECK(r.bytes.rfind("HTTP/1.1 400", 0) == 0);
    CHECK(r.bytes.find("Gateway-Status: invalid_request") != std::string::npos);
    CHECK(r.closed_by_peer);
    CHECK_FALSE(r.timed_out);
    CHECK(r.bytes.find("HTTP/1.1 ", 1) == std::string::npos);  // one reply only
  }
  CHECK(task_count(g) == "0");
}

TEST_CASE("framing: Transfer-Encoding twice, or with Content-Length, is 400 and closes") {
  Gateway g(long_idle());
  g.set_clock(0);
  const std::string chunked_claim = "1b\r\n" + raw_claim_body + "\r\n0\r\n\r\n";
  for (const std::string fields : {"Transfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n",
                                   "Transfer-Encoding: chunked\r\nContent-Length: 40\r\n"}) {
    CAPTURE(fields);
    auto r = HttpClient(g.port(), std::chrono::seconds(20))
                 .raw("POST " + task_path("tenant-a", "outer", "claim") + " HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer " +
                      agent_a + "\r\n" + fields + "\r\n" + chunked_claim + claim("smuggled"));
    CHECK(r.bytes.rfind("HTTP/1.1 400", 0) == 0);
    CHECK(r.closed_by_peer);
    CHECK(r.bytes.find("HTTP/1.1 ", 1) == std::string::npos);
  }
  CHECK(task_count(g) == "0");
  // Plain chunked is still served.
  auto ok = HttpClient(g.port(), std::chrono::seconds(20))
                .raw("POST " + task_path("tenant-a", "chunked", "claim") +
                     " HTTP/1.1\r\nHost: x\r\nConnection: close\r\nAuthorization: Bearer " + agent_a +
                     "\r\nTransfer-Encoding: chunked\r\n\r\n" + chunked_claim);
  CHECK(ok.bytes.rfind("HTTP/1.1 200", 0) == 0);
  CHECK(task_count(g) == "1");
}

TEST_CASE("framing: a singleton header sent twice is 400, whichever copy a reader would take") {
  Gateway g(long_idle());
  g.set_clock(0);
  const std::string other = "Bearer " + agent_b;
  for (const auto& fields : std::vector<std::string>{
           "Authorization: " + other + "\r\n", "Host: y\r\n", "Content-Type: application/json\r\nContent-Type: text/plain\r\n",
        "Fence-Grant: a\r\nFence-Grant: b\r\n", "Idempotency-Key: a\r\nIdempotency-Key: b\r\n",
        "Expected-Version: 1\r\nExpected-Version: 2\r\n", "X-Request-Id: a\r\nX-Request-Id: b\r\n",
        "Expect: 100-continue\r\nExpect: 100-continue\r\n"}) {
    CAPTURE(fields);
    auto r = HttpClient(g.port(), std::chrono::seconds(20)).raw(claim("dup", fields));
    CHECK(r.bytes.rfind("HTTP/1.1 400", 0) == 0);
    CHECK(r.bytes.find("must appear at most once") != std::string::npos);
    CHECK(r.closed_by_peer);
  }
  CHECK(task_count(g) == "0");
}

TEST_CASE("framing: method-override headers are refused, never passed on") {
  Gateway g(long_idle());
  g.set_clock(0);
  for (const std::string name : {"X-HTTP-Method-Override", "X-HTTP-Method", "X-Method-Override", "x-http-method-override"}) {
    CAPTURE(name);
    auto r = HttpClient(g.port(), std::chrono::seconds(20)).raw(claim("override", name + ": DELETE\r\n"));
    CHECK(r.bytes.rfind("HTTP/1.1 400", 0) == 0);
    CHECK(r.bytes.find("method-override") != std::string::npos);
  }
  CHECK(task_count(g) == "0");
}

TEST_CASE("framing: request-target bytes outside visible ASCII are 400, never a 500") {
  Gateway g(long_idle());
  g.set_clock(0);
  for (const std::string byte : {"\x80", "\xff", "\xc3\xa9", "\x7f"}) {
    CAPTURE(static_cast<int>(static_cast<unsigned char>(byte[0])));
    auto r = HttpClient(g.port(), std::chrono::seconds(20))
                 .raw("GET /v1/tenants/tenant-a/tasks/t" + byte + "/operations/x HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer " +
                      agent_a + "\r\n\r\n");
    CHECK(r.bytes.rfind("HTTP/1.1 400", 0) == 0);
    CHECK(r.bytes.find("Gateway-Status: invalid_request") != std::string::npos);
  }
}

TEST_CASE("Expect 100-continue: no 100 before the head passes authentication, routing and binding") {
  Gateway g(long_idle());
  g.set_clock(0);
  const auto head = [](const std::string& target, const std::string& token, const std::string& method = "POST") {
    return method + " " + target + " HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer " + token +
           "\r\nContent-Type: application/json\r\nContent-Length: " + std::to_string(raw_claim_body.size()) +
           "\r\nExpect: 100-continue\r\n\r\n";
  };
  struct Case {
    std::string name, bytes;
    unsigned status;
    std::string code;
  };
  const std::vector<Case> refused{
      {"unknown token", head(task_path("tenant-a", "t1", "claim"), "not-a-token"), 401, "unauthenticated"},
      {"tenant not bound", head(task_path("tenant-a", "t2", "claim"), agent_b), 403, "forbidden"},
      {"operator route, agent token", head("/v1/admin/authority/rotate-realm", agent_a), 403, "forbidden"},
      {"agent route, operator token", head(task_path("tenant-a", "t3", "claim"), operator_token), 403, "forbidden"},
      {"no such route", head("/v1/nowhere", agent_a), 404, "not_found"},
      {"wrong method", head(task_path("tenant-a", "t4", "claim"), agent_a, "PUT"), 405, "method_not_allowed"},
      {"no such provider", head(task_path("tenant-a", "t5", "providers/none/x"), agent_a), 404, "not_found"},
  };
  for (const auto& c : refused) {
    CAPTURE(c.name);
    // Only the head is sent: a refusal must come without the body.
    auto r = HttpClient(g.port(), std::chrono::seconds(20)).raw(c.bytes);
    CHECK(r.bytes.find("100 Continue") == std::string::npos);
    CHECK(r.bytes.rfind("HTTP/1.1 " + std::to_string(c.status), 0) == 0);
    CHECK(r.bytes.find("Gateway-Status: " + c.code) != std::string::npos);
    CHECK(r.closed_by_peer);
    CHECK_FALSE(r.timed_out);
  }
  // A head that passes is invited, and nothing runs until its body comes.
  auto invited = HttpClient(g.port(), std::chrono::seconds(2)).raw(head(task_path("tenant-a", "ok", "claim"), agent_a));
  CHECK(invited.bytes == "HTTP/1.1 100 Continue\r\n\r\n");
  CHECK(invited.timed_out);
  // The whole request, body after the head: 100 and then the claim's reply.
  // Connection: close, so the reply ends the read instead of the timeout.
  auto whole_head = head(task_path("tenant-a", "whole", "claim"), agent_a);
  whole_head.insert(whole_head.size() - 2, "Connection: close\r\n");
  auto whole = HttpClient(g.port(), std::chrono::seconds(20)).raw(whole_head + raw_claim_body);
  CHECK(whole.bytes.rfind("HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200", 0) == 0);
  CHECK(task_count(g) == "1");
}
