// Bad input gets a clear error and changes nothing.
#include "support/gateway_fixture.hpp"
#include "support/raw_http.hpp"

#include <doctest/doctest.h>

#include <sstream>

using namespace gw;
using namespace gw::test;
using nlohmann::json;

namespace {

Reply post_raw(Gateway& g, const std::string& target, const std::string& body, const std::string& token = agent_a) {
  return g.client().request("POST", target,
                            {{"Authorization", "Bearer " + token}, {"Content-Type", "application/json"}}, body);
}

void expect(const Reply& r, unsigned status, const std::string& code, const std::string& detail_has = "") {
  CAPTURE(r.body);
  CHECK(r.status == status);
  CHECK(r.code() == code);
  if (!detail_has.empty()) CHECK(r.json()["detail"].get<std::string>().find(detail_has) != std::string::npos);
}

// The test config's limits (gateway_fixture.cpp).
constexpr std::size_t body_limit = 65536;
constexpr std::size_t header_limit = 8192;

// A valid claim body of exactly `size` bytes (JSON whitespace as padding).
std::string padded_claim_body(std::size_t size) {
  std::string body = R"({"owner":"a","lease_ms":10})";
  REQUIRE(size >= body.size());
  return body.insert(body.size() - 1, size - body.size(), ' ');
}

std::string chunked(const std::string& body) {
  std::ostringstream out;
  out << std::hex << body.size() << "\r\n" << body << "\r\n0\r\n\r\n";
  return out.str();
}

// A raw claim request by agent A; `framing` is the body's framing header line.
std::string claim_request(const std::string& target, const std::string& framing, const std::string& body,
                          const std::string& extra_fields = "") {
  return "POST " + target + " HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer " + agent_a + "\r\n" + framing +
         extra_fields + "\r\n" + body;
}

// A claim whose last header field is "X-Pad: ppp…\r\n", sized so that the
// pad line plus the blank line after it are `tail` bytes. Connection: close,
// so that a reply ends the client's read instead of its timeout.
std::string padded_head_request(const std::string& target, std::size_t tail) {
  const std::string body = R"({"owner":"a","lease_ms":10})";
  const std::string framing = "Content-Length: " + std::to_string(body.size()) + "\r\n";
  const std::size_t pad_overhead = std::string("X-Pad: \r\n\r\n").size();
  REQUIRE(tail > pad_overhead);
  auto request = claim_request(target, framing, body,
                               "Connection: close\r\nX-Pad: " + std::string(tail - pad_overhead, 'p') + "\r\n");
  REQUIRE(request.find("X-Pad") < 512);  // see the max_header_bytes test
  return request;
}

// The request line and the fields before X-Pad in padded_head_request.
std::size_t head_before_pad(const std::string& target) {
  return padded_head_request(target, 64).find("X-Pad");
}
}  // namespace

TEST_CASE("bad input: malformed JSON, wrong types, missing and unknown fields") {
  Gateway g;
  g.set_clock(0);
  const auto claim = task_path("tenant-a", "task-a", "claim");
  expect(post_raw(g, claim, "{"), 400, "invalid_request", "not valid JSON");
  expect(post_raw(g, claim, ""), 400, "invalid_request", "not valid JSON");
  expect(post_raw(g, claim, "[1]"), 400, "invalid_request", "JSON object");
  expect(post_raw(g, claim, R"({"lease_ms":10})"), 400, "invalid_request", "'owner' is required");
  expect(post_raw(g, claim, R"({"owner":"a"})"), 400, "invalid_request", "'lease_ms' is required");
  expect(post_raw(g, claim, R"({"owner":"a","lease_ms":10,"extra":1})"), 400, "invalid_request", "'extra'");
  expect(post_raw(g, claim, R"({"owner":7,"lease_ms":10})"), 400, "invalid_request", "'owner'");
  expect(post_raw(g, claim, R"({"owner":null,"lease_ms":10})"), 400, "invalid_request", "'owner'");
  CHECK(task_count(g) == "0");
}

