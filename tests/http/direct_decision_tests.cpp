// database.direct_connections: fresh claims decided on a connection the I/O
// thread drives itself (service/db/direct_connections.hpp), over HTTP against a real
// PostgreSQL. Faults are real: backends terminated while idle and while
// the claim waits on a lock the test holds, and one stopped (SIGSTOP).
#include "support/eventually.hpp"
#include "support/gateway_fixture.hpp"
#include "support/parallel.hpp"
#include "support/pool_probes.hpp"

#include <doctest/doctest.h>
#include <pqxx/pqxx>

#include <signal.h>

#include <array>
#include <atomic>
#include <functional>
#include <limits>
#include <vector>

using namespace gw;
using namespace gw::test;

namespace {

// One I/O thread, so the connection a claim is served on is the one whose
// lane the test has seen open; `direct` connections on it. A decision goes
// to the pool while a pool job waits for its worker: the authority guard's
// re-read (every 200 ms by default) is made rare, so the counts here are the
// claims' own. `more` edits the config after that.
GatewayOptions one_thread(int direct, std::function<void(nlohmann::json&)> more = {}) {
  return {.manual_clock = true, .edit = [direct, more = std::move(more)](nlohmann::json& c) {
            c["http"]["io_threads"] = 1;
            c["database"]["direct_connections"] = direct;
            c["database"]["guard_interval_ms"] = 60000;
            c["database"]["lock_timeout_ms"] = 600000;
            c["database"]["statement_timeout_ms"] = 600000;
            if (more) more(c);
          }};
}

// one_thread with a single database worker, decisions never sharing a
// commit, a queue that waits as long as the test holds its locks, and one
// decision at a time on a direct connection (no statement sent behind
// another: these tests are about waiting for one).
// `more` edits the config after that.
GatewayOptions one_worker(int direct, std::function<void(nlohmann::json&)> more = {}) {
  GatewayOptions options = one_thread(direct);
  options.edit = [inner = options.edit, more = std::move(more)](nlohmann::json& c) {
    inner(c);
    c["database"]["pool_size"] = 1;
    c["database"]["group_max"] = 1;
    c["database"]["queue_timeout_ms"] = 600000;
    c["database"]["direct_pipeline"] = 1;
    if (more) more(c);
  };
  return options;
}


std::string direct_backends(const Gateway& g, const std::string& where = "true") {
  return g.db().scalar(
      "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database()"
      " AND application_name = 'write-gateway-direct' AND " + where);
}

// Claims new tasks (warm-1, warm-2, ...) until one was decided on a direct
// connection: the first ones go to the pool while the lane opens its own.
bool warm_up(Gateway& g) {
  int n = 0;
  return eventually([&] {
    g.claim("tenant-a", "warm-" + std::to_string(++n), "o", 60000);
    return metric(g, "gateway_db_direct_decisions_total") > 0;
  });
}

// `agents` claims at once, the i-th of task_of(i) by owner_of(i), each on its
// own connection: their replies, in that order.
template <class TaskOf, class OwnerOf>
std::vector<Reply> claims_at_once(const Gateway& g, int agents, TaskOf task_of, OwnerOf owner_of) {
  std::vector<Reply> replies(agents);
  Workers workers;
  for (int i = 0; i < agents; ++i)
    workers.spawn([&, i] {
      replies[i] = HttpClient(g.port(), std::chrono::seconds(60))
                       .post_json(task_path("tenant-a", task_of(i), "claim"), {{"owner", owner_of(i)}, {"lease_ms", 60000}},
                                  agent_a);
    });
  workers.join();
  return replies;
}

// The lane's one direct connection lent to a fresh claim of 'first' that
// waits for the test's own uncommitted insert of that task, and a fresh
// claim of 'second' waiting its turn for that connection. The second is
// sent once the first has waited past the 10 ms after which nothing is
// pipelined behind a statement (database.direct_pipeline).
struct LentShelf {
  Gateway& g;
  pqxx::connection inserter;
  pqxx::work insert;
  std::array<Reply, 2> claimed;
  std::array<std::atomic<bool>, 2> done{};
  Workers claims;

