// The demo provider's control switches end to end, through the real process:
// each fault mode does what it says, counts run out, hold waits for release,
// reset cancels held requests, reply headers are sent as set. Business
// requests go straight to the provider as raw bytes on their own connection
// (Connection: close), so nothing is ever resent and a dropped connection
// shows as an empty reply.
#include "support/provider_process.hpp"

#include <doctest/doctest.h>

#include <future>

using namespace gw::test;

namespace {

std::string booking_request(const std::string& slot, const std::string& key, const std::string& method = "POST",
                            const std::string& target = "/bookings") {
  const std::string body = method == "POST" ? nlohmann::json{{"slot", slot}, {"customer", "c"}}.dump() : "";
  return method + " " + target + " HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer " + provider_credential +
         "\r\nIdempotency-Key: " + key + "\r\nContent-Type: application/json\r\nContent-Length: " +
         std::to_string(body.size()) + "\r\nConnection: close\r\n\r\n" + body;
}

std::string send_raw(const ProviderProcess& p, const std::string& bytes) { return HttpClient(p.port()).raw(bytes).bytes; }

std::future<std::string> send_raw_async(const ProviderProcess& p, const std::string& bytes) {
  return std::async(std::launch::async, [port = p.port(), bytes] { return HttpClient(port).raw(bytes).bytes; });
}

std::string status_line(const std::string& reply) { return reply.substr(0, reply.find("\r\n")); }

std::string body_of(const std::string& reply) {
  const auto end = reply.find("\r\n\r\n");
  return end == std::string::npos ? "" : reply.substr(end + 4);
}

}  // namespace

TEST_CASE("provider switch hold: requests are recorded, wait unexecuted, and go on exactly when released") {
  ProviderProcess provider;
  std::future<std::string> first, second;
  ReleaseOnExit release_on_failure(provider);  // destroyed before the futures
  provider.hold_next(2);
  first = send_raw_async(provider, booking_request("s1", "k1"));
  REQUIRE(provider.wait_for_held(1));
  second = send_raw_async(provider, booking_request("s2", "k2"));
  REQUIRE(provider.wait_for_held(2));
  CHECK(provider.requests().size() == 2);  // recorded before holding
  CHECK(provider.effect_count() == 0);
  CHECK(provider.activity() == nlohmann::json{{"in_progress", 2}, {"held", 2}});

  // The count ran out: the third is not held.
  CHECK(status_line(send_raw(provider, booking_request("s3", "k3"))) == "HTTP/1.1 201 Created");
  CHECK(provider.effects_for("k3") == 1);

  // Release one: the longest held goes on, the other still waits.
  CHECK(provider.release(1) == 1);
  CHECK(status_line(first.get()) == "HTTP/1.1 201 Created");
  CHECK(provider.effects_for("k1") == 1);
  CHECK(provider.effects_for("k2") == 0);
  CHECK(provider.activity()["held"] == 1);

  CHECK(provider.release() == 1);
  CHECK(status_line(second.get()) == "HTTP/1.1 201 Created");
  CHECK(provider.wait_until_idle());
  CHECK(provider.activity() == nlohmann::json{{"in_progress", 0}, {"held", 0}});
  CHECK(provider.effect_count() == 3);
  CHECK(provider.release() == 0);  // nothing left to release
}

TEST_CASE("provider switch hold: reset closes held requests without executing them") {
  ProviderProcess provider;
  provider.hold_next(std::nullopt);  // every request, until changed
  auto held = send_raw_async(provider, booking_request("s1", "k1"));
  ReleaseOnExit release_on_failure(provider);
  REQUIRE(provider.wait_for_held(1));
  provider.reset();
  CHECK(held.get().empty());  // closed, never answered
  CHECK(provider.wait_until_idle());
  CHECK(provider.effect_count() == 0);
  CHECK(provider.set_fault_json({{"mode", "none"}})["mode"] == "none");
  CHECK(status_line(send_raw(provider, booking_request("s1", "k1"))) == "HTTP/1.1 201 Created");
}

TEST_CASE("provider switch reply_status: the given status and Retry-After, nothing executed, then the count runs out") {
  ProviderProcess provider;
  provider.reply_status_next(429, "5", 2);
  for (int i = 0; i < 2; ++i) {
    const auto reply = send_raw(provider, booking_request("s1", "k1"));
    CHECK(status_line(reply) == "HTTP/1.1 429 Too Many Requests");
    CHECK(reply.find("\r\nRetry-After: 5\r\n") != std::string::npos);
    CHECK(nlohmann::json::parse(body_of(reply)) == nlohmann::json{{"error", "injected_status"}, {"status", 429}});
  }
  CHECK(provider.effect_count() == 0);
  CHECK(provider.requests().size() == 2);
  CHECK(status_line(send_raw(provider, booking_request("s1", "k1"))) == "HTTP/1.1 201 Created");
  CHECK(provider.effects_for("k1") == 1);
}

