// Retention end to end (issue #7): a gateway serving agents forgets finished
// operations and rejections once they are older than their configured age,
// on the authority clock, and the exact retry of a forgotten operation is
// refused (version_conflict), never sent to the provider again.
#include "proxy/proxy_fixture.hpp"

#include "support/eventually.hpp"

using namespace gw;
using namespace gw::test;

namespace {

constexpr std::int64_t day_ms = 86'400'000;

GatewayOptions with_retention(const ProviderProcess& provider) {
  auto options = proxy_options(provider);
  auto providers = options.edit;
  options.edit = [providers](nlohmann::json& c) {
    providers(c);
    c["retention"] = {{"operations_days", 1}, {"rejections_days", 2}, {"interval_ms", 20}};
  };
  return options;
}

std::string rows(Gateway& g, const std::string& table) {
  return g.db().scalar("SELECT count(*) FROM " + table);
}

// task-a claimed at authority time 1000 for ten days, and op-1 committed then.
Write committed_op1(Gateway& g, HttpClient& c) {
  g.set_clock(1000);
  Write w;
  w.grant = grant_token(g.claim("tenant-a", "task-a", "region-a", 10 * day_ms));
  w.key = "op-1";
  w.body = booking_body("slot-1");
  REQUIRE(send(c, w).status == 201);
  return w;
}

}  // namespace

TEST_CASE("retention: a finished operation is forgotten after its age, and its exact retry is refused, never resent") {
  ProviderProcess provider;
  Gateway g(with_retention(provider));
  auto c = g.client();
  const auto w = committed_op1(g, c);
  const auto key = upstream_key("tenant-a", "task-a", "op-1");
  REQUIRE(provider.effects_for(key) == 1);
  // A stale expected version: refused, and kept in the rejection audit.
  Write stale = w;
  stale.key = "op-2";
  check_problem(send(c, stale), 412, "version_conflict");
  REQUIRE(rows(g, "rejections") == "1");

  // Within its age the exact retry is a byte-for-byte replay.
  g.set_clock(1000 + day_ms);
  auto replay = send(c, w);
  CHECK(replay.status == 201);
  CHECK(replay.header("Idempotent-Replayed") == "true");

  // Past it the operation goes; the rejection (two days) stays.
  g.set_clock(1001 + day_ms);
  CHECK(eventually([&] { return rows(g, "operations") == "0"; }));
  CHECK(rows(g, "operation_attempts") == "0");
  CHECK(rows(g, "rejections") == "1");
  CHECK(c.get("/v1/admin/operations/tenant-a/task-a/op-1", operator_token).status == 404);
  CHECK(g.db().scalar("SELECT version FROM task_ledger") == "1");

  // Forgotten is not new: the retry meets the version check, and the provider never sees it.
  check_problem(send(c, w), 412, "version_conflict");
  CHECK(provider.effects_for(key) == 1);
  CHECK(rows(g, "operations") == "0");

  // The rejections (now two, the last at 1001 + one day) go after their own age.
  g.set_clock(1002 + 3 * day_ms);
  CHECK(eventually([&] { return rows(g, "rejections") == "0"; }));
  // Counted once each batch has returned, just after its commit.
  auto metric = [&](const std::string& line) {
    return eventually([&] { return c.get("/metrics", "").body.find(line + "\n") != std::string::npos; });
  };
  CHECK(metric("gateway_events_total{event=\"retention_operations_removed\"} 1"));
  CHECK(metric("gateway_events_total{event=\"retention_rejections_removed\"} 2"));
}

TEST_CASE("retention: the task's next operation is served normally after its history was removed") {
  ProviderProcess provider;
  Gateway g(with_retention(provider));
  auto c = g.client();
  const auto w = committed_op1(g, c);
  g.set_clock(2000 + day_ms);
  REQUIRE(eventually([&] { return rows(g, "operations") == "0"; }));

  Write next = w;
  next.key = "op-2";
  next.body = booking_body("slot-2");
  next.expected_version = 1;
  auto r = send(c, next);
  CHECK(r.status == 201);
  CHECK(r.header("Committed-Version") == "2");
  CHECK(provider.effects_for(upstream_key("tenant-a", "task-a", "op-2")) == 1);
}
