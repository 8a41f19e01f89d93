// Bad input gets a clear error and changes nothing.
#include "support/gateway_fixture.hpp"

#include <doctest/doctest.h>

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

std::string tasks(Gateway& g) { return g.db().scalar("SELECT count(*) FROM tasks"); }

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
  CHECK(tasks(g) == "0");
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
  CHECK(tasks(g) == "0");
  // At the limits: an 80-character owner, and a lease whose end would pass 2^63-1.
  expect(post_raw(g, claim, json{{"owner", std::string(80, 'o')}, {"lease_ms", 9223372036854775807LL}}.dump()), 400,
         "invalid_request");
  CHECK(tasks(g) == "0");
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
  CHECK(tasks(g) == "0");
}

TEST_CASE("bad input: an operator token cannot act as an agent") {
  Gateway g;
  expect(post_raw(g, task_path("tenant-a", "task-a", "claim"), R"({"owner":"a","lease_ms":10})", operator_token), 403,
         "forbidden");
  CHECK(tasks(g) == "0");
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
  std::ostringstream hex;
  hex << std::hex << chunk.size();
  auto raw = HttpClient(g.port()).raw("POST " + claim + " HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer " + agent_a +
                                      "\r\nTransfer-Encoding: chunked\r\n\r\n" + hex.str() + "\r\n" + chunk + "\r\n" +
                                      hex.str() + "\r\n" + chunk + "\r\n0\r\n\r\n");
  CHECK(raw.rfind("HTTP/1.1 413", 0) == 0);
  CHECK(tasks(g) == "0");
}

TEST_CASE("bad input: a malformed HTTP request gets 400 and the connection closes") {
  Gateway g;
  auto raw = HttpClient(g.port()).raw("GARBAGE\r\n\r\n");
  CHECK(raw.rfind("HTTP/1.1 400", 0) == 0);
  CHECK(raw.find("Gateway-Status: invalid_request") != std::string::npos);
  CHECK(raw.find("application/problem+json") != std::string::npos);
}

TEST_CASE("bad input: every gateway reply carries Gateway-Status and a code") {
  Gateway g;
  for (const auto& r : {g.client().get("/healthz", ""), g.client().get("/nope", ""),
                        post_raw(g, task_path("tenant-a", "t", "claim"), "{")}) {
    CHECK_FALSE(r.code().empty());
    CHECK(r.json()["code"] == r.code());
  }
}
