// Database work awaited from coroutines (service/db/database.hpp) on a real
// pool and a real PostgreSQL: a conflicting decision is tried again after a
// pause on a timer, a bounded number of times; the outcome lane is served
// while the request lane refuses new work.
#include "service/db/database.hpp"
#include "store/pg_result.hpp"
#include "store/prepared.hpp"
#include "support/test_database.hpp"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_future.hpp>

#include <doctest/doctest.h>

#include <future>
#include <optional>
#include <tuple>
#include <latch>
#include <mutex>

using namespace gw;
using namespace gw::test;

namespace {

struct Rig {
  // Sharing on (group_max 32) unless told: the shared-commit cases below need it.
  explicit Rig(unsigned size = 1, std::size_t queue_limit = 4096, unsigned group_max = 32)
      : pool(PoolOptions{.session = SessionOptions{db.url()},
                         .size = size,
                         .queue_limit = queue_limit,
                         .queue_timeout = std::chrono::milliseconds(60000),
                         .group_max = group_max}),
        database(pool, RetryPolicy{4, std::chrono::milliseconds(1), std::chrono::milliseconds(5)}) {}

  // Runs one coroutine to completion on a private I/O context.
  template <class T>
  T run(asio::awaitable<T> work) {
    auto result = asio::co_spawn(io, std::move(work), asio::use_future);
    io.run();
    io.restart();
    return result.get();
  }

  TestDatabase db;
  Pool pool;
  Database database;
  asio::io_context io;
};

}  // namespace

TEST_CASE("database: a conflicting decision is tried again until it commits") {
  Rig rig;
  int calls = 0;
  auto value = rig.run(rig.database.decide([&](Session& s) {
    return serializable(s, [&](pqxx::dbtransaction& tx) {
      if (++calls < 3) throw pqxx::serialization_failure("could not serialize");
      return tx.exec("SELECT 41 + 1")[0][0].as<int>();
    });
  }));
  CHECK(value == 42);
  CHECK(calls == 3);
}

TEST_CASE("database: conflicts past the policy's attempts are authority_unavailable") {
  Rig rig;
  int calls = 0;
  auto work = rig.database.decide([&](Session& s) {
    return serializable(s, [&](pqxx::dbtransaction&) -> int {
      ++calls;
      throw pqxx::deadlock_detected("deadlock");
    });
  });
  CHECK_THROWS_AS(rig.run(std::move(work)), AuthorityUnavailable);
  CHECK(calls == 4);
}

TEST_CASE("database: what the work throws reaches the coroutine unchanged") {
  Rig rig;
  CHECK_THROWS_AS(rig.run(rig.database.once([](Session&) -> int { throw std::logic_error("bug"); })),
                  std::logic_error);
}

TEST_CASE("database: the outcome lane is served while the request lane refuses new work") {
  // One worker, a request lane of one. The worker is held on a latch, one
  // request job waits, the next is refused, and an outcome job still gets in
  // and runs first when the worker is free.
  Rig rig(1, 1);
  std::latch holding(1), let_go(1), finished(2);
  std::vector<std::string> order;
  std::mutex order_mutex;
  auto note = [&](std::string what) {
    std::lock_guard lock(order_mutex);
    order.push_back(std::move(what));
  };
  rig.pool.submit(Pool::Job{[&](Session&) {
                              holding.count_down();
                              let_go.wait();
                            },
                            [&] { note("holder refused"); }});
  holding.wait();  // the worker is busy now
  rig.pool.submit(Pool::Job{[&](Session&) { note("request"), finished.count_down(); },
                            [&] { note("request refused"), finished.count_down(); }});
  rig.pool.submit(Pool::Job{[&](Session&) { note("second request"); }, [&] { note("second request refused"); }});
  rig.pool.submit(Pool::Job{[&](Session&) { note("outcome"), finished.count_down(); },
                            [&] { note("outcome refused"), finished.count_down(); }, Lane::outcome});
  let_go.count_down();
  finished.wait();
  std::lock_guard lock(order_mutex);
  CHECK(order == std::vector<std::string>{"second request refused", "outcome", "request"});
}

namespace {

// A worker held busy on a latch, so that jobs queue behind it: when it is let
// go they are taken together.
struct HeldWorker {
  explicit HeldWorker(Rig& rig) {
    rig.pool.submit(Pool::Job{[this](Session&) {
                                holding.count_down();
                                let_go.wait();
                              },
                              [] {}});
    holding.wait();
  }
  std::latch holding{1}, let_go{1};
};

// A decision with no one-statement form: decide_direct hands it to the pool.
struct NoStatement {
  Statement statement{"gw_test_none", ""};
  std::tuple<> args() const { return {}; }
  std::optional<int> answer(const PgRow&) { return std::nullopt; }
  static std::optional<int> refused(const std::string&) { return std::nullopt; }
};

// A decision that may share: inserts `value` into table t and returns it.
auto shared_insert(Database& database, int value) {
  auto insert = [value](pqxx::dbtransaction& tx) {
    tx.exec0("INSERT INTO t VALUES (" + std::to_string(value) + ")");
    return value;
  };
  return database.decide_direct([] { return std::optional<NoStatement>{}; },
                                [insert](Session& s, bool) { return serializable(s, insert); }, insert);
}

}  // namespace

