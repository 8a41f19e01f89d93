// The retry policy, driven by real libpqxx exceptions thrown inside a real
// transaction (as libpqxx tests its own transactor).
#include "store/store_fixture.hpp"

using namespace gw;
using namespace gw::test;

TEST_CASE("serialization failures and deadlocks are retried, then succeed") {
  StoreFixture f;
  int calls = 0;
  auto r = serializable(f.session, f.retry, [&](pqxx::dbtransaction&) {
    ++calls;
    if (calls == 1) throw pqxx::serialization_failure("could not serialize");
    if (calls == 2) throw pqxx::deadlock_detected("deadlock");
    return 7;
  });
  CHECK(r == 7);
  CHECK(calls == 3);
}

TEST_CASE("a commit in doubt is never retried and is authority_unavailable") {
  StoreFixture f;
  int calls = 0;
  CHECK_THROWS_AS(serializable(f.session, f.retry,
                               [&](pqxx::dbtransaction&) -> int {
                                 ++calls;
                                 throw pqxx::in_doubt_error("commit outcome unknown");
                               }),
                  AuthorityUnavailable);
  CHECK(calls == 1);
}

TEST_CASE("retries are bounded") {
  StoreFixture f;
  int calls = 0;
  CHECK_THROWS_AS(serializable(f.session, f.retry,
                               [&](pqxx::dbtransaction&) -> int {
                                 ++calls;
                                 throw pqxx::serialization_failure("again");
                               }),
                  AuthorityUnavailable);
  CHECK(calls == static_cast<int>(f.retry.max_attempts));
}

TEST_CASE("a broken connection is replaced, not reused") {
  StoreFixture f;
  auto pid = [&] {
    return serializable(f.session, f.retry, [](pqxx::dbtransaction& tx) {
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
  CHECK_THROWS_AS(serializable(s, f.retry, [](pqxx::dbtransaction& tx) { return tx.exec("SELECT pg_sleep(2)").size(); }),
                  AuthorityUnavailable);
}

TEST_CASE("failure classification by SQLSTATE") {
  CHECK(classify_sqlstate("40001") == FailureKind::retry);
  CHECK(classify_sqlstate("40P01") == FailureKind::retry);
  CHECK(classify_sqlstate("23505") == FailureKind::retry);
  CHECK(classify_sqlstate("57014") == FailureKind::unavailable);
  CHECK(classify_sqlstate("57P01") == FailureKind::unavailable);
  CHECK(classify_sqlstate("08006") == FailureKind::unavailable);
  CHECK(classify_sqlstate("53300") == FailureKind::unavailable);
  CHECK(classify_sqlstate("42601") == FailureKind::bug);
}
