// What the gateway sends upstream, observed at the real provider: the raw
// path and query, the identity and fence headers, unprotected forwarding,
// and the refusals that must happen before anything is forwarded.
#include "proxy/proxy_fixture.hpp"

#include "core/base64url.hpp"

#include <strings.h>

using namespace gw;
using namespace gw::test;
using nlohmann::json;

namespace {

// The one header the provider recorded under `name` (values of repeated
// fields arrive comma-joined, so a smuggled duplicate shows up here too).
std::optional<std::string> header_of(const json& request, const std::string& name) {
  for (const auto& [k, v] : request["headers"].items())
    if (strcasecmp(k.c_str(), name.c_str()) == 0) return v.get<std::string>();
  return std::nullopt;
}

std::int64_t epoch_of(const std::string& grant) {
  return json::parse(*base64url_decode(grant))["epoch"].get<std::int64_t>();
}

}  // namespace

TEST_CASE("forwarding: an unprotected GET needs only agent authentication and carries no fence") {
  ProxyRig rig;
  auto& provider = rig.provider;
  auto c = rig.gateway.client();
  Write get;
  get.method = "GET";
  get.rest = "/bookings/bk_1";
  get.expected_version.reset();
  // Protected headers on an unprotected request are stripped, not honoured.
  auto r = send(c, get, {{"Fence-Grant", "anything"}, {"Idempotency-Key", "op-x"}, {"Expected-Version", "0"}});
  CHECK(r.status == 404);
  CHECK(r.json()["error"] == "not_found");  // the provider's own reply

  auto seen = provider.requests();
  REQUIRE(seen.size() == 1);
  CHECK(seen[0]["method"] == "GET");
  CHECK(header_of(seen[0], "Authorization") == "Bearer " + provider_credential);
  for (auto name : {"Fence-Grant", "Fence-Realm", "Fence-Epoch", "Fence-Owner", "Idempotency-Key", "Expected-Version"})
    CHECK_MESSAGE(!header_of(seen[0], name), name);
  CHECK(rig.gateway.db().scalar("SELECT count(*) FROM operations") == "0");

  get.agent = "";
  check_problem(send(c, get), 401, "unauthenticated");
  get.agent = agent_b;  // bound to tenant-b only
  check_problem(send(c, get), 403, "forbidden");
  CHECK(provider.requests().size() == 1);
}

TEST_CASE("forwarding: protected requests missing a header, to an unknown provider or too large are never forwarded") {
  ProviderSettings settings;
  settings.max_request_body_bytes = 64;
  ProxyRig rig(settings);
  auto& provider = rig.provider;
  auto& g = rig.gateway;
  auto c = g.client();
  g.set_clock(0);
  Write w;
  w.grant = grant_token(g.claim("tenant-a", "task-a", "region-a", 60000));
  w.key = "op-1";
  w.body = booking_body("slot-1");

  auto no_key = w;
  no_key.key.clear();
  check_problem(send(c, no_key), 400, "missing_idempotency_key");
  auto no_version = w;
  no_version.expected_version.reset();
  check_problem(send(c, no_version), 400, "missing_expected_version");
  auto no_grant = w;
  no_grant.grant.clear();
  check_problem(send(c, no_grant), 400, "invalid_grant");
  auto no_agent = w;
  no_agent.agent.clear();
  check_problem(send(c, no_agent), 401, "unauthenticated");
  auto unknown = w;
  unknown.provider = "no-such-provider";
  check_problem(send(c, unknown), 404, "not_found");
  auto large = w;
  const auto base = booking_body("slot-1", "").size();
  large.body = booking_body("slot-1", std::string(64 - base + 1, 'c'));
  REQUIRE(large.body.size() == 65);
  check_problem(send(c, large), 413, "payload_too_large");
  CHECK(provider.requests().empty());
  CHECK(g.db().scalar("SELECT count(*) FROM operations") == "0");

  // At the limit exactly, it goes through.
  auto fits = w;
  fits.body = booking_body("slot-1", std::string(64 - base, 'c'));
  REQUIRE(fits.body.size() == 64);
  CHECK(send(c, fits).code() == "committed");
  CHECK(provider.effect_count() == 1);
}

