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

#include <pqxx/pqxx>

#include <mutex>
#include <string>
#include <vector>

using namespace gw;
using namespace gw::test;

namespace {

// `writes` protected writes from each of `agents` agents at once, agent n
// on storm-<n> with keys storm-<n>-<first>... and the versions they expect;
// what went wrong, one line per agent that stopped.
std::vector<std::string> write_all(Gateway& g, const std::vector<std::string>& grants, int first, int writes) {
  std::mutex failures_mutex;
  std::vector<std::string> failures;
  Workers workers;
  for (int n = 1; n <= static_cast<int>(grants.size()); ++n)
    workers.spawn([&, n] {
      HttpClient c(g.port());
      Write w;
      w.task = "storm-" + std::to_string(n);
      w.grant = grants[n - 1];
      for (int k = first; k < first + writes; ++k) {
        w.key = w.task + "-" + std::to_string(k);
        w.expected_version = k - 1;
        w.body = booking_body(w.key);
        auto r = send(c, w);
        if (r.code() != "committed") {
          std::lock_guard lock(failures_mutex);
          failures.push_back(w.key + ": " + std::to_string(r.status) + " " + r.body);
          return;
        }
      }
    });
  workers.join();
  return failures;
}

// Test-only: every admission and outcome waits 5 ms inside its
// transaction, so that the agents' decisions overlap as on a busy machine.
void slow_every_decision(Gateway& g) {
  g.db().exec(
      "CREATE FUNCTION storm_slow() RETURNS trigger LANGUAGE plpgsql AS "
      "$$BEGIN PERFORM pg_sleep(0.005); RETURN NEW; END$$");
  g.db().exec("CREATE TRIGGER storm_slow BEFORE INSERT OR UPDATE ON operations "
              "FOR EACH ROW EXECUTE FUNCTION storm_slow()");
}

// storm-1 to storm-<agents> claimed, each by its own agent, on a fresh
// database as it looks a minute in: autovacuum has analyzed the few rows
// there are, and a point read costs more than a scan. Their grants, in order.
std::vector<std::string> claim_storm_tasks(Gateway& g, int agents) {
  g.set_clock(0);
  std::vector<std::string> grants;
  for (int n = 1; n <= agents; ++n)
    grants.push_back(grant_token(g.claim("tenant-a", "storm-" + std::to_string(n), "region-a", 600000)));
  g.db().exec("ANALYZE");
  return grants;
}

}  // namespace

TEST_CASE("conflict storm: 64 agents on their own tasks, slowed transactions, no serialization give-up") {
  ProxyRig rig;
  auto& g = rig.gateway;
  constexpr int agents = 64, writes = 3;
  const auto grants = claim_storm_tasks(g, agents);
  slow_every_decision(g);
  for (const auto& f : write_all(g, grants, 1, writes)) FAIL_CHECK(f);
  CHECK(metric(g, "gateway_db_serialization_give_ups_total") == 0);
  MESSAGE("serialization retries: " << metric(g, "gateway_db_serialization_retries_total"));
  CHECK(g.db().scalar("SELECT count(*) FROM operations WHERE state <> 'succeeded'") == "0");
  CHECK(g.db().scalar("SELECT count(*) FROM operations") == std::to_string(agents * writes));
  CHECK(rig.provider.effect_count() == agents * writes);
}

TEST_CASE("conflict storm: a long snapshot beside 64 agents' writes, the ledger rows moving, no serialization retry") {
  // While any transaction holds an old snapshot (autovacuum's ANALYZE of a
  // large table, a backup, a report), PostgreSQL cannot prune the ledger
  // rows' old versions: their page fills, and the next update of each row
  // moves it to another page and inserts its key into the ledger's index
  // again. A decision that had read that index page is then in a read-write
  // conflict with the move, and with names in sequence (or on a fresh
  // database) every task's key is on that page: such conflicts made pivots
  // and aborted unrelated writes. The decisions read and write a task's
  // ledger row at its address once the gateway has written it
  // (store/ledger_addresses.hpp), so none may conflict at all: no retry,
  // counted.
  ProxyRig rig;
  auto& g = rig.gateway;
  constexpr int agents = 64, writes = 12;
  const auto grants = claim_storm_tasks(g, agents);
  // Each task written once: the gateway knows where its ledger row is.
  for (const auto& f : write_all(g, grants, 1, 1)) FAIL_CHECK(f);
  slow_every_decision(g);
  const auto retries_before = metric(g, "gateway_db_serialization_retries_total");

  pqxx::connection holder(g.db().url());
  pqxx::transaction<pqxx::repeatable_read> old_snapshot(holder);
  old_snapshot.exec("SELECT count(*) FROM tasks");
  for (const auto& f : write_all(g, grants, 2, writes)) FAIL_CHECK(f);
  // The rows did move: without pruning, the 64 ledger rows' 1,536 new
  // versions cannot all stay on the page the 64 rows started on. (Before
  // the addresses, this load made 122 and 142 retries without the slowing,
  // and with it gave up on some writes: 503s.)
  const auto ledger_pages = g.db().scalar("SELECT count(DISTINCT (ctid::text::point)[0]) FROM task_ledger");
  old_snapshot.abort();
  CHECK(std::stoi(ledger_pages) > 1);

  CHECK(metric(g, "gateway_db_serialization_retries_total") == retries_before);
  CHECK(metric(g, "gateway_db_serialization_give_ups_total") == 0);
  CHECK(g.db().scalar("SELECT count(*) FROM operations WHERE state <> 'succeeded'") == "0");
  CHECK(g.db().scalar("SELECT count(*) FROM operations") == std::to_string(agents * (writes + 1)));
  CHECK(rig.provider.effect_count() == agents * (writes + 1));
}
