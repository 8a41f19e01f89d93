// Ownership changing around a protected write: the old owner's request is
// held at the provider (hold switch) when a new owner claims, and receipts go
// to the current owner only.
#include "proxy/proxy_fixture.hpp"

#include <future>

using namespace gw;
using namespace gw::test;

namespace {

Reply receipt(HttpClient& c, const std::string& op, const std::string& grant, const std::string& agent = agent_a) {
  Headers h{{"Authorization", "Bearer " + agent}};
  if (!grant.empty()) h.emplace_back("Fence-Grant", grant);
  return c.request("GET", task_path("tenant-a", "task-a", "operations/" + op), h);
}

// The provider holds the request after reading it and before executing it,
// until the test releases it: ownership changes while it is upstream, with no
// timing assumption. A long forward deadline, so a loaded machine cannot turn
// the held request into a timeout.
ProviderSettings held_settings() {
  ProviderSettings s;
  s.request_timeout_ms = 120000;
  return s;
}

std::future<Reply> send_async(const Gateway& g, const Write& w) {
  return std::async(std::launch::async, [port = g.port(), w] {
    HttpClient own(port);
    return send(own, w);
  });
}

}  // namespace

TEST_CASE("ownership change while upstream: one effect, the old owner gets stale_owner, the new owner the replay") {
  ProxyRig rig(held_settings());
  auto& g = rig.gateway;
  auto& provider = rig.provider;
  auto c = g.client();
  g.set_clock(0);
  auto old_grant = grant_token(g.claim("tenant-a", "task-a", "region-a", 100));
  const auto key = upstream_key("tenant-a", "task-a", "op-1");

  Write w;
  w.grant = old_grant;
  w.key = "op-1";
  w.body = booking_body("slot-1");
  provider.hold_next(1);
  auto old_reply = send_async(g, w);
  ReleaseOnExit release_on_failure(provider);
  REQUIRE(provider.wait_for_held(1));

  // The old lease ends; another owner claims while the request is upstream.
  g.set_clock(100);
  auto new_grant = grant_token(g.claim("tenant-a", "task-a", "region-b", 60000));
  Write retry = w;
  retry.grant = new_grant;
  // Held: not executed, so its outcome cannot be recorded yet.
  check_problem(send(c, retry), 409, "operation_in_flight");
  check_problem(send(c, w), 409, "stale_owner");  // the old owner's own retry
  Write other;
  other.grant = new_grant;
  other.key = "op-2";
  other.body = booking_body("slot-2");
  check_problem(send(c, other), 409, "unresolved_operation");  // the task is held by op-1
  CHECK(provider.requests().size() == 1);
  CHECK(provider.effect_count() == 0);
  CHECK(g.db().scalar("SELECT state FROM operations WHERE op_id = 'op-1'") == "in_flight");

  REQUIRE(provider.release() == 1);
  auto old = old_reply.get();
  check_problem(old, 409, "stale_owner");
  CHECK(old.body.find("booking_id") == std::string::npos);  // nothing disclosed
  CHECK(provider.effects_for(key) == 1);
  CHECK(provider.effect_count() == 1);
  CHECK(provider.requests_with_key(key) == 1);
  // Recorded all the same, with the grant that admitted it.
  CHECK(g.db().scalar("SELECT state FROM operations WHERE op_id = 'op-1'") == "succeeded");
  CHECK(g.db().scalar("SELECT owner FROM operation_attempts WHERE op_id = 'op-1'") == "region-a");

  // The new owner's exact retry gets the recorded reply, without a resend.
  auto replay = send(c, retry);
  CHECK(replay.status == 201);
  CHECK(replay.code() == "historical_retry");
  CHECK(replay.header("Idempotent-Replayed") == "true");
  CHECK(replay.header("Committed-Version") == "1");
  CHECK(replay.json()["slot"] == "slot-1");
  CHECK(replay.json()["booking_id"].is_string());
  CHECK(provider.requests_with_key(key) == 1);
  CHECK(provider.effect_count() == 1);

  // And goes on from the version the old owner's write reached.
  Write next;
  next.grant = new_grant;
  next.key = "op-2";
  next.expected_version = 1;
  next.body = booking_body("slot-2");
  CHECK(send(c, next).header("Committed-Version") == "2");
  CHECK(provider.requests().size() == 2);
}