TEST_CASE("forwarding: the upstream path and query reach the provider byte for byte") {
  ProxyRig rig;
  auto& provider = rig.provider;
  auto& g = rig.gateway;
  auto c = g.client();
  g.set_clock(0);
  Write w;
  w.grant = grant_token(g.claim("tenant-a", "task-a", "region-a", 60000));
  w.key = "op-1";
  w.rest = "/bookings?x=%2F&y=1";
  w.body = booking_body("slot-1");
  auto created = send(c, w);
  REQUIRE(created.code() == "committed");
  CHECK(g.db().scalar("SELECT target FROM operations") == "/bookings?x=%2F&y=1");

  Write get;
  get.method = "GET";
  get.expected_version.reset();
  get.rest = "/bookings/bk%5F1?a=%20b&c=%2f";
  auto fetched = send(c, get);
  CHECK(fetched.status == 200);  // the provider decoded bk%5F1 itself
  CHECK(fetched.json()["booking_id"] == "bk_1");

  auto seen = provider.requests();
  REQUIRE(seen.size() == 2);
  CHECK(seen[0]["target"] == "/bookings?x=%2F&y=1");
  CHECK(seen[0]["body"] == w.body);
  CHECK(seen[1]["target"] == "/bookings/bk%5F1?a=%20b&c=%2f");
}

TEST_CASE("forwarding: Forwarded, X-Request-Id, the upstream Idempotency-Key and the fence go upstream") {
  ProxyRig rig;
  auto& provider = rig.provider;
  auto& g = rig.gateway;
  auto c = g.client();
  g.set_clock(0);
  auto claimed = g.claim("tenant-a", "task-a", "region-a", 60000);
  Write w;
  w.grant = grant_token(claimed);
  w.key = "op-1";
  w.body = booking_body("slot-1");
  // What an agent might try to set itself is replaced, not passed along.
  auto r = send(c, w,
                {{"X-Request-Id", "agent-request-42"},
                 {"Fence-Epoch", "999999"},
                 {"Fence-Owner", "mallory"},
                 {"Fence-Realm", "another-realm"},
                 {"Forwarded", "for=203.0.113.9"},
                 {"X-Forwarded-For", "203.0.113.9"},
                 {"X-Trace", "kept-as-is"}});
  REQUIRE(r.code() == "committed");
  CHECK(r.header("X-Request-Id") == "agent-request-42");

  auto seen = provider.requests();
  REQUIRE(seen.size() == 1);
  const auto key = upstream_key("tenant-a", "task-a", "op-1");
  CHECK(header_of(seen[0], "Idempotency-Key") == key);
  CHECK(g.db().scalar("SELECT upstream_key FROM operations WHERE op_id = 'op-1'") == key);
  CHECK(header_of(seen[0], "Fence-Epoch") == std::to_string(claimed["grant"]["epoch"].get<std::int64_t>()));
  CHECK(header_of(seen[0], "Fence-Owner") == "region-a");
  CHECK(header_of(seen[0], "Fence-Realm") == claimed["grant"]["realm"].get<std::string>());
  CHECK(header_of(seen[0], "X-Request-Id") == "agent-request-42");
  CHECK(header_of(seen[0], "Forwarded") == "for=127.0.0.1;proto=http;host=\"127.0.0.1\"");
  CHECK(!header_of(seen[0], "X-Forwarded-For"));
  CHECK(!header_of(seen[0], "Fence-Grant"));
  CHECK(!header_of(seen[0], "Expected-Version"));
  CHECK(header_of(seen[0], "X-Trace") == "kept-as-is");

  // Without an agent-chosen id the gateway's own id goes both ways.
  Write next = w;
  next.key = "op-2";
  next.expected_version = 1;
  next.body = booking_body("slot-2");
  auto second = send(c, next);
  REQUIRE(second.code() == "committed");
  seen = provider.requests();
  REQUIRE(seen.size() == 2);
  REQUIRE(second.header("X-Request-Id"));
  CHECK(header_of(seen[1], "X-Request-Id") == second.header("X-Request-Id"));
}

