// The direct connections' budget (service/db/direct_connections.cpp): the I/O
// threads' shelves hold at most per_thread x threads connections together; a
// shelf may hold more than its share while another does not use its own, and
// gives one up when a shelf below its share finds the budget spent. Two
// io_contexts driven by the test thread, a real pool and a real PostgreSQL.
#include "service/db/direct_connections.hpp"
#include "support/eventually.hpp"
#include "support/test_database.hpp"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/use_future.hpp>
#include <doctest/doctest.h>

using namespace gw;
using namespace gw::test;
using namespace std::chrono_literals;

namespace {

struct TwoShelves {
  TestDatabase db;
  Pool pool{PoolOptions{SessionOptions{db.url()}, 1, 4096, 60000ms}};
  asio::io_context a, b;
  // Kept from running out of work, so that run_one_for waits for the report.
  asio::executor_work_guard<asio::io_context::executor_type> a_busy{a.get_executor()}, b_busy{b.get_executor()};
  // One connection each: a budget of two.
  DirectConnections direct{{&a, &b}, pool, SessionOptions{db.url()}, 1, 1, 5000ms};

  DirectConnections::Taken take(asio::io_context& io) { return direct.take(io.get_executor()); }
  // Runs `io`'s handlers until `n` connections are open (a connect is made on
  // a worker and reported back to the shelf's own thread).
  void until_open(asio::io_context& io, std::size_t n) {
    while (direct.open() < n) io.run_one_for(100ms);
  }
  std::string backends() {
    // This test's database only: other tests run beside it on the same server.
    return db.scalar(
        "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database()"
        " AND application_name = 'write-gateway-direct'");
  }
};

}  // namespace

TEST_CASE("direct budget: one shelf may hold the whole budget, never more, while the other does not use its share") {
  TwoShelves s;
  CHECK_FALSE(s.take(s.a));  // none yet: one is opened, the decision goes to a worker
  s.until_open(s.a, 1);
  auto first = s.take(s.a);
  REQUIRE(first);
  CHECK_FALSE(s.take(s.a));  // all lent, the budget has room: a second is opened
  s.until_open(s.a, 2);
  auto second = s.take(s.a);
  REQUIRE(second);
  CHECK_FALSE(s.take(s.a));  // both lent, the budget spent: nothing more is opened
  s.a.poll();
  CHECK(s.direct.open() == 2);
  CHECK(s.backends() == "2");
  // Given back while no shelf wants one: kept.
  second.reset();
  CHECK(s.direct.open() == 2);
  CHECK(s.take(s.a));
}

TEST_CASE("direct budget: a shelf below its share that finds the budget spent gets a connection the other gives back") {
  TwoShelves s;
  CHECK_FALSE(s.take(s.a));
  s.until_open(s.a, 1);
  auto first = s.take(s.a);
  CHECK_FALSE(s.take(s.a));
  s.until_open(s.a, 2);
  auto second = s.take(s.a);
  REQUIRE(second);

  // The other shelf has none and no room to open one: the decision goes to a
  // worker, and waiting its turn there returns at once (nothing of that
  // shelf's is lent, so nothing would come back).
  CHECK_FALSE(s.take(s.b));
  auto in_turn = asio::co_spawn(s.b, s.direct.take_in_turn(60000ms, Lane::request), asio::use_future);
  s.b.poll();
  REQUIRE(in_turn.wait_for(0s) == std::future_status::ready);
  CHECK_FALSE(in_turn.get());

  // Given back above its share while wanted: closed, not kept idle.
  second.reset();
  CHECK(s.direct.open() == 1);
  CHECK(eventually([&] { return s.backends() == "1"; }));
  // The slot is the other shelf's to open.
  CHECK_FALSE(s.take(s.b));
  s.until_open(s.b, 2);
  CHECK(s.take(s.b));
  CHECK(s.backends() == "2");
  // Given back at its share: kept.
  first.reset();
  CHECK(s.direct.open() == 2);
}

TEST_CASE("direct budget: a shelf that finds the budget spent gets the slot of a connection another shelf left idle from an earlier load") {
  TwoShelves s;
  // The second shelf opens the whole budget, then its thread goes quiet.
  CHECK_FALSE(s.take(s.b));
  s.until_open(s.b, 1);
  {
    auto first = s.take(s.b);
    REQUIRE(first);
    CHECK_FALSE(s.take(s.b));
    s.until_open(s.b, 2);
    REQUIRE(s.take(s.b));
  }
  CHECK(s.direct.open() == 2);

  // The first shelf finds the budget spent. Connections given back just now
  // are kept: they may be a busy thread's.
  CHECK_FALSE(s.take(s.a));
  s.b.poll();
  CHECK(s.direct.open() == 2);
  // Once one has been idle for a second, the next ask closes it (on its own
  // thread), and the first shelf opens that slot.
  CHECK(eventually([&] {
    CHECK_FALSE(s.take(s.a));
    s.b.poll();
    return s.direct.open() == 1;
  }));
  CHECK(eventually([&] { return s.backends() == "1"; }));
  CHECK_FALSE(s.take(s.a));
  s.until_open(s.a, 2);
  CHECK(s.take(s.a));
  CHECK(s.backends() == "2");
}
