// The database pool's two refusals, database.queue_limit and
// database.queue_timeout_ms, with its one worker really busy: a test session
// holds an exclusive lock on `tasks`, so a claim blocks inside PostgreSQL
// until the test lets go. Nothing waits a guessed time for the gateway:
// the blocked worker is seen in pg_stat_activity, the queued job in /metrics.
#include "support/eventually.hpp"
#include "support/gateway_fixture.hpp"
#include "support/parallel.hpp"
#include "support/pool_probes.hpp"

#include <doctest/doctest.h>
#include <pqxx/pqxx>

#include <array>
#include <atomic>

using namespace gw;
using namespace gw::test;

namespace {

// One worker that waits for nothing but the lock; queue and lock limits as given.
GatewayOptions one_worker(std::int64_t queue_limit, std::int64_t queue_timeout_ms) {
  return {.manual_clock = true, .edit = [=](nlohmann::json& c) {
            auto& d = c["database"];
            d["pool_size"] = 1;
            // The pool alone: an I/O thread's own connections would take the
            // claims past it (tests/http/direct_decision_tests.cpp has those).
            d["direct_connections"] = 0;
            d["queue_limit"] = queue_limit;
            d["queue_timeout_ms"] = queue_timeout_ms;
            d["lock_timeout_ms"] = 600000;
            d["statement_timeout_ms"] = 600000;
            // The gateway's own periodic work (the guard's read every 200 ms,
            // the sweep, the reconciler) would queue behind the blocked worker
            // too, and the queue the tests count would hold more than their
            // claims: put off past any test's end.
            d["guard_interval_ms"] = 60000;
            c["recovery"]["sweep_interval_ms"] = 3600000;
            c["recovery"]["reconcile"]["interval_ms"] = 3600000;
          }};
}

std::string waiting_on_lock(const Gateway& g) {
  return g.db().scalar(
      "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database()"
      " AND application_name = 'write-gateway' AND wait_event_type = 'Lock'");
}

bool queued(const Gateway& g, int n) {
  auto m = g.client().get("/metrics", "").body;
  return m.find("\ngateway_db_pool_queued " + std::to_string(n) + "\n") != std::string::npos;
}


// A claim of `task` by agent A, on a thread of `workers`; the reply lands in
// `reply` and `done` turns true.
void claim_in_background(Workers& workers, const Gateway& g, const std::string& task, Reply& reply,
                         std::atomic<bool>& done) {
  workers.spawn([&g, task, &reply, &done] {
    HttpClient client(g.port(), std::chrono::seconds(120));
    reply = client.post_json(task_path("tenant-a", task, "claim"), minute_claim, agent_a);
    done = true;
  });
}

std::string count_tasks(const Gateway& g, const std::string& where = "true") {
  return g.db().scalar("SELECT count(*) FROM tasks WHERE " + where);
}

}  // namespace

TEST_CASE("database pool: a request beyond queue_limit is refused at once with authority_unavailable") {
  Gateway g(one_worker(1, 600000));
  g.set_clock(1000);
  std::array<Reply, 2> replies;
  std::array<std::atomic<bool>, 2> done{};
  Workers claims;
  TasksLock lock(g.db().url());

  claim_in_background(claims, g, "task-1", replies[0], done[0]);
  REQUIRE(eventually([&] { return waiting_on_lock(g) == "1"; }));  // the only worker is busy
  claim_in_background(claims, g, "task-2", replies[1], done[1]);
  REQUIRE(eventually([&] { return queued(g, 1); }));  // the queue is full

  // Answered while the lock is still held: it never waited for the worker.
  auto refused = HttpClient(g.port(), std::chrono::seconds(120))
                     .post_json(task_path("tenant-a", "task-3", "claim"), minute_claim, agent_a);
  check_problem(refused, 503, "authority_unavailable");
  CHECK(refused.header("Retry-After") == "1");
  CHECK_FALSE(done[0]);
  CHECK_FALSE(done[1]);

  lock.release();
  claims.join();
  CHECK(replies[0].code() == "granted");
  CHECK(replies[1].code() == "granted");
  // Exactly the granted claims were written; the refused one left nothing.
  CHECK(count_tasks(g) == "2");
  CHECK(count_tasks(g, "task = 'task-3'") == "0");
  CHECK(g.db().scalar("SELECT count(*) FROM task_ledger") == "2");
  // Recovered: the refused claim goes through now.
  g.claim("tenant-a", "task-3", "o", 60000);
  CHECK(queued(g, 0));
}

TEST_CASE("database pool: a request that waited past queue_timeout_ms gets authority_unavailable") {
  const auto queue_timeout = std::chrono::milliseconds(2000);
  Gateway g(one_worker(100, queue_timeout.count()));
  g.set_clock(1000);
  std::array<Reply, 2> replies;
  std::array<std::atomic<bool>, 2> done{};
  Workers claims;
  TasksLock lock(g.db().url());

  claim_in_background(claims, g, "task-1", replies[0], done[0]);
  REQUIRE(eventually([&] { return waiting_on_lock(g) == "1"; }));
  claim_in_background(claims, g, "task-2", replies[1], done[1]);
  REQUIRE(eventually([&] { return queued(g, 1); }));
  // The queued job was enqueued before this point. Holding the worker until
  // it is older than queue_timeout is the condition under test, not a wait
  // for another party, so it is measured on the test's own clock.
  std::this_thread::sleep_until(std::chrono::steady_clock::now() + queue_timeout + std::chrono::milliseconds(200));
  CHECK_FALSE(done[0]);
  CHECK_FALSE(done[1]);

  lock.release();
  claims.join();
  CHECK(replies[0].code() == "granted");
  check_problem(replies[1], 503, "authority_unavailable");
  CHECK(replies[1].header("Retry-After") == "1");
  CHECK(count_tasks(g) == "1");
  CHECK(count_tasks(g, "task = 'task-2'") == "0");
  CHECK(g.db().scalar("SELECT count(*) FROM task_ledger") == "1");
  // A fresh request is served at once by the idle worker.
  g.claim("tenant-a", "task-2", "o", 60000);
  CHECK(count_tasks(g) == "2");
}

TEST_CASE("metrics: connections in use is 0 at rest, 1 while a claim waits on a lock in PostgreSQL, 0 again after") {
  Gateway g(one_worker(100, 600000));
  g.set_clock(1000);
  // The sweep loop's own short jobs use the worker now and then: wait for rest.
  CHECK(eventually([&] { return metric(g, "gateway_db_connections_in_use") == 0; }));
  CHECK(metric(g, "gateway_db_pool_size") == 1);
  Reply reply;
  std::atomic<bool> done{false};
  Workers claims;
  TasksLock lock(g.db().url());
  claim_in_background(claims, g, "task-1", reply, done);
  REQUIRE(eventually([&] { return waiting_on_lock(g) == "1"; }));
  // The scrape itself never waits for a database worker.
  CHECK(metric(g, "gateway_db_connections_in_use") == 1);
  CHECK(metric(g, "gateway_db_connections_open") == 1);
  CHECK_FALSE(done);
  lock.release();
  claims.join();
  CHECK(reply.code() == "granted");
  CHECK(eventually([&] { return metric(g, "gateway_db_connections_in_use") == 0; }));
}