TEST_CASE("database: decisions waiting together share one transaction and one commit") {
  Rig rig;
  rig.db.exec("CREATE TABLE t (v int PRIMARY KEY)");
  HeldWorker held(rig);
  std::vector<std::future<int>> results;
  for (int v = 1; v <= 5; ++v) results.push_back(asio::co_spawn(rig.io, shared_insert(rig.database, v), asio::use_future));
  // Each coroutine submits its job when the context runs; the worker is still busy.
  while (rig.pool.queued() < 5) rig.io.run_one();
  held.let_go.count_down();
  rig.io.run();
  for (int v = 1; v <= 5; ++v) CHECK(results[static_cast<std::size_t>(v - 1)].get() == v);
  CHECK(rig.pool.groups_committed() == 1);
  CHECK(rig.pool.grouped_decisions() == 5);
  CHECK(rig.pool.groups_split() == 0);
  CHECK(rig.db.scalar("SELECT string_agg(v::text, ',' ORDER BY v) FROM t") == "1,2,3,4,5");
}

TEST_CASE("database: a shared transaction that fails is split and each decision is made alone") {
  Rig rig;
  rig.db.exec("CREATE TABLE t (v int PRIMARY KEY)");
  rig.db.exec("INSERT INTO t VALUES (2)");  // the second decision fails on the key
  HeldWorker held(rig);
  std::vector<std::future<int>> results;
  for (int v = 1; v <= 3; ++v) results.push_back(asio::co_spawn(rig.io, shared_insert(rig.database, v), asio::use_future));
  while (rig.pool.queued() < 3) rig.io.run_one();
  held.let_go.count_down();
  rig.io.run();
  CHECK(results[0].get() == 1);
  // Alone it conflicts every time (a duplicate key is tried again, as two
  // admissions of one key are), so it gives up; the others were not harmed.
  CHECK_THROWS_AS(results[1].get(), AuthorityUnavailable);
  CHECK(results[2].get() == 3);
  CHECK(rig.pool.groups_split() == 1);
  CHECK(rig.pool.groups_committed() == 0);
  CHECK(rig.db.scalar("SELECT string_agg(v::text, ',' ORDER BY v) FROM t") == "1,2,3");
}

TEST_CASE("database: with group_max 1 every decision commits alone") {
  TestDatabase db;
  PoolOptions options{SessionOptions{db.url()}, 1, 4096, std::chrono::milliseconds(60000)};
  options.group_max = 1;
  Pool pool(options);
  Database database(pool, RetryPolicy{4, std::chrono::milliseconds(1), std::chrono::milliseconds(5)});
  db.exec("CREATE TABLE t (v int PRIMARY KEY)");
  asio::io_context io;
  std::latch holding(1), let_go(1);
  pool.submit(Pool::Job{[&](Session&) {
                          holding.count_down();
                          let_go.wait();
                        },
                        [] {}});
  holding.wait();
  std::vector<std::future<int>> results;
  for (int v = 1; v <= 3; ++v) {
    results.push_back(asio::co_spawn(io, shared_insert(database, v), asio::use_future));
  }
  while (pool.queued() < 3) io.run_one();
  let_go.count_down();
  io.run();
  for (auto& r : results) r.get();
  CHECK(pool.groups_committed() == 0);
  CHECK(db.scalar("SELECT count(*) FROM t") == "3");
}

TEST_CASE("database pool: decisions one after another go to the worker that went idle last, not to every connection") {
  Rig rig(8);
  auto forty = [&]() -> asio::awaitable<int> {
    asio::steady_timer pause(co_await asio::this_coro::executor);
    int ok = 0;
    for (int i = 0; i < 40; ++i) {
      ok += co_await rig.database.decide([](Session& s) {
        return serializable(s, [](pqxx::dbtransaction& tx) { return tx.exec("SELECT 1")[0][0].as<int>(); });
      });
      // As between a request's decisions (the forward, the next request):
      // time for the worker to be waiting again.
      pause.expires_after(std::chrono::milliseconds(5));
      co_await pause.async_wait(asio::use_awaitable);
    }
    co_return ok;
  };
  CHECK(rig.run(forty()) == 40);
  // Handed round the idle workers in turn, the forty would open all eight
  // connections; on a machine busy enough that a worker is not back in time,
  // another one is woken, so not exactly one.
  CHECK(rig.pool.open_connections() < 8);
  MESSAGE("connections opened: " << rig.pool.open_connections());
}
