// spec section 3's outcome table with real faults injected by the demo
// provider: what the agent is told, what the ledger records, and what the
// provider actually executed and received (by upstream Idempotency-Key).
#include "proxy/proxy_fixture.hpp"

using namespace gw;
using namespace gw::test;

namespace {

// A claimed task on a fresh rig; writes go through `c`.
struct Outcomes {
  explicit Outcomes(ProviderSettings settings = {}, std::int64_t now_ms = 0) : rig(settings), c(rig.gateway.port()) {
    rig.gateway.set_clock(now_ms);
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

  // The task is held: another operation is refused before it is forwarded,
  // and the current owner is told which operation holds it, and since when.
  auto refused = o.write("op-2", "slot-2", 0);
  check_problem(refused, 409, "unresolved_operation");
  const auto holder = refused.json()["unresolved_operation"];
  CHECK(holder["id"] == "op-1");
  CHECK(holder["state"] == "unknown");
  CHECK(holder["reason"] == "outcome_unknown");
  CHECK(holder["held_since_ms"] == 0);  // the manual clock stands at 0
  CHECK(holder["held_for_ms"] == 0);
  CHECK(refused.json()["detail"].get<std::string>().starts_with(
      "operation op-1 holds this task (unknown, outcome_unknown, since 1970-01-01T00:00:00.000Z)"));
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

TEST_CASE("outcome: a provider 500 answered at once is 504 Outcome Unknown with provider_status, not Gateway Timeout") {
  Outcomes o;
  o.rig.provider.reply_status_next(500);
  // Raw, to read the status line as the agent's HTTP library does.
  const auto body = booking_body("slot-1");
  const auto raw = o.c.raw("POST " + task_path("tenant-a", "task-a", "providers/booking/bookings") +
                           " HTTP/1.1\r\nHost: gateway\r\nAuthorization: Bearer " + agent_a +
                           "\r\nFence-Grant: " + o.grant +
                           "\r\nIdempotency-Key: op-1\r\nExpected-Version: 0\r\nContent-Type: application/json"
                           "\r\nContent-Length: " + std::to_string(body.size()) + "\r\nConnection: close\r\n\r\n" +
                           body);
  REQUIRE_MESSAGE(raw.bytes.starts_with("HTTP/1.1 504 Outcome Unknown\r\n"), raw.bytes);
  CHECK(raw.bytes.find("Gateway-Status: unknown_outcome\r\n") != std::string::npos);
  const auto problem = nlohmann::json::parse(raw.bytes.substr(raw.bytes.find("\r\n\r\n") + 4));
  CHECK(problem["status"] == 504);
  CHECK(problem["code"] == "unknown_outcome");
  CHECK(problem["provider_status"] == 500);
  CHECK(problem["detail"].get<std::string>().starts_with("the provider answered 500, "));
  CHECK(o.state("op-1") == "unknown");
  CHECK(o.rig.provider.effect_count() == 0);
}

TEST_CASE("outcome: unresolved_operation at an authority time past any calendar names its holder's time as a number") {
  // Authority time is any integer (the manual clock sets it), far past what the system clock's
  // nanoseconds can hold (the year 2262): the refusal still names the holder, never overflowing.
  constexpr std::int64_t far = 1'000'000'000'000'000;  // the year 33658
  Outcomes o({}, far);
  o.rig.provider.set_fault("error_5xx", 0, 1);
  check_problem(o.write("op-1", "slot-1", 0), 504, "unknown_outcome");
  auto refused = o.write("op-2", "slot-2", 0);
  check_problem(refused, 409, "unresolved_operation");
  CHECK(refused.json()["unresolved_operation"]["held_since_ms"] == far);
  CHECK(refused.json()["detail"].get<std::string>().starts_with(
      "operation op-1 holds this task (unknown, outcome_unknown, since 1000000000000000 ms since 1970)"));
  CHECK(o.rig.provider.requests_with_key(Outcomes::key("op-2")) == 0);
}

TEST_CASE("outcome: unresolved_operation names the holding operation only to the task's current owner") {
  Outcomes o;
  o.rig.provider.set_fault("error_5xx", 0, 1);
  check_problem(o.write("op-1", "slot-1", 0), 504, "unknown_outcome");
  CHECK(o.write("op-1", "slot-1", 0).json()["provider_status"].is_null());  // the exact retry: the ledger's answer

  // The owner's grant: named.
  auto owner = o.write("op-2", "slot-2", 0);
  check_problem(owner, 409, "unresolved_operation");
  CHECK(owner.json()["unresolved_operation"]["id"] == "op-1");

  // Another tenant's agent on this task's path: forbidden, nothing named.
  Write other;
  other.grant = o.grant;
  other.key = "op-3";
  other.body = booking_body("slot-3");
  other.agent = agent_b;
  auto forbidden = send(o.c, other);
  check_problem(forbidden, 403, "forbidden");
  CHECK(forbidden.body.find("op-1") == std::string::npos);

  // Another tenant's own task of the same name is not held, and names nothing of tenant-a's.
  auto b_grant = grant_token(o.rig.gateway.claim("tenant-b", "task-a", "region-b", 60000, agent_b));
  Write b;
  b.tenant = "tenant-b";
  b.grant = b_grant;
  b.key = "op-b";
  b.body = booking_body("slot-b");
  b.agent = agent_b;
  auto b_reply = send(o.c, b);
  CHECK(b_reply.status == 201);
  CHECK(b_reply.body.find("op-1") == std::string::npos);

  // tenant-a's grant presented on tenant-b's task: scope_mismatch, nothing named.
  Write cross = b;
  cross.agent = agent_a;  // may act for tenant-a only among these
  cross.tenant = "tenant-c";
  cross.grant = o.grant;
  cross.key = "op-4";
  auto mismatch = send(o.c, cross);
  CHECK(mismatch.status == 409);
  CHECK(mismatch.code() == "scope_mismatch");
  CHECK(mismatch.body.find("op-1") == std::string::npos);

  // A former owner of the task: its grant is refused first, nothing named.
  CHECK(o.c.post_json(task_path("tenant-a", "task-a", "release"), {{"grant_token", o.grant}}, agent_a).status == 200);
  auto new_grant = grant_token(o.rig.gateway.claim("tenant-a", "task-a", "region-b", 60000));
  auto stale = o.write("op-5", "slot-5", 0);
  check_problem(stale, 409, "stale_owner");
  CHECK(stale.body.find("op-1") == std::string::npos);
  CHECK(!stale.json().contains("unresolved_operation"));

  // The new owner is told.
  o.grant = new_grant;
  auto told = o.write("op-6", "slot-6", 0);
  check_problem(told, 409, "unresolved_operation");
  CHECK(told.json()["unresolved_operation"]["id"] == "op-1");
}