  explicit LentShelf(Gateway& gateway) : g(gateway), inserter(gateway.db().url()), insert(inserter) {
    insert.exec(
        "INSERT INTO tasks (tenant, task, owner, epoch, secret_hash, expires_at_ms, granted_at_ms)"
        " VALUES ('tenant-a', 'first', 'x', 1, sha256('x'), 0, 0)");
    claim(0, "first");
    REQUIRE(eventually([&] {
      return direct_backends(g, "wait_event_type = 'Lock' AND clock_timestamp() - query_start > interval '50 ms'") ==
             "1";
    }));
    claim(1, "second");
    // In the gateway, waiting for a connection: no backend has it yet.
    REQUIRE(eventually([&] { return metric(g, "gateway_db_direct_waiting") == 1; }));
    CHECK(g.db().scalar("SELECT count(*) FROM tasks WHERE task = 'second'") == "0");
  }

  void claim(std::size_t i, const std::string& task) {
    claims.spawn([this, i, task] {
      claimed[i] = HttpClient(g.port(), std::chrono::seconds(120))
                       .post_json(task_path("tenant-a", task, "claim"), minute_claim, agent_a);
      done[i] = true;
    });
  }
};

}  // namespace

TEST_CASE("direct decisions: fresh claims are made on the I/O thread's own connection, in a SERIALIZABLE session") {
  Gateway g(one_thread(2));
  g.set_clock(1000);
  REQUIRE(warm_up(g));
  CHECK(metric(g, "gateway_db_direct_connections_open") >= 1);
  CHECK(direct_backends(g) != "0");
  // Its session refuses to insert unless SERIALIZABLE (the statement's own
  // guard): a decision counted here was made in that isolation.
  const auto before = metric(g, "gateway_db_direct_decisions_total");
  for (int i = 0; i < 5; ++i) {
    auto r = g.claim("tenant-a", "task-" + std::to_string(i), "o", 60000);
    CHECK(r["grant"]["epoch"].get<std::int64_t>() > 0);
  }
  CHECK(metric(g, "gateway_db_direct_decisions_total") == before + 5);
  CHECK(g.db().scalar("SELECT count(*) FROM tasks WHERE task LIKE 'task-%'") == "5");
  CHECK(g.db().scalar("SELECT count(*) FROM task_ledger WHERE task LIKE 'task-%'") == "5");
  // A claim of a held task is the full decision, made on a worker.
  auto held = g.client().post_json(task_path("tenant-a", "task-0", "claim"), {{"owner", "p"}, {"lease_ms", 60000}},
                                   agent_a);
  CHECK(held.status == 409);
  CHECK(metric(g, "gateway_db_direct_decisions_total") == before + 5);
}

TEST_CASE("direct decisions: a fresh claim past the last epoch is epoch_exhausted, not an internal error") {
  Gateway g(one_thread(1));
  g.set_clock(1000);
  REQUIRE(warm_up(g));
  g.db().exec("ALTER SEQUENCE epoch_seq RESTART WITH 9223372036854775807");
  auto last = g.claim("tenant-a", "last", "o", 60000);
  CHECK(last["grant"]["epoch"].get<std::int64_t>() == std::numeric_limits<std::int64_t>::max());
  const auto before = metric(g, "gateway_db_direct_decisions_total");
  // The sequence errors out inside the statement sent on the direct
  // connection: that SQLSTATE is the claim's answer, as on a worker.
  auto over = g.client().post_json(task_path("tenant-a", "over", "claim"), minute_claim, agent_a);
  check_problem(over, 409, "epoch_exhausted");
  CHECK(metric(g, "gateway_db_direct_decisions_total") == before + 1);
  CHECK(g.db().scalar("SELECT count(*) FROM tasks WHERE task = 'over'") == "0");
}

TEST_CASE("direct decisions: with direct_connections 0 every claim goes to the workers and none is opened") {
  Gateway g(one_thread(0));
  g.set_clock(1000);
  for (int i = 0; i < 10; ++i) g.claim("tenant-a", "task-" + std::to_string(i), "o", 60000);
  CHECK(metric(g, "gateway_db_direct_decisions_total") == 0);
  CHECK(metric(g, "gateway_db_direct_connections_open") == 0);
  CHECK(direct_backends(g) == "0");
}

