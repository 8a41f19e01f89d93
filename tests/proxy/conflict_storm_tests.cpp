// Load alone never turns into refusals (issue #30): 64 agents, each on its
// own task named in sequence, writing at once on a fresh database whose small
// tables were just analyzed, with every decision's transaction slowed on
// purpose so that all 64 overlap. SERIALIZABLE conflicts between them are
// false (no two touch one task), so each must be decided without a single
// serialization give-up, and nothing may be left in flight. Counted from the
// gateway's metrics and the database, never timed.
#include "proxy/proxy_fixture.hpp"

#include "support/parallel.hpp"
#include "support/pool_probes.hpp"

#include <atomic>

using namespace gw;
using namespace gw::test;

TEST_CASE("conflict storm: 64 agents on their own tasks, slowed transactions, no serialization give-up") {
  ProxyRig rig;
  auto& g = rig.gateway;
  g.set_clock(0);
  constexpr int agents = 64, writes = 3;
  std::vector<std::string> grants;
  for (int n = 1; n <= agents; ++n)
    grants.push_back(grant_token(g.claim("tenant-a", "storm-" + std::to_string(n), "region-a", 600000)));
  // What a fresh database looks like a minute in: autovacuum has analyzed
  // the few rows there are, and a point read costs more than a scan.
  g.db().exec("ANALYZE");
  // Test-only: every admission and outcome waits 5 ms inside its
  // transaction, so the 64 of them overlap as on a busy machine.
  g.db().exec(
      "CREATE FUNCTION storm_slow() RETURNS trigger LANGUAGE plpgsql AS "
      "$$BEGIN PERFORM pg_sleep(0.005); RETURN NEW; END$$");
  g.db().exec("CREATE TRIGGER storm_slow BEFORE INSERT OR UPDATE ON operations "
              "FOR EACH ROW EXECUTE FUNCTION storm_slow()");

  std::atomic<int> committed{0};
  std::mutex failures_mutex;
  std::vector<std::string> failures;
  {
    Workers workers;
    for (int n = 1; n <= agents; ++n)
      workers.spawn([&, n] {
        HttpClient c(g.port());
        Write w;
        w.task = "storm-" + std::to_string(n);
        w.grant = grants[n - 1];
        for (int k = 1; k <= writes; ++k) {
          w.key = w.task + "-" + std::to_string(k);
          w.expected_version = k - 1;
          w.body = booking_body(w.key);
          auto r = send(c, w);
          if (r.code() == "committed") {
            ++committed;
          } else {
            std::lock_guard lock(failures_mutex);
            failures.push_back(w.key + ": " + std::to_string(r.status) + " " + r.body);
            return;
          }
        }
      });
    workers.join();
  }
  for (const auto& f : failures) FAIL_CHECK(f);
  CHECK(committed == agents * writes);
  CHECK(metric(g, "gateway_db_serialization_give_ups_total") == 0);
  MESSAGE("serialization retries: " << metric(g, "gateway_db_serialization_retries_total"));
  CHECK(g.db().scalar("SELECT count(*) FROM operations WHERE state <> 'succeeded'") == "0");
  CHECK(g.db().scalar("SELECT count(*) FROM operations") == std::to_string(agents * writes));
  CHECK(rig.provider.effect_count() == agents * writes);
}