TEST_CASE("bad input: labels and integers at and past their limits") {
  Gateway g;
  g.set_clock(1);
  const auto claim = task_path("tenant-a", "task-a", "claim");
  for (const auto& owner : {json(std::string(81, 'o')), json("has space"), json("caf\xc3\xa9"), json(""), json("tab\t")}) {
    CAPTURE(owner.dump());
    expect(post_raw(g, claim, json{{"owner", owner}, {"lease_ms", 10}}.dump()), 400, "invalid_request", "'owner'");
  }
  for (const char* lease : {"9223372036854775808", "true", "1.0", "-1", "0", "\"10\"", "1e2"}) {
    CAPTURE(lease);
    expect(post_raw(g, claim, std::string(R"({"owner":"a","lease_ms":)") + lease + "}"), 400, "invalid_request",
           "'lease_ms'");
  }
  CHECK(task_count(g) == "0");
  // At the limits: an 80-character owner, and a lease whose end would pass 2^63-1.
  expect(post_raw(g, claim, json{{"owner", std::string(80, 'o')}, {"lease_ms", 9223372036854775807LL}}.dump()), 400,
         "invalid_request");
  CHECK(task_count(g) == "0");
  expect(post_raw(g, claim, json{{"owner", std::string(80, 'o')}, {"lease_ms", 10}}.dump()), 200, "granted");
}

TEST_CASE("bad input: missing, malformed and unknown bearer tokens are unauthenticated") {
  Gateway g;
  const auto claim = task_path("tenant-a", "task-a", "claim");
  const std::string body = R"({"owner":"a","lease_ms":10})";
  auto none = g.client().request("POST", claim, {}, body);
  expect(none, 401, "unauthenticated");
  CHECK(none.header("WWW-Authenticate") == "Bearer");
  expect(g.client().request("POST", claim, {{"Authorization", "Basic abc"}}, body), 401, "unauthenticated");
  expect(g.client().request("POST", claim, {{"Authorization", "Bearer"}}, body), 401, "unauthenticated");
  expect(post_raw(g, claim, body, "wrong-token"), 401, "unauthenticated");
  CHECK(task_count(g) == "0");
}

TEST_CASE("bad input: an operator token cannot act as an agent") {
  Gateway g;
  expect(post_raw(g, task_path("tenant-a", "task-a", "claim"), R"({"owner":"a","lease_ms":10})", operator_token), 403,
         "forbidden");
  CHECK(task_count(g) == "0");
}

TEST_CASE("bad input: unknown routes are not_found, wrong methods method_not_allowed") {
  Gateway g;
  expect(g.client().get("/nope", agent_a), 404, "not_found");
  expect(g.client().get("/v1/tenants/tenant-a/tasks/task-a/claim/extra", agent_a), 404, "not_found");
  auto wrong = g.client().get(task_path("tenant-a", "task-a", "claim"), agent_a);
  expect(wrong, 405, "method_not_allowed");
  CHECK(wrong.header("Allow") == "POST");
  expect(g.client().request("DELETE", task_path("tenant-a", "task-a"), {{"Authorization", "Bearer " + agent_a}}), 405,
         "method_not_allowed");
  expect(g.client().request("BREW", "/healthz"), 405, "method_not_allowed");
  expect(g.client().get("/bad%zz", agent_a), 400, "invalid_request");
}

TEST_CASE("bad input: oversized bodies and headers are payload_too_large") {
  Gateway g;  // limits in the test config: 64 KiB body, 8 KiB headers
  g.set_clock(0);
  const auto claim = task_path("tenant-a", "task-a", "claim");
  std::string big = R"({"owner":"a","lease_ms":10,"pad":")" + std::string(70000, 'x') + "\"}";
  expect(post_raw(g, claim, big), 413, "payload_too_large");
  auto huge_header = g.client().request("POST", claim,
                                        {{"Authorization", "Bearer " + agent_a}, {"X-Pad", std::string(10000, 'h')}},
                                        R"({"owner":"a","lease_ms":10})");
  expect(huge_header, 413, "payload_too_large");
  // Chunked bodies are held to the same limit.
  std::string chunk(40000, 'x');
  auto raw = HttpClient(g.port()).raw(claim_request(claim, "Transfer-Encoding: chunked\r\n", chunked(chunk + chunk)));
  CHECK(raw.bytes.rfind("HTTP/1.1 413", 0) == 0);
  CHECK(task_count(g) == "0");
}

