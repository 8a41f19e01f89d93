// The write-gateway process killed (SIGKILL: no drain, no outcome record)
// while a protected request is upstream. The admission was committed before
// forwarding, so the ledger still holds the operation in flight, and a
// restarted gateway on the same database neither forgets nor resends it;
// past the forward deadline it sweeps it to unknown (held for evidence), and
// the provider's status lookup resolves it without an operator.
#include "proxy/proxy_fixture.hpp"

#include "support/eventually.hpp"
#include "support/process.hpp"

#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <cstdlib>
#include <fstream>
#include <future>
#include <string>

using namespace gw;
using namespace gw::test;

TEST_CASE("SIGKILL while upstream: a restarted gateway never resends it, sweeps it unknown, and resolves it by lookup") {
  TestDatabase db;
  ProviderProcess provider;
  auto config = test_config_json(db.url());
  ProviderSettings settings;
  settings.request_timeout_ms = 30000;
  config["providers"] = nlohmann::json::array({booking_provider_config(provider, settings)});
  config["providers"][0]["lookup"] = {{"path", "/bookings/by-key/{key}"}, {"status_pointer", "/status"}};
  // Forward deadline = admission + queue 2 s + connect 2 s + request 30 s + margin 5 s.
  config["recovery"] = {{"forward_margin_ms", 5000},
                        {"sweep_interval_ms", 50},
                        {"reconcile", {{"interval_ms", 50}, {"backoff_base_ms", 1000}, {"backoff_cap_ms", 1000}}}};
  const std::int64_t deadline_ms = 39000;
  const auto env = booking_credential_envs();
  const auto key = upstream_key("tenant-a", "task-a", "op-1");
  auto state = [&] { return db.scalar("SELECT state FROM operations WHERE op_id = 'op-1'"); };

  Write w;
  w.key = "op-1";
  w.body = booking_body("slot-1");
  {
    GatewayProcess first(config, true, env);
    auto c = first.client();
    auto claimed = c.post_json(task_path("tenant-a", "task-a", "claim"), {{"owner", "region-a"}, {"lease_ms", 600000}},
                               agent_a);
    REQUIRE(claimed.code() == "granted");
    w.grant = grant_token(claimed.json());

    // Held at the provider until the gateway is dead.
    provider.hold_next(1);
    auto in_flight = std::async(std::launch::async, [&, port = first.port()] {
      HttpClient own(port);
      try {
        return send(own, w).status;
      } catch (const std::exception&) {
        return 0u;  // the gateway died under it: no reply at all
      }
    });
    REQUIRE(provider.wait_for_held(1));
    first.kill_now();
    CHECK(in_flight.get() == 0u);
  }
  CHECK(state() == "in_flight");

  GatewayProcess second(config, true, env);
  auto c = second.client();
  check_problem(send(c, w), 409, "operation_in_flight");
  Write other = w;
  other.key = "op-2";
  other.body = booking_body("slot-2");
  check_problem(send(c, other), 409, "unresolved_operation");
  CHECK(provider.requests_with_key(key) == 1);

  CHECK(provider.effect_count() == 0);

  // Up to its forward deadline another gateway may still be forwarding it.
  auto clock = [&](std::int64_t now_ms) {
    REQUIRE(c.post_json("/v1/admin/clock", {{"now_ms", now_ms}}, operator_token).status == 200);
  };
  clock(deadline_ms);
  check_problem(send(c, w), 409, "operation_in_flight");
  CHECK(state() == "in_flight");

  // Past it, nobody is: the exact retry is told the outcome is unknown
  // (never "being forwarded now"), and the sweep holds it as unknown.
  clock(deadline_ms + 1);
  check_problem(send(c, w), 504, "unknown_outcome");
  CHECK(eventually([&] { return state() == "unknown"; }));
  CHECK(db.scalar("SELECT held_reason FROM operations WHERE op_id = 'op-1'") == "forward_abandoned");
  CHECK(db.scalar("SELECT count(*) FROM operation_evidence WHERE op_id = 'op-1' AND source = 'sweep'") == "1");
  check_problem(send(c, w), 504, "unknown_outcome");
  check_problem(send(c, other), 409, "unresolved_operation");

  // The provider does execute it once released; still nothing is resent.
  CHECK(provider.release() == 1);
  CHECK(provider.wait_for_effects([&](const nlohmann::json& e) { return e["by_key"].contains(key); }));
  CHECK(provider.effects_for(key) == 1);
  CHECK(provider.requests_with_key(key) == 1);
  CHECK(db.scalar("SELECT attempts FROM operations WHERE op_id = 'op-1'") == "1");

  // The lookup loop asks the provider by the upstream key. Lookups made
  // while the request was held answered not found and were rescheduled on
  // the authority clock; moving it past their backoff makes the next one due.
  // One handed out before the move and answered after it (a slow machine) is
  // rescheduled from the new time, so the clock keeps moving past the backoff
  // (1 s) until a lookup settles it: 2 s a round, at most 100 rounds, well
  // inside the task's lease.
  std::int64_t now_ms = deadline_ms + 10'000;
  clock(now_ms);
  int rounds = 0;
  REQUIRE(eventually([&] {
    if (state() == "succeeded") return true;
    if (++rounds <= 100) clock(now_ms += 2'000);
    return false;
  }));
  CHECK(db.scalar("SELECT (resolution).source FROM operations WHERE op_id = 'op-1'") == "lookup");
  CHECK(db.scalar("SELECT outcome FROM operation_attempts WHERE op_id = 'op-1'") == "unknown");  // never rewritten
  // One lookup settled it. A lookup that raced the release may also have
  // found it, inside the settle window: that one is kept as evidence and
  // held (unknown), never a second resolution.
  CHECK(db.scalar("SELECT count(*) FROM operation_evidence WHERE op_id = 'op-1' AND source = 'lookup' AND "
                  "upstream_status = 200 AND outcome = 'succeeded'") == "1");
  CHECK(db.scalar("SELECT count(*) FROM operation_evidence WHERE op_id = 'op-1' AND source = 'lookup' AND "
                  "outcome <> 'unknown' AND outcome <> 'succeeded'") == "0");
  check_problem(send(c, w), 409, "resolved_without_reply");
  // The task takes new operations, and the provider executed op-1 once.
  other.expected_version = 1;
  CHECK(send(c, other).header("Gateway-Status") == "committed");
  CHECK(provider.effects_for(key) == 1);
  CHECK(provider.requests_with_key(key) == 1);
}

TEST_CASE("two gateways on one database, one killed mid-forward: the other sweeps and reconciles it exactly once") {
  TestDatabase db;
  ProviderProcess provider;
  auto config = test_config_json(db.url());
  config["providers"] = nlohmann::json::array({booking_provider_config(provider)});
  config["providers"][0]["lookup"] = {{"path", "/bookings/by-key/{key}"}, {"status_pointer", "/status"}};
  // Forward deadline = admission + queue 2 s + connect 2 s + request 10 s + margin 5 s = +19 s.
  config["recovery"] = {{"forward_margin_ms", 5000},
                        {"sweep_interval_ms", 20},
                        {"reconcile", {{"interval_ms", 20}, {"backoff_base_ms", 1000}, {"backoff_cap_ms", 1000}}}};
  const auto env = booking_credential_envs();
  const auto key = upstream_key("tenant-a", "task-a", "op-1");
  auto state = [&] { return db.scalar("SELECT state FROM operations WHERE op_id = 'op-1'"); };

  GatewayProcess survivor(config, true, env);
  auto c = survivor.client();
  auto clock = [&](std::int64_t now_ms) {
    REQUIRE(c.post_json("/v1/admin/clock", {{"now_ms", now_ms}}, operator_token).status == 200);
  };
  clock(1000);
  auto claimed =
      c.post_json(task_path("tenant-a", "task-a", "claim"), {{"owner", "region-a"}, {"lease_ms", 600000}}, agent_a);
  REQUIRE(claimed.code() == "granted");
  Write w;
  w.grant = grant_token(claimed.json());
  w.key = "op-1";
  w.body = booking_body("slot-1");
  {
    GatewayProcess doomed(config, true, env);
    provider.hold_next(1);
    auto in_flight = std::async(std::launch::async, [&, port = doomed.port()] {
      HttpClient own(port);
      try {
        return send(own, w).status;
      } catch (const std::exception&) {
        return 0u;
      }
    });
    REQUIRE(provider.wait_for_held(1));
    doomed.kill_now();
    CHECK(in_flight.get() == 0u);
  }
  CHECK(provider.release() == 1);
  CHECK(provider.wait_for_effects([&](const nlohmann::json& e) { return e["by_key"].contains(key); }));
  CHECK(state() == "in_flight");

  // Past the forward deadline the survivor sweeps it, its lookup finds the
  // provider's record, and it resolves it: each step exactly once.
  clock(1000 + 19'000 + 1);
  REQUIRE(eventually([&] { return state() == "succeeded"; }));
  CHECK(db.scalar("SELECT count(*) FROM operation_evidence WHERE op_id = 'op-1' AND source = 'sweep'") == "1");
  CHECK(db.scalar("SELECT (resolution).source FROM operations WHERE op_id = 'op-1'") == "lookup");
  CHECK(db.scalar("SELECT count(*) FROM operation_evidence e JOIN operations o ON e.id = (o.resolution).evidence") ==
        "1");
  CHECK(db.scalar("SELECT version FROM task_ledger WHERE task = 'task-a'") == "1");
  CHECK(provider.effects_for(key) == 1);
  CHECK(provider.requests_with_key(key) == 1);
  check_problem(send(c, w), 409, "resolved_without_reply");
}

namespace {

// Whether `pid` has ended: gone, or a zombie its new parent has yet to reap.
bool ended(pid_t pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  if (!std::getline(stat, line)) return true;
  const auto close = line.rfind(')');
  return close != std::string::npos && close + 2 < line.size() && line[close + 2] == 'Z';
}

}  // namespace

TEST_CASE("test harness: a test process that aborts takes the demo provider it started with it") {
  // An orphaned provider keeps ctest's output pipe open, and ctest then
  // waits for it forever. A forked copy of this test binary starts one,
  // says its pid, and aborts.
  int fds[2];
  REQUIRE(::pipe(fds) == 0);
  const pid_t test = ::fork();
  REQUIRE(test >= 0);
  if (test == 0) {
    ::close(fds[0]);
    kill_children_on_abort();  // this handler, not doctest's, which would report a crash
    ChildProcess provider({test_binary("demo-provider"),
                           {"--kind", "booking", "--port", "0", "--control-port", "0"},
                           {{"DEMO_PROVIDER_CREDENTIALS", provider_credential}}});
    provider.wait_for_line("demo-provider kind=", std::chrono::seconds(30));
    const pid_t pid = provider.pid();
    if (::write(fds[1], &pid, sizeof pid) != sizeof pid) ::_exit(3);
    std::abort();
  }
  ::close(fds[1]);
  pid_t provider = 0;
  const auto n = ::read(fds[0], &provider, sizeof provider);
  ::close(fds[0]);
  int status = 0;
  REQUIRE(::waitpid(test, &status, 0) == test);
  CHECK(WIFSIGNALED(status));
  CHECK(WTERMSIG(status) == SIGABRT);
  REQUIRE(n == static_cast<ssize_t>(sizeof provider));
  CHECK(eventually([&] { return ended(provider); }, std::chrono::seconds(10)));
  if (!ended(provider)) ::kill(provider, SIGKILL);
}
