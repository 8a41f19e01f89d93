// SIGTERM while a protected request is upstream: the gateway stops taking new
// connections at once, but the request it already forwarded is finished,
// recorded and answered before the process exits (cleanly).
#include "proxy/proxy_fixture.hpp"

#include "support/eventually.hpp"
#include "support/process.hpp"

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

}  // namespace

TEST_CASE("SIGTERM with a forward in flight: new connections refused, the forward finishes, is recorded and answered") {
  TestDatabase db;
  ProviderProcess provider;
  auto config = test_config_json(db.url());
  config["providers"] = nlohmann::json::array({booking_provider_config(provider)});
  GatewayProcess gateway(config, true, booking_credential_envs());
  auto c = gateway.client();
  auto claimed =
      c.post_json(task_path("tenant-a", "task-a", "claim"), {{"owner", "region-a"}, {"lease_ms", 600000}}, agent_a);
  REQUIRE(claimed.code() == "granted");

  Write w;
  w.grant = grant_token(claimed.json());
  w.key = "op-1";
  w.body = booking_body("slot-1");
  provider.hold_next(1);
  auto upstream = std::async(std::launch::async, [&, port = gateway.port()] {
    HttpClient own(port);
    return send(own, w);
  });
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
