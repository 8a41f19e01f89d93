// SIGTERM while a protected request is upstream, or while its outcome record
// waits for the database: the gateway stops taking new connections at once,
// but what it already forwarded is finished, recorded and answered before the
// process exits (cleanly). The drain's limit (the provider's request timeout
// plus 2 s) is set past what the tests wait for the exit, so a clean exit shows
// the drain ended because the work was done, not because its time ran out.
#include "proxy/proxy_fixture.hpp"

#include "support/eventually.hpp"
#include "support/private_cluster.hpp"
#include "support/process.hpp"

#include <pqxx/pqxx>

#include <sys/wait.h>

#include <future>

using namespace gw;
using namespace gw::test;

namespace {

// Whether a TCP connect to the port is refused now (nothing listens).
bool refuses_connections(std::uint16_t port) {
  try {
    HttpClient(port, std::chrono::seconds(5)).get("/healthz", "");
    return false;
  } catch (const std::exception&) {
    return true;
  }
}

// The booking provider with a request timeout of 120 s, so the drain's limit
// (that plus 2 s) is past the 60 s each test waits for the exit.
nlohmann::json long_drain_config(const std::string& database_url, const ProviderProcess& provider) {
  auto config = test_config_json(database_url);
  ProviderSettings settings;
  settings.request_timeout_ms = 120'000;
  config["providers"] = nlohmann::json::array({booking_provider_config(provider, settings)});
  return config;
}

// tenant-a/task-a claimed, then op-1 sent on a connection of its own; the
// provider holds it once it arrives (the caller waits for that, with a
// ReleaseOnExit declared after the returned reply).
std::future<Reply> send_held_write(const GatewayProcess& gateway, ProviderProcess& provider) {
  auto c = gateway.client();
  auto claimed =
      c.post_json(task_path("tenant-a", "task-a", "claim"), {{"owner", "region-a"}, {"lease_ms", 600000}}, agent_a);
  REQUIRE(claimed.code() == "granted");
  Write w;
  w.grant = grant_token(claimed.json());
  w.key = "op-1";
  w.body = booking_body("slot-1");
  provider.hold_next(1);
  return std::async(std::launch::async, [w, port = gateway.port()] {
    HttpClient own(port);
    return send(own, w);
  });
}

}  // namespace

TEST_CASE("SIGTERM with a forward in flight: new connections refused, the forward finishes, is recorded and answered") {
  TestDatabase db;
  ProviderProcess provider;
  GatewayProcess gateway(long_drain_config(db.url(), provider), true, booking_credential_envs());
  auto upstream = send_held_write(gateway, provider);
  ReleaseOnExit release_on_failure(provider);
  REQUIRE(provider.wait_for_held(1));

  auto stopped = std::async(std::launch::async, [&] { return gateway.terminate(std::chrono::seconds(60)); });
  // Draining: the listener is closed.
  CHECK(eventually([&] { return refuses_connections(gateway.port()); }));
  // Still running: it waits for the forward it owes an answer.
  CHECK(stopped.wait_for(std::chrono::seconds(0)) == std::future_status::timeout);

  provider.release();
  auto reply = upstream.get();
  CHECK(reply.status == 201);
  CHECK(reply.code() == "committed");
  CHECK(reply.header("Committed-Version") == "1");

  const int status = stopped.get();
  CHECK(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);
  CHECK(db.scalar("SELECT state FROM operations WHERE op_id = 'op-1'") == "succeeded");
  CHECK(db.scalar("SELECT outcome FROM operation_attempts WHERE op_id = 'op-1'") == "succeeded");
  CHECK(provider.effects_for(upstream_key("tenant-a", "task-a", "op-1")) == 1);
  CHECK(provider.requests().size() == 1);
}

TEST_CASE("SIGTERM with an outcome record waiting for the database: the drain waits for it, then exits cleanly") {
  PrivateCluster pg;
  ProviderProcess provider;
  auto config = long_drain_config(pg.url(), provider);
  config["database"]["connect_timeout_s"] = 1;
  config["database"]["statement_timeout_ms"] = 1000;
  config["recovery"] = {{"outcome_wait_ms", 200}, {"outcome_retry_cap_ms", 200}};
  GatewayProcess gateway(config, true, booking_credential_envs());
  auto upstream = send_held_write(gateway, provider);
  ReleaseOnExit release_on_failure(provider);
  REQUIRE(provider.wait_for_held(1));  // admitted and forwarded
  pg.stop();
  provider.release();  // executed by the provider; its outcome cannot be written down now
  check_problem(upstream.get(), 504, "unknown_outcome");

  // No request is in progress, but an outcome record is: the drain waits for it.
  auto stopped = std::async(std::launch::async, [&] { return gateway.terminate(std::chrono::seconds(60)); });
  CHECK(eventually([&] { return refuses_connections(gateway.port()); }));
  CHECK(stopped.wait_for(std::chrono::seconds(0)) == std::future_status::timeout);

  pg.start();
  const int status = stopped.get();
  CHECK(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);
  pqxx::connection conn(pg.url());
  pqxx::nontransaction tx(conn);
  CHECK(tx.exec1("SELECT state FROM operations WHERE op_id = 'op-1'")[0].as<std::string>() == "succeeded");
  CHECK(tx.exec1("SELECT version FROM task_ledger WHERE task = 'task-a'")[0].as<int>() == 1);
  CHECK(provider.effects_for(upstream_key("tenant-a", "task-a", "op-1")) == 1);
}