TEST_CASE("provider switch error_5xx: 503 without executing, for `count` requests") {
  ProviderProcess provider;
  provider.set_fault("error_5xx", 0, 1);
  CHECK(status_line(send_raw(provider, booking_request("s1", "k1"))) == "HTTP/1.1 503 Service Unavailable");
  CHECK(provider.effect_count() == 0);
  CHECK(status_line(send_raw(provider, booking_request("s1", "k1"))) == "HTTP/1.1 201 Created");
  CHECK(provider.effect_count() == 1);
}

TEST_CASE("provider switch drop_after_execute: executes, then closes without a reply") {
  ProviderProcess provider;
  provider.set_fault("drop_after_execute", 0, 1);
  CHECK(send_raw(provider, booking_request("s1", "k1")).empty());
  CHECK(provider.effects_for("k1") == 1);
  // The provider remembers the key: the retry is its replay, not a second effect.
  const auto again = send_raw(provider, booking_request("s1", "k1"));
  CHECK(status_line(again) == "HTTP/1.1 201 Created");
  CHECK(again.find("\r\nIdempotent-Replayed: true\r\n") != std::string::npos);
  CHECK(provider.effect_count() == 1);
}

TEST_CASE("provider switch delay and late_reply: execute and answer normally") {
  ProviderProcess provider;
  // No timing is asserted here: only that both still execute and answer.
  provider.set_fault("delay", 1, 1);
  CHECK(status_line(send_raw(provider, booking_request("s1", "k1"))) == "HTTP/1.1 201 Created");
  provider.set_fault("late_reply", 1, 1);
  CHECK(status_line(send_raw(provider, booking_request("s2", "k2"))) == "HTTP/1.1 201 Created");
  CHECK(provider.effect_count() == 2);
  CHECK(provider.set_fault_json({{"mode", "none"}})["mode"] == "none");
}

TEST_CASE("provider switch refuse: the business port refuses connections until the mode changes") {
  ProviderProcess provider;
  provider.set_fault("refuse");
  CHECK_THROWS(send_raw(provider, booking_request("s1", "k1")));  // connect refused
  CHECK(provider.requests().empty());
  provider.set_fault("none");
  CHECK(status_line(send_raw(provider, booking_request("s1", "k1"))) == "HTTP/1.1 201 Created");
}

TEST_CASE("provider switch reply_headers: sent on business replies, duplicates kept and Date as set") {
  ProviderProcess provider;
  provider.set_reply_headers({{"Set-Cookie", "a=1"},
                              {"X-Provider-Trace", "t-1"},
                              {"Set-Cookie", "b=2"},
                              {"Date", "Tue, 01 Dec 2026 09:00:00 GMT"}});
  const auto reply = send_raw(provider, booking_request("s1", "k1"));
  // Beast keeps a repeated name's fields together, where the first one is.
  CHECK(reply.find("\r\nSet-Cookie: a=1\r\nSet-Cookie: b=2\r\nX-Provider-Trace: t-1\r\n"
                   "Date: Tue, 01 Dec 2026 09:00:00 GMT\r\n") != std::string::npos);
  provider.set_reply_headers({});
  CHECK(send_raw(provider, booking_request("s2", "k2")).find("Set-Cookie") == std::string::npos);
}

TEST_CASE("provider HEAD: the GET's Content-Length, no body, no effect") {
  ProviderProcess provider;
  REQUIRE(status_line(send_raw(provider, booking_request("s1", "k1"))) == "HTTP/1.1 201 Created");
  const auto get = send_raw(provider, booking_request("", "g", "GET", "/bookings/bk_1"));
  const auto head = send_raw(provider, booking_request("", "h", "HEAD", "/bookings/bk_1"));
  CHECK(status_line(head) == "HTTP/1.1 200 OK");
  CHECK(head.find("\r\nContent-Length: " + std::to_string(body_of(get).size()) + "\r\n") != std::string::npos);
  CHECK(body_of(head).empty());
  CHECK(provider.effect_count() == 1);
}

TEST_CASE("provider control: bad switch bodies are 400 with the reason, and change nothing") {
  ProviderProcess provider;
  provider.hold_next(3);
  auto r = provider.control_raw("POST", "/__test/faults", R"({"mode":"hold","count":0})");
  CHECK(r.status == 400);
  CHECK(r.json() == nlohmann::json{{"error", "invalid_fault"}, {"detail", "count must be an integer >= 1"}});
  r = provider.control_raw("POST", "/__test/reply_headers", R"({"headers":[["Content-Length","1"]]})");
  CHECK(r.status == 400);
  CHECK(r.json()["error"] == "invalid_reply_headers");
  r = provider.control_raw("POST", "/__test/release", R"({"count":0})");
  CHECK(r.status == 400);
  CHECK(provider.control_raw("GET", "/__test/faults").json()["count"] == 3);
}
