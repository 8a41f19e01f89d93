// SPEC section 3's outcome table with real faults injected by the demo
// provider: what the agent is told, what the ledger records, and what the
// provider actually executed and received (by upstream Idempotency-Key).
#include "proxy/proxy_fixture.hpp"

using namespace gw;
using namespace gw::test;

namespace {

// A claimed task on a fresh rig; writes go through `c`.
struct Outcomes {
  explicit Outcomes(ProviderSettings settings = {}) : rig(settings), c(rig.gateway.port()) {
    rig.gateway.set_clock(0);
    grant = grant_token(rig.gateway.claim("tenant-a", "task-a", "region-a", 60000));
  }
  Reply write(const std::string& op, const std::string& slot, std::int64_t expected_version) {
    Write w;
    w.grant = grant;
    w.key = op;
    w.expected_version = expected_version;
    w.body = booking_body(slot);
    return send(c, w);
  }
  std::string state(const std::string& op) const {
    return rig.gateway.db().scalar("SELECT state FROM operations WHERE op_id = '" + op + "'");
  }
  nlohmann::json task_view() { return c.get(task_path("tenant-a", "task-a"), agent_a).json(); }
  static std::string key(const std::string& op) { return upstream_key("tenant-a", "task-a", op); }

  ProxyRig rig;
  HttpClient c;
  std::string grant;
};

// A fault that leaves the outcome unknown: 504, the task held, the operation
// never resent. `executes`: whether the provider performed the booking.
void unknown_outcome_case(const std::string& mode, std::int64_t delay_ms, bool executes) {
  // A short provider deadline, so `delay` and `late_reply` run past it.
  ProviderSettings settings;
  settings.request_timeout_ms = 500;
  Outcomes o(settings);
  auto& provider = o.rig.provider;
  const bool hold = mode == "hold";
  if (hold) provider.hold_next(1);
  else provider.set_fault(mode, delay_ms, 1);

  check_problem(o.write("op-1", "slot-1", 0), 504, "unknown_outcome");
  CHECK(o.state("op-1") == "unknown");
  if (hold) {
    CHECK(provider.effect_count() == 0);  // the gateway gave up before anything happened
    CHECK(provider.release() == 1);       // and then the provider executes it after all
  }
  if (executes) CHECK(provider.wait_for_effects([](const nlohmann::json& e) { return e["effects"] == 1; }));
  CHECK(provider.effects_for(Outcomes::key("op-1")) == (executes ? 1 : 0));
  CHECK(provider.effect_count() == (executes ? 1 : 0));

  // The task is held: another operation is refused before it is forwarded.
  check_problem(o.write("op-2", "slot-2", 0), 409, "unresolved_operation");
  CHECK(provider.requests_with_key(Outcomes::key("op-2")) == 0);
  CHECK(o.task_view()["unresolved_operation"] == nlohmann::json{{"id", "op-1"}, {"state", "unknown"}});
  CHECK(o.task_view()["version"] == 0);

  // The exact retry is unknown again and is never resent.
  check_problem(o.write("op-1", "slot-1", 0), 504, "unknown_outcome");
  CHECK(provider.requests_with_key(Outcomes::key("op-1")) == 1);
  CHECK(provider.requests().size() == 1);
  CHECK(provider.effect_count() == (executes ? 1 : 0));
  CHECK(o.rig.gateway.db().scalar("SELECT attempts FROM operations WHERE op_id = 'op-1'") == "1");
}

}  // namespace

