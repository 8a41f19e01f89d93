// One try of a decision and how its failures are sorted, driven by real
// libpqxx exceptions thrown inside a real transaction (as libpqxx tests its
// own transactor). The retries themselves: tests/http/database_retry_tests.cpp.
#include "store/store_fixture.hpp"

using namespace gw;
using namespace gw::test;

TEST_CASE("serialization failures and deadlocks are conflicts: thrown as Conflict, nothing committed") {
  StoreFixture f;
  f.db.exec("CREATE TABLE marks (n int)");
  for (auto fail : {+[] { throw pqxx::serialization_failure("could not serialize"); },
                    +[] { throw pqxx::deadlock_detected("deadlock"); }}) {
    int calls = 0;
    CHECK_THROWS_AS(serializable(f.session,
                                 [&](pqxx::dbtransaction& tx) -> int {
                                   ++calls;
                                   tx.exec("INSERT INTO marks VALUES (1)");
                                   fail();
                                   return 0;
                                 }),
                    Conflict);
    CHECK(calls == 1);  // tried once here; the caller decides when to try again
  }
  CHECK(f.db.scalar("SELECT count(*) FROM marks") == "0");
}

TEST_CASE("a commit in doubt is never retried and is authority_unavailable") {
  StoreFixture f;
  int calls = 0;
  CHECK_THROWS_AS(serializable(f.session,
                               [&](pqxx::dbtransaction&) -> int {
                                 ++calls;
                                 throw pqxx::in_doubt_error("commit outcome unknown");
                               }),
                  AuthorityUnavailable);
  CHECK(calls == 1);
}

TEST_CASE("a broken connection is replaced, not reused") {
  StoreFixture f;
  auto pid = [&] {
    return serializable(f.session, [](pqxx::dbtransaction& tx) {
      return tx.exec("SELECT pg_backend_pid()")[0][0].as<int>();
    });
  };
  const int first = pid();
  f.db.exec("SELECT pg_terminate_backend(" + std::to_string(first) + ")");
  const int second = pid();  // the broken connection is discarded and a new one answers
  CHECK(second != first);
}

TEST_CASE("a statement timeout is authority_unavailable") {
  StoreFixture f;
  f.session_options.statement_timeout = std::chrono::milliseconds(50);
  Session s(f.session_options, no_failures());
  CHECK_THROWS_AS(serializable(s, [](pqxx::dbtransaction& tx) { return tx.exec("SELECT pg_sleep(2)").size(); }),
                  AuthorityUnavailable);
}

TEST_CASE("failure classification by SQLSTATE") {
  CHECK(classify_sqlstate("40001") == FailureKind::conflict);
  CHECK(classify_sqlstate("40P01") == FailureKind::conflict);
  CHECK(classify_sqlstate("23505") == FailureKind::conflict);
  CHECK(classify_sqlstate("57014") == FailureKind::unavailable);
  CHECK(classify_sqlstate("57P01") == FailureKind::unavailable);
  CHECK(classify_sqlstate("08006") == FailureKind::unavailable);
  CHECK(classify_sqlstate("53300") == FailureKind::unavailable);
  CHECK(classify_sqlstate("42601") == FailureKind::bug);
}

TEST_CASE("backoff: full jitter under an exponential ceiling, capped") {
  const RetryPolicy p{8, std::chrono::milliseconds(2), std::chrono::milliseconds(100)};
  using std::chrono::milliseconds;
  CHECK(backoff_delay(p, 1, 0) == milliseconds(0));
  CHECK(backoff_delay(p, 1, 4) == milliseconds(4));   // ceiling 2 << 1 = 4
  CHECK(backoff_delay(p, 1, 5) == milliseconds(0));   // wraps within [0, 4]
  CHECK(backoff_delay(p, 3, 16) == milliseconds(16));  // ceiling 16
  CHECK(backoff_delay(p, 6, 100) == milliseconds(100));  // 128 capped at 100
  CHECK(backoff_delay(p, 40, ~0ull) <= milliseconds(100));  // shift bounded, never overflows
  for (std::uint64_t r = 0; r < 1000; ++r) CHECK(backoff_delay(p, 2, r) <= milliseconds(8));
}
