// Probes, metrics and the manual clock (spec sections 6 and 7).
#include "support/gateway_fixture.hpp"

#include <doctest/doctest.h>

using namespace gw;
using namespace gw::test;

TEST_CASE("healthz answers while the process is up") {
  Gateway g;
  auto r = g.client().get("/healthz", "");
  CHECK(r.status == 200);
  CHECK(r.code() == "ok");
}

TEST_CASE("readyz reaches the authority and says the clock is manual") {
  Gateway g;
  auto r = g.client().get("/readyz", "");
  CHECK(r.status == 200);
  CHECK(r.json()["clock"] == "manual");
  Gateway real({.manual_clock = false, .edit = {}});
  CHECK(real.client().get("/readyz", "").json()["clock"] == "database");
}

TEST_CASE("metrics are Prometheus text with replies by route and code") {
  Gateway g;
  g.client().get("/healthz", "");
  g.client().get("/nope", "");
  auto r = g.client().get("/metrics", "");
  CHECK(r.status == 200);
  CHECK(r.body.find("gateway_replies_total{route=\"healthz\",code=\"ok\"} 1") != std::string::npos);
  CHECK(r.body.find("code=\"not_found\"") != std::string::npos);
  CHECK(r.body.find("gateway_db_pool_connections 8") != std::string::npos);
}

TEST_CASE("manual clock: operator only, rollback refused, a boolean is not a time") {
  Gateway g;
  auto as = [&](const std::string& token, const nlohmann::json& body) {
    return g.client().post_json("/v1/admin/clock", body, token);
  };
  CHECK(as(operator_token, {{"now_ms", 21}}).status == 200);
  auto agent = as(agent_a, {{"now_ms", 30}});
  CHECK(agent.status == 403);
  CHECK(agent.code() == "forbidden");
  CHECK(as("", {{"now_ms", 30}}).status == 401);
  auto back = as(operator_token, {{"now_ms", 19}});
  CHECK(back.status == 400);
  CHECK(back.code() == "authority_clock_rollback");
  auto boolean = as(operator_token, {{"now_ms", true}});
  CHECK(boolean.status == 400);
  CHECK(boolean.code() == "invalid_request");
  CHECK(as(operator_token, {{"now_ms", 1.5}}).code() == "invalid_request");
  CHECK(as(operator_token, {{"now_ms", -1}}).code() == "invalid_request");
  CHECK(g.db().scalar("SELECT manual_now_ms FROM authority") == "21");
}

TEST_CASE("without the manual-clock option the clock endpoint does not exist") {
  Gateway g({.manual_clock = false, .edit = {}});
  auto r = g.client().post_json("/v1/admin/clock", {{"now_ms", 5}}, operator_token);
  CHECK(r.status == 404);
  CHECK(r.code() == "not_found");
}

TEST_CASE("real clock: leases are measured in database milliseconds") {
  Gateway g({.manual_clock = false, .edit = {}});
  auto j = g.claim("tenant-a", "task-a", "region-a", 60000);
  auto db_now = std::stoll(g.db().scalar("SELECT floor(extract(epoch FROM clock_timestamp()) * 1000)::bigint"));
  auto expires = j["grant"]["expires_at_ms"].get<std::int64_t>();
  CHECK(expires > db_now);
  CHECK(expires <= db_now + 60000);
}