TEST_CASE("direct decisions: a direct connection the database closed while idle is not used, the claim is granted once") {
  Gateway g(one_thread(1));
  g.set_clock(1000);
  REQUIRE(warm_up(g));
  g.db().exec(
      "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = 'write-gateway-direct'"
      " AND datname = current_database()");
  REQUIRE(eventually([&] { return direct_backends(g) == "0"; }));
  auto r = g.client().post_json(task_path("tenant-a", "after-kill", "claim"), minute_claim, agent_a);
  CHECK(r.code() == "granted");
  CHECK(g.db().scalar("SELECT count(*) FROM tasks WHERE task = 'after-kill'") == "1");
  // The lane replaces it, and decides directly again.
  const auto before = metric(g, "gateway_db_direct_decisions_total");
  int n = 0;
  CHECK(eventually([&] {
    g.claim("tenant-a", "again-" + std::to_string(++n), "o", 60000);
    return metric(g, "gateway_db_direct_decisions_total") > before;
  }));
}

TEST_CASE("direct decisions: a fresh claim whose connection is cut mid-statement answers 503 and is never sent again") {
  Gateway g(one_thread(1));
  g.set_clock(1000);
  REQUIRE(warm_up(g));
  Reply reply;
  std::atomic<bool> done{false};
  Workers claim;
  {
    TasksLock lock(g.db().url());
    claim.spawn([&] {
      reply = HttpClient(g.port(), std::chrono::seconds(120))
                  .post_json(task_path("tenant-a", "cut", "claim"), minute_claim, agent_a);
      done = true;
    });
    // Sent on the direct connection, which now waits for the test's lock.
    REQUIRE(eventually([&] { return direct_backends(g, "wait_event_type = 'Lock'") == "1"; }));
    g.db().exec(
        "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = 'write-gateway-direct'"
        " AND datname = current_database() AND wait_event_type = 'Lock'");
    claim.join();
    CHECK(done);
  }
  // The gateway cannot know whether it committed: it says so, and does not
  // try it again on another connection behind the agent's back.
  check_problem(reply, 503, "authority_unavailable");
  CHECK(g.db().scalar("SELECT count(*) FROM tasks WHERE task = 'cut'") == "0");
  // The agent's own retry is a new decision.
  g.claim("tenant-a", "cut", "o", 60000);
  CHECK(g.db().scalar("SELECT count(*) FROM tasks WHERE task = 'cut'") == "1");
}

TEST_CASE("direct decisions: a claim whose server stops answering is given up at call_timeout_ms, in doubt, never sent again") {
  // The backend is stopped, so neither its statement_timeout nor anything
  // else of the server's can end the statement: only the gateway's own
  // deadline for the answer (database.call_timeout_ms) can.
  Gateway g(one_thread(1, [](nlohmann::json& c) {
    c["database"]["statement_timeout_ms"] = 200;
    c["database"]["call_timeout_ms"] = 500;
  }));
  g.set_clock(1000);
  REQUIRE(warm_up(g));
  const auto pid = std::stoi(g.db().scalar(
      "SELECT pid FROM pg_stat_activity WHERE application_name = 'write-gateway-direct'"
      " AND datname = current_database()"));
  struct Stopped {
    int pid;
    explicit Stopped(int p) : pid(p) { REQUIRE(::kill(pid, SIGSTOP) == 0); }
    ~Stopped() { ::kill(pid, SIGCONT); }
  };
  Reply reply;
  {
    Stopped stopped(pid);
    reply = HttpClient(g.port(), std::chrono::seconds(60))
                .post_json(task_path("tenant-a", "stalled", "claim"), minute_claim, agent_a);
    // Answered while the backend is still stopped: the gateway gave up.
    check_problem(reply, 503, "authority_unavailable");
  }
  // Sent once: the backend, resumed, may still commit it, and the gateway
  // never sends it again. Its connection is not lent again, and a new
  // one decides directly.
  CHECK(eventually([&] { return direct_backends(g, "pid = " + std::to_string(pid)) == "0"; }));
  CHECK(std::stoi(g.db().scalar("SELECT count(*) FROM tasks WHERE task = 'stalled'")) <= 1);
  const auto before = metric(g, "gateway_db_direct_decisions_total");
  int n = 0;
  CHECK(eventually([&] {
    g.claim("tenant-a", "after-stall-" + std::to_string(++n), "o", 60000);
    return metric(g, "gateway_db_direct_decisions_total") > before;
  }));
}