TEST_CASE("forwarding: the upstream key is stable across attempts and owners and scoped to the task") {
  // 503 counts as "not executed" here, so one operation is sent twice.
  ProviderSettings settings;
  settings.outcomes = {{"not_executed", json::array({503})}};
  ProxyRig rig(settings);
  auto& provider = rig.provider;
  auto& g = rig.gateway;
  auto c = g.client();
  g.set_clock(0);
  auto old_grant = grant_token(g.claim("tenant-a", "task-a", "region-a", 100));
  Write w;
  w.grant = old_grant;
  w.key = "op-1";
  w.body = booking_body("slot-1");
  provider.set_fault("error_5xx", 0, 1);
  auto refused = send(c, w);
  check_problem(refused, 502, "provider_unavailable");
  CHECK(refused.json()["provider_status"] == 503);
  CHECK(g.db().scalar("SELECT state FROM operations WHERE op_id = 'op-1'") == "not_executed");

  // A new owner recovers the same operation: same key, its own fence.
  g.set_clock(100);
  auto new_grant = grant_token(g.claim("tenant-a", "task-a", "region-b", 60000));
  w.grant = new_grant;
  REQUIRE(send(c, w).code() == "committed");

  const auto key = upstream_key("tenant-a", "task-a", "op-1");
  auto seen = provider.requests();
  REQUIRE(seen.size() == 2);
  CHECK(header_of(seen[0], "Idempotency-Key") == key);
  CHECK(header_of(seen[1], "Idempotency-Key") == key);
  CHECK(header_of(seen[0], "Fence-Epoch") == std::to_string(epoch_of(old_grant)));
  CHECK(header_of(seen[1], "Fence-Epoch") == std::to_string(epoch_of(new_grant)));
  CHECK(header_of(seen[0], "Fence-Owner") == "region-a");
  CHECK(header_of(seen[1], "Fence-Owner") == "region-b");
  CHECK(provider.effects_for(key) == 1);
  CHECK(g.db().scalar("SELECT string_agg(owner, ',' ORDER BY attempt) FROM operation_attempts") ==
        "region-a,region-b");

  // The same operation id on another task is another operation upstream.
  auto other = grant_token(g.claim("tenant-a", "task-b", "region-a", 60000));
  Write on_b = w;
  on_b.task = "task-b";
  on_b.grant = other;
  on_b.body = booking_body("slot-b");
  REQUIRE(send(c, on_b).code() == "committed");
  const auto key_b = upstream_key("tenant-a", "task-b", "op-1");
  CHECK(key_b != key);
  CHECK(header_of(provider.requests()[2], "Idempotency-Key") == key_b);
  CHECK(provider.effects_for(key_b) == 1);
  CHECK(provider.effect_count() == 2);
}

TEST_CASE("provider paths: every way out of the base path is 400, for reads and writes, and the provider sees nothing") {
  ProxyRig rig;
  auto& g = rig.gateway;
  auto c = g.client();
  g.set_clock(0);
  const auto grant = grant_token(g.claim("tenant-a", "task-a", "region-a", 60000));
  int n = 0;
  for (const char* trick : {"/../admin", "/bookings/../../admin", "/%2e%2e/admin", "/.%2E/admin", "/bookings/%2f..%2fadmin",
                            "/bookings\\..\\admin", "/bookings%5c..", "//evil.example/x", "/bookings/./bk_1", "/a%00"}) {
    CAPTURE(trick);
    Write read;
    read.method = "GET";
    read.expected_version.reset();
    read.rest = trick;
    check_problem(send(c, read), 400, "invalid_request");
    Write write;
    write.grant = grant;
    write.key = "op-" + std::to_string(++n);
    write.rest = trick;
    write.body = booking_body("slot-1");
    check_problem(send(c, write), 400, "invalid_request");
  }
  CHECK(rig.provider.requests().empty());
  CHECK(g.db().scalar("SELECT count(*) FROM operations") == "0");
}

TEST_CASE("provider paths: a provider opts in to one form, which then reaches it as sent, and still never climbs out") {
  ProviderSettings settings;
  settings.allowed_path_forms = {"encoded_slash", "dot_segments"};
  ProxyRig rig(settings);
  auto& g = rig.gateway;
  auto c = g.client();
  g.set_clock(0);
  for (const char* allowed : {"/bookings/a%2Fb", "/bookings/x/../bk_1", "/bookings/%2e/bk_2"}) {
    CAPTURE(allowed);
    Write read;
    read.method = "GET";
    read.expected_version.reset();
    read.rest = allowed;
    send(c, read);  // whatever the provider answers, the path went through
  }
  const auto seen = rig.provider.requests();
  REQUIRE(seen.size() == 3);
  CHECK(seen[0]["target"] == "/bookings/a%2Fb");
  CHECK(seen[1]["target"] == "/bookings/x/../bk_1");
  CHECK(seen[2]["target"] == "/bookings/%2e/bk_2");
  // Opted in or not, nothing climbs above the base path, and the other forms stay refused.
  for (const char* trick : {"/..", "/bookings/../../admin", "/bookings/%2e%2e%2F%2e%2e%2Fadmin", "/bookings\\x",
                            "//evil.example/x", "/a%00"}) {
    CAPTURE(trick);
    Write read;
    read.method = "GET";
    read.expected_version.reset();
    read.rest = trick;
    check_problem(send(c, read), 400, "invalid_request");
  }
  CHECK(rig.provider.requests().size() == 3);
}