TEST_CASE("outcome: a 2xx executes once, is committed with Committed-Version, and is replayed byte for byte") {
  Outcomes o;
  auto& provider = o.rig.provider;
  auto first = o.write("op-1", "slot-1", 0);
  CHECK(first.status == 201);
  CHECK(first.code() == "committed");
  CHECK(first.header("Committed-Version") == "1");
  CHECK(!first.header("Idempotent-Replayed"));
  CHECK(first.json()["status"] == "confirmed");
  CHECK(provider.effects_for(Outcomes::key("op-1")) == 1);
  CHECK(o.state("op-1") == "succeeded");
  CHECK(o.task_view()["version"] == 1);

  auto retry = o.write("op-1", "slot-1", 0);
  CHECK(retry.status == first.status);
  CHECK(retry.code() == "historical_retry");
  CHECK(retry.header("Idempotent-Replayed") == "true");
  CHECK(retry.body == first.body);
  CHECK(replayable_headers(retry) == replayable_headers(first));
  // Replayed from the ledger: the provider saw one request and did one thing.
  CHECK(provider.requests_with_key(Outcomes::key("op-1")) == 1);
  CHECK(provider.effect_count() == 1);
  CHECK(o.task_view()["version"] == 1);
}

TEST_CASE("outcome: a definite rejection is rejected_by_provider and leaves the version unchanged") {
  Outcomes o;
  auto& provider = o.rig.provider;
  REQUIRE(o.write("op-1", "slot-1", 0).code() == "committed");
  auto taken = o.write("op-2", "slot-1", 1);
  CHECK(taken.status == 409);
  CHECK(taken.code() == "rejected_by_provider");
  CHECK(taken.json()["error"] == "slot_taken");
  CHECK(!taken.header("Committed-Version"));
  CHECK(o.state("op-2") == "rejected");
  CHECK(o.task_view()["version"] == 1);
  CHECK(o.task_view()["unresolved_operation"].is_null());

  // Replayed, not resent.
  auto again = o.write("op-2", "slot-1", 1);
  CHECK(again.code() == "historical_retry");
  CHECK(again.status == 409);
  CHECK(again.body == taken.body);
  CHECK(provider.requests_with_key(Outcomes::key("op-2")) == 1);

  // The next operation is admitted at the same Expected-Version.
  auto next = o.write("op-3", "slot-2", 1);
  CHECK(next.code() == "committed");
  CHECK(next.header("Committed-Version") == "2");
  CHECK(provider.effects_for(Outcomes::key("op-2")) == 0);
  CHECK(provider.effect_count() == 2);
}

TEST_CASE("outcome: a refused connection is provider_unavailable, and the same key retried executes once") {
  Outcomes o;
  auto& provider = o.rig.provider;
  provider.set_fault("refuse");
  auto refused = o.write("op-1", "slot-1", 0);
  check_problem(refused, 502, "provider_unavailable");
  CHECK(provider.requests().empty());
  CHECK(provider.effect_count() == 0);
  CHECK(o.state("op-1") == "not_executed");
  CHECK(o.task_view()["unresolved_operation"].is_null());  // nothing is held

  provider.set_fault("none");
  auto retried = o.write("op-1", "slot-1", 0);
  CHECK(retried.status == 201);
  CHECK(retried.code() == "committed");
  CHECK(retried.header("Committed-Version") == "1");
  CHECK(provider.effects_for(Outcomes::key("op-1")) == 1);
  CHECK(provider.requests_with_key(Outcomes::key("op-1")) == 1);
  CHECK(o.state("op-1") == "succeeded");
  CHECK(o.rig.gateway.db().scalar("SELECT attempts FROM operations WHERE op_id = 'op-1'") == "2");
}

TEST_CASE("outcome: a provider holding the request past the request timeout is unknown_outcome, held, never resent") {
  // The provider holds the request unexecuted until released, however long
  // the gateway's timeout takes to fire on a loaded machine.
  unknown_outcome_case("hold", 0, true);
}

TEST_CASE("outcome: a late reply past the request timeout is unknown_outcome, held, never resent") {
  unknown_outcome_case("late_reply", 3000, true);
}

TEST_CASE("outcome: a connection dropped after execution is unknown_outcome, held, never resent") {
  unknown_outcome_case("drop_after_execute", 0, true);
}

TEST_CASE("outcome: a provider 5xx is unknown_outcome, held, never resent") {
  unknown_outcome_case("error_5xx", 0, false);
}