TEST_CASE("direct decisions: many agents claiming one new task at once: exactly one grant, one epoch") {
  Gateway g(one_thread(2));
  g.set_clock(1000);
  REQUIRE(warm_up(g));
  const auto replies = claims_at_once(
      g, 16, [](int) { return std::string("contested"); }, [](int i) { return "agent-" + std::to_string(i); });
  int granted = 0;
  for (const auto& r : replies) {
    if (r.code() == "granted") ++granted;
    else CHECK(r.status == 409);
  }
  CHECK(granted == 1);
  CHECK(g.db().scalar("SELECT count(*) FROM tasks WHERE task = 'contested'") == "1");
}

TEST_CASE("direct decisions: many agents claiming new tasks at once through one direct connection that takes 4 at a time: each granted once") {
  // database.direct_pipeline 4 (the default): with the thread's one
  // connection lent, each claim is sent behind those on their way.
  Gateway g(one_thread(1));
  g.set_clock(1000);
  REQUIRE(warm_up(g));
  const auto before = metric(g, "gateway_db_direct_decisions_total");
  constexpr int agents = 24;
  const auto replies = claims_at_once(
      g, agents, [](int i) { return "many-" + std::to_string(i); }, [](int) { return std::string("o"); });
  for (int i = 0; i < agents; ++i) {
    CAPTURE(i);
    CHECK(replies[i].code() == "granted");
    CHECK(replies[i].json()["grant"]["epoch"].get<std::int64_t>() > 0);
  }
  CHECK(g.db().scalar("SELECT count(*) FROM tasks WHERE task LIKE 'many-%'") == std::to_string(agents));
  CHECK(metric(g, "gateway_db_direct_decisions_total") == before + agents);
  CHECK(metric(g, "gateway_db_direct_lent") == 0);
  CHECK(direct_backends(g) == "1");
}

TEST_CASE("direct decisions: with shared commits off, a free direct connection decides while others wait for a worker") {
  // One worker, held by a renew that waits for the test's row lock, and a
  // second renew queued behind it. With database.group_max 1 (the default)
  // nothing in that queue could share a commit, so a fresh claim takes the
  // free direct connection instead of queueing there too.
  Gateway g(one_worker(1));
  g.set_clock(1000);
  REQUIRE(warm_up(g));
  const auto token = g.claim("tenant-a", "held", "o", 60000)["grant_token"].get<std::string>();
  const nlohmann::json renew_body{{"grant_token", token}, {"lease_ms", 60000}};

  std::array<Reply, 2> renewed;
  std::array<std::atomic<bool>, 2> done{};
  Workers renews;
  pqxx::connection locker(g.db().url());
  pqxx::work row_lock(locker);
  row_lock.exec("SELECT 1 FROM tasks WHERE tenant = 'tenant-a' AND task = 'held' FOR UPDATE");
  for (std::size_t i = 0; i < renewed.size(); ++i) {
    renews.spawn([&, i] {
      renewed[i] = HttpClient(g.port(), std::chrono::seconds(120))
                       .post_json(task_path("tenant-a", "held", "renew"), renew_body, agent_a);
      done[i] = true;
    });
    if (i == 0)
      REQUIRE(eventually([&] {
        return g.db().scalar("SELECT count(*) FROM pg_stat_activity WHERE datname = current_database()"
                             " AND application_name = 'write-gateway' AND wait_event_type = 'Lock'") == "1";
      }));
  }
  REQUIRE(eventually([&] { return metric(g, "gateway_db_pool_queued") == 1; }));

  const auto before = metric(g, "gateway_db_direct_decisions_total");
  // Answered while the worker is still blocked (with the old rule it would
  // queue behind the renews until the client gives up).
  auto fresh = HttpClient(g.port(), std::chrono::seconds(30))
                   .post_json(task_path("tenant-a", "fresh", "claim"), minute_claim, agent_a);
  CHECK(fresh.code() == "granted");
  CHECK(metric(g, "gateway_db_direct_decisions_total") == before + 1);
  CHECK_FALSE(done[0]);
  CHECK_FALSE(done[1]);

  row_lock.abort();
  renews.join();
  CHECK(renewed[0].code() == "renewed");
  CHECK(renewed[1].code() == "renewed");
  CHECK(g.db().scalar("SELECT count(*) FROM tasks WHERE task = 'fresh'") == "1");
}