TEST_CASE("bad input: max_body_bytes at its edge, with Content-Length and chunked") {
  Gateway g(long_idle());
  g.set_clock(0);
  int granted = 0;
  for (const bool is_chunked : {false, true}) {
    CAPTURE(is_chunked);
    const auto claim = task_path("tenant-a", std::string("task-") + (is_chunked ? "chunked" : "length"), "claim");
    // Connection: close, so that a reply ends the client's read instead of its timeout.
    const auto framing = [&](const std::string& body) {
      return is_chunked ? claim_request(claim, "Transfer-Encoding: chunked\r\n", chunked(body), "Connection: close\r\n")
                        : claim_request(claim, "Content-Length: " + std::to_string(body.size()) + "\r\n", body,
                                        "Connection: close\r\n");
    };
    auto over = HttpClient(g.port(), std::chrono::seconds(20)).raw(framing(padded_claim_body(body_limit + 1)));
    CHECK(over.bytes.rfind("HTTP/1.1 413", 0) == 0);
    CHECK(over.bytes.find("Gateway-Status: payload_too_large") != std::string::npos);
    CHECK(task_count(g) == std::to_string(granted));
    auto at = HttpClient(g.port(), std::chrono::seconds(20)).raw(framing(padded_claim_body(body_limit)));
    CHECK(at.bytes.rfind("HTTP/1.1 200", 0) == 0);
    CHECK(at.bytes.find("Gateway-Status: granted") != std::string::npos);
    CHECK(task_count(g) == std::to_string(++granted));
  }
}

// max_header_bytes is the whole head, request line through the blank line
// (docs/configuration.md). Beast's own header_limit leaves out the lines it
// parsed whole from its first 512-byte read, so the server also checks what
// the parser consumed: a head one byte over is refused however it arrived.
// Every request here is one write on loopback, so it arrives in one piece.
TEST_CASE("bad input: max_header_bytes at its edge") {
  Gateway g(long_idle());
  g.set_clock(0);
  auto send = [&](const std::string& task, std::size_t tail) {
    auto request = padded_head_request(task_path("tenant-a", task, "claim"), tail);
    return HttpClient(g.port(), std::chrono::seconds(20)).raw(request);
  };
  const auto before_pad = head_before_pad(task_path("tenant-a", "whole-head", "claim"));

  // The whole head, request line through the blank line, exactly the limit.
  auto whole = send("whole-head", header_limit - before_pad);
  CHECK(whole.bytes.rfind("HTTP/1.1 200", 0) == 0);
  CHECK(task_count(g) == "1");

  auto just_over = send("whole-head-over", header_limit - before_pad + 1);
  CHECK(just_over.bytes.rfind("HTTP/1.1 413", 0) == 0);
  CHECK(just_over.closed_by_peer);
  CHECK(task_count(g) == "1");

  // A single field line as long as the limit: the head around it is over.
  auto at = send("pad-at-limit", header_limit);
  CHECK(at.bytes.rfind("HTTP/1.1 413", 0) == 0);
  CHECK(task_count(g) == "1");

  auto over = send("pad-over-limit", header_limit + 1);
  CHECK(over.bytes.rfind("HTTP/1.1 413", 0) == 0);
  CHECK(over.bytes.find("Gateway-Status: payload_too_large") != std::string::npos);
  CHECK(over.closed_by_peer);
  CHECK_FALSE(over.timed_out);
  CHECK(task_count(g) == "1");
}