TEST_CASE("lease expiring while upstream with nobody reclaiming: expired_owner, then the same owner reclaims and gets the replay") {
  ProxyRig rig(held_settings());
  auto& g = rig.gateway;
  auto& provider = rig.provider;
  auto c = g.client();
  g.set_clock(0);
  Write w;
  w.grant = grant_token(g.claim("tenant-a", "task-a", "region-a", 100));
  w.key = "op-1";
  w.body = booking_body("slot-1");
  provider.hold_next(1);
  auto reply = send_async(g, w);
  ReleaseOnExit release_on_failure(provider);
  REQUIRE(provider.wait_for_held(1));
  g.set_clock(100);  // the lease ends; no one else claims

  // While held, the exact retry fails the grant check before the ledger.
  check_problem(send(c, w), 409, "expired_owner");
  CHECK(provider.requests().size() == 1);

  REQUIRE(provider.release() == 1);
  check_problem(reply.get(), 409, "expired_owner");
  CHECK(g.db().scalar("SELECT state FROM operations WHERE op_id = 'op-1'") == "succeeded");
  check_problem(send(c, w), 409, "expired_owner");  // its exact retry too

  // The same owner must claim again (a new epoch) to learn the result.
  Write again = w;
  again.grant = grant_token(g.claim("tenant-a", "task-a", "region-a", 100));
  auto replay = send(c, again);
  CHECK(replay.code() == "historical_retry");
  CHECK(replay.header("Committed-Version") == "1");
  CHECK(provider.requests_with_key(upstream_key("tenant-a", "task-a", "op-1")) == 1);
  CHECK(provider.effect_count() == 1);
}

TEST_CASE("receipt: for the current owner only, stale or expired grants learn nothing") {
  ProxyRig rig;
  auto& g = rig.gateway;
  auto c = g.client();
  g.set_clock(0);
  auto old_grant = grant_token(g.claim("tenant-a", "task-a", "region-a", 100));
  Write w;
  w.grant = old_grant;
  w.key = "op-1";
  w.body = booking_body("slot-1");
  REQUIRE(send(c, w).code() == "committed");

  auto r = receipt(c, "op-1", old_grant);
  REQUIRE(r.status == 200);
  auto op = r.json()["operation"];
  CHECK(op["id"] == "op-1");
  CHECK(op["state"] == "succeeded");
  CHECK(op["attempts"] == 1);
  CHECK(op["method"] == "POST");
  CHECK(op["provider"] == "booking");
  CHECK(op["target"] == "/bookings");
  CHECK(op["expected_version"] == 0);
  CHECK(op["committed_version"] == 1);
  CHECK(op["response"]["status"] == 201);

  check_problem(receipt(c, "op-1", ""), 400, "invalid_grant");
  check_problem(receipt(c, "no-such-op", old_grant), 404, "not_found");
  check_problem(receipt(c, "op-1", old_grant, agent_b), 403, "forbidden");

  g.set_clock(100);
  check_problem(receipt(c, "op-1", old_grant), 409, "expired_owner");
  auto new_grant = grant_token(g.claim("tenant-a", "task-a", "region-b", 100));
  auto stale = receipt(c, "op-1", old_grant);
  check_problem(stale, 409, "stale_owner");
  CHECK(stale.body.find("succeeded") == std::string::npos);
  // A stale owner cannot even learn whether an operation exists.
  check_problem(receipt(c, "no-such-op", old_grant), 409, "stale_owner");
  CHECK(receipt(c, "op-1", new_grant).json()["operation"]["state"] == "succeeded");
  CHECK(rig.provider.requests().size() == 1);
}