TEST_CASE("direct decisions: with every direct connection lent, a decision waits its turn there, not behind a blocked worker") {
  // One worker, held by a renew that waits for the test's row lock; the one
  // direct connection held by a fresh claim that waits for the test's own
  // uncommitted insert of the same task. A second fresh claim then finds
  // the shelf full: it waits for that connection, and is decided on it as
  // soon as the first claim's wait ends, while the worker is still blocked.
  Gateway g(one_worker(1));
  g.set_clock(1000);
  REQUIRE(warm_up(g));
  const auto token = g.claim("tenant-a", "held", "o", 60000)["grant_token"].get<std::string>();

  pqxx::connection locker(g.db().url());
  pqxx::work row_lock(locker);
  row_lock.exec("SELECT 1 FROM tasks WHERE tenant = 'tenant-a' AND task = 'held' FOR UPDATE");
  Reply renewed;
  Workers renew;
  renew.spawn([&] {
    renewed = HttpClient(g.port(), std::chrono::seconds(120))
                  .post_json(task_path("tenant-a", "held", "renew"), {{"grant_token", token}, {"lease_ms", 60000}},
                             agent_a);
  });
  const auto backends_waiting = [&](const char* application) {
    return g.db().scalar(std::string("SELECT count(*) FROM pg_stat_activity WHERE datname = current_database()"
                                     " AND application_name = '") + application + "' AND wait_event_type = 'Lock'");
  };
  REQUIRE(eventually([&] { return backends_waiting("write-gateway") == "1"; }));

  const auto before = metric(g, "gateway_db_direct_decisions_total");
  LentShelf shelf(g);
  CHECK(metric(g, "gateway_db_direct_lent") == 1);  // the first claim's; the second only waits for it
  shelf.insert.abort();
  shelf.claims.join();
  CHECK(shelf.claimed[0].code() == "granted");
  CHECK(shelf.claimed[1].code() == "granted");
  CHECK(metric(g, "gateway_db_direct_decisions_total") == before + 2);
  CHECK(backends_waiting("write-gateway") == "1");  // the renew still waits on its worker

  row_lock.abort();
  renew.join();
  CHECK(renewed.code() == "renewed");
  CHECK(g.db().scalar("SELECT count(*) FROM tasks WHERE task IN ('first', 'second')") == "2");
}

TEST_CASE("direct decisions: nothing is sent behind a statement stuck on a lock, even with room in the pipeline") {
  // direct_pipeline 4, and the lane's one connection carries a claim that
  // has waited on the test's lock for more than 10 ms: the next claim waits
  // its turn in the gateway instead of queueing behind it in PostgreSQL.
  Gateway g(one_worker(1, [](nlohmann::json& c) { c["database"]["direct_pipeline"] = 4; }));
  g.set_clock(1000);
  REQUIRE(warm_up(g));
  LentShelf shelf(g);
  CHECK(metric(g, "gateway_db_direct_lent") == 1);
  shelf.insert.abort();
  shelf.claims.join();
  CHECK(shelf.claimed[0].code() == "granted");
  CHECK(shelf.claimed[1].code() == "granted");
  CHECK(metric(g, "gateway_db_direct_lent") == 0);
}