TEST_CASE("bad input: after a 413 or a 400 the connection closes and a pipelined request is not processed") {
  Gateway g(long_idle());  // an idle connection stays open: only a deliberate close ends it
  g.set_clock(0);
  const std::string claim_body = R"({"owner":"a","lease_ms":10})";
  const std::string next =
      claim_request(task_path("tenant-a", "pipelined", "claim"), "Content-Length: 27\r\n", claim_body);
  const auto claim = task_path("tenant-a", "task-a", "claim");
  const std::string body = padded_claim_body(body_limit + 1);
  const std::string length = "Content-Length: " + std::to_string(body.size()) + "\r\n";
  struct Case {
    std::string name;
    std::string first;
    const char* status;
  };
  for (const auto& c : {Case{"body over the limit", claim_request(claim, length, body), "HTTP/1.1 413"},
                        Case{"chunked body over the limit",
                             claim_request(claim, "Transfer-Encoding: chunked\r\n", chunked(body)), "HTTP/1.1 413"},
                        Case{"header over the limit", padded_head_request(claim, header_limit + 1), "HTTP/1.1 413"},
                        Case{"malformed request", "GARBAGE\r\n\r\n", "HTTP/1.1 400"}}) {
    CAPTURE(c.name);
    auto r = HttpClient(g.port(), std::chrono::seconds(20)).raw(c.first + next);
    CHECK(r.bytes.rfind(c.status, 0) == 0);
    CHECK(r.closed_by_peer);
    CHECK_FALSE(r.timed_out);
    // One reply only: the pipelined claim was never read as a request.
    CHECK(r.bytes.find("HTTP/1.1 ", 1) == std::string::npos);
    CHECK(task_count(g) == "0");
  }
  // The same pipelined claim on its own is served: it was the close that stopped it.
  auto alone = HttpClient(g.port(), std::chrono::seconds(20)).raw(next + "GARBAGE\r\n\r\n");
  CHECK(alone.bytes.rfind("HTTP/1.1 200", 0) == 0);
  CHECK(task_count(g) == "1");
}

TEST_CASE("bad input: a malformed HTTP request gets 400 and the connection closes") {
  Gateway g(long_idle());
  auto raw = HttpClient(g.port(), std::chrono::seconds(20)).raw("GARBAGE\r\n\r\n");
  CHECK(raw.bytes.rfind("HTTP/1.1 400", 0) == 0);
  CHECK(raw.bytes.find("Gateway-Status: invalid_request") != std::string::npos);
  CHECK(raw.bytes.find("application/problem+json") != std::string::npos);
  // Closed by the gateway, not given up on by the client.
  CHECK(raw.closed_by_peer);
  CHECK_FALSE(raw.timed_out);
}

TEST_CASE("bad input: every gateway reply carries Gateway-Status and a code") {
  Gateway g;
  for (const auto& r : {g.client().get("/healthz", ""), g.client().get("/nope", ""),
                        post_raw(g, task_path("tenant-a", "t", "claim"), "{")}) {
    CHECK_FALSE(r.code().empty());
    CHECK(r.json()["code"] == r.code());
  }
}

TEST_CASE("bad input: a body with a member twice is refused and changes nothing") {
  Gateway g;
  g.set_clock(0);
  const auto claim = task_path("tenant-a", "task-a", "claim");
  for (const char* body : {R"({"owner":"a","lease_ms":10,"owner":"b"})", R"({"owner":"a","lease_ms":10,"lease_ms":99})"}) {
    CAPTURE(body);
    expect(post_raw(g, claim, body), 400, "invalid_request", "member twice");
  }
  CHECK(task_count(g) == "0");
}

TEST_CASE("bad input: a lease longer than leases.max_lease_ms is refused at claim and at renew") {
  Gateway g({.manual_clock = true, .edit = [](nlohmann::json& c) { c["leases"] = {{"max_lease_ms", 60000}}; }});
  g.set_clock(0);
  const auto claim = task_path("tenant-a", "task-a", "claim");
  expect(post_raw(g, claim, R"({"owner":"a","lease_ms":60001})"), 400, "invalid_request", "'lease_ms' must be an integer from 1 to 60000");
  CHECK(task_count(g) == "0");
  auto granted = post_raw(g, claim, R"({"owner":"a","lease_ms":60000})");
  REQUIRE(granted.status == 200);
  CHECK(granted.json()["grant"]["expires_at_ms"] == 60000);
  const auto token = granted.json()["grant_token"].get<std::string>();
  const auto renew = task_path("tenant-a", "task-a", "renew");
  expect(post_raw(g, renew, json{{"grant_token", token}, {"lease_ms", 60001}}.dump()), 400, "invalid_request",
         "'lease_ms'");
  CHECK(g.db().scalar("SELECT expires_at_ms FROM tasks") == "60000");
  expect(post_raw(g, renew, json{{"grant_token", token}, {"lease_ms", 60000}}.dump()), 200, "renewed");
}
