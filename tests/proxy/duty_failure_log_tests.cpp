// A background duty that fails (the database stopped under it) says why in
// the log, once per streak: the first failed round is a warn line with its
// reason, the rounds after it only count in /metrics, and a new streak after
// a round that worked is said again. Checked on the write-gateway process's
// own log, for the sweep of abandoned forwards and for retention.
#include "proxy/proxy_fixture.hpp"

#include "support/eventually.hpp"
#include "support/pool_probes.hpp"
#include "support/private_cluster.hpp"
#include "support/process.hpp"

using namespace gw;
using namespace gw::test;

TEST_CASE("a background duty's failures are logged once per streak, with their reason") {
  PrivateCluster pg;
  auto config = test_config_json(pg.url());
  fail_fast_database(config);
  // One worker: after the restart its one connection is found broken once,
  // and every round after the first that works finds it whole.
  config["database"]["pool_size"] = 1;
  config["recovery"]["sweep_interval_ms"] = 50;
  config["retention"]["interval_ms"] = 50;
  GatewayProcess gateway(config, true, {}, true);
  const auto rounds = [&](const std::string& series) { return metric(gateway.client(), series); };
  const std::string sweeps_ok = "gateway_sweeps_total{result=\"ok\"}",
                    sweeps_failed = "gateway_sweeps_total{result=\"failed\"}",
                    retention_failed = "gateway_events_total{event=\"retention_failed\"}";

  REQUIRE(eventually([&] { return rounds(sweeps_ok) >= 1; }));
  CHECK(gateway.events("sweep_failed").empty());
  CHECK(gateway.events("retention_failed").empty());

  pg.stop();
  // Several failed rounds of each, one line each: the first, with its reason.
  REQUIRE(eventually([&] { return rounds(sweeps_failed) >= 3 && rounds(retention_failed) >= 3; }));
  for (const char* event : {"sweep_failed", "retention_failed"}) {
    CAPTURE(event);
    const auto lines = gateway.events(event);
    REQUIRE(lines.size() == 1);
    CHECK(lines[0]["level"] == "warn");
    REQUIRE(lines[0]["error"].is_string());
    CHECK_FALSE(lines[0]["error"].get<std::string>().empty());
  }

  // Back, a round works, then a new streak is said again, once.
  pg.start();
  const auto ok_before = rounds(sweeps_ok);
  REQUIRE(eventually([&] { return rounds(sweeps_ok) > ok_before; }));
  const auto said = gateway.events("sweep_failed").size();
  pg.stop();
  CHECK(eventually([&] { return gateway.events("sweep_failed").size() == said + 1; }));
  const auto failed_again = rounds(sweeps_failed);
  REQUIRE(eventually([&] { return rounds(sweeps_failed) >= failed_again + 2; }));
  CHECK(gateway.events("sweep_failed").size() == said + 1);
}