TEST_CASE("direct decisions: a decision waiting for a direct connection that breaks is decided by a worker") {
  Gateway g(one_worker(1));
  g.set_clock(1000);
  REQUIRE(warm_up(g));
  LentShelf shelf(g);
  const auto before = metric(g, "gateway_db_direct_decisions_total");
  // The lent connection's backend goes away under the first claim.
  g.db().exec(
      "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = 'write-gateway-direct'"
      " AND datname = current_database() AND wait_event_type = 'Lock'");
  // The waiting claim is not left waiting for a connection that will not
  // come back: the worker decides it while the test's insert is still open.
  REQUIRE(eventually([&] { return shelf.done[1].load(); }));
  CHECK(shelf.claimed[1].code() == "granted");
  CHECK(metric(g, "gateway_db_direct_waiting") == 0);
  CHECK(metric(g, "gateway_db_direct_decisions_total") == before);
  shelf.insert.abort();
  shelf.claims.join();
  // The cut claim cannot know whether it committed: 503, never sent again.
  check_problem(shelf.claimed[0], 503, "authority_unavailable");
  CHECK(g.db().scalar("SELECT count(*) FROM tasks WHERE task = 'first'") == "0");
  CHECK(g.db().scalar("SELECT count(*) FROM tasks WHERE task = 'second'") == "1");
}

TEST_CASE("direct decisions: a decision that waited queue_timeout_ms for a direct connection is decided by a worker") {
  Gateway g(one_worker(1, [](nlohmann::json& c) { c["database"]["queue_timeout_ms"] = 300; }));
  g.set_clock(1000);
  REQUIRE(warm_up(g));
  LentShelf shelf(g);
  // Decided on the free worker once its turn did not come in time, while
  // the first claim still holds the lane's connection.
  REQUIRE(eventually([&] { return shelf.done[1].load(); }));
  CHECK(shelf.claimed[1].code() == "granted");
  CHECK_FALSE(shelf.done[0].load());
  CHECK(metric(g, "gateway_db_direct_waiting") == 0);
  shelf.insert.abort();
  shelf.claims.join();
  CHECK(shelf.claimed[0].code() == "granted");
  CHECK(g.db().scalar("SELECT count(*) FROM tasks WHERE task IN ('first', 'second')") == "2");
}

TEST_CASE("direct decisions: the I/O threads share one budget of connections: a thread serving every agent may open all of it") {
  // Two I/O threads with one direct connection each: a budget of two. The
  // listener serves the first 4 connections on the first thread
  // (http/server.cpp), so every claim here is that thread's. How a thread
  // gives a connection up to another: tests/http/direct_budget_tests.cpp.
  Gateway g(one_thread(1, [](nlohmann::json& c) {
    c["http"]["io_threads"] = 2;
    c["database"]["direct_pipeline"] = 1;
  }));
  g.set_clock(1000);
  REQUIRE(warm_up(g));
  REQUIRE(eventually([&] { return metric(g, "gateway_db_direct_connections_open") == 1; }));

  // Its one connection held by a claim waiting on the test's uncommitted
  // insert of the same task...
  pqxx::connection inserter(g.db().url());
  pqxx::work insert(inserter);
  insert.exec(
      "INSERT INTO tasks (tenant, task, owner, epoch, secret_hash, expires_at_ms, granted_at_ms)"
      " VALUES ('tenant-a', 'first', 'x', 1, sha256('x'), 0, 0)");
  Reply blocked;
  Workers waiting;
  waiting.spawn([&] {
    blocked = HttpClient(g.port(), std::chrono::seconds(120))
                  .post_json(task_path("tenant-a", "first", "claim"), minute_claim, agent_a);
  });
  REQUIRE(eventually([&] { return direct_backends(g, "wait_event_type = 'Lock'") == "1"; }));
  // ...a second claim finds none free: the thread opens the budget's second
  // connection (the claim itself goes to a worker meanwhile) and decides
  // the next claim on it, beyond its own share of one.
  g.claim("tenant-a", "second", "o", 60000);
  REQUIRE(eventually([&] { return metric(g, "gateway_db_direct_connections_open") == 2; }));
  const auto before = metric(g, "gateway_db_direct_decisions_total");
  g.claim("tenant-a", "third", "o", 60000);
  CHECK(metric(g, "gateway_db_direct_decisions_total") == before + 1);
  CHECK(metric(g, "gateway_db_direct_connections_open") == 2);
  CHECK(direct_backends(g) == "2");

  insert.abort();
  waiting.join();
  CHECK(blocked.code() == "granted");
  CHECK(g.db().scalar("SELECT count(*) FROM tasks WHERE tenant = 'tenant-a' AND task IN"
                      " ('first', 'second', 'third')") == "3");
}
