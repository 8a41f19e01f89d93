// service/db/pg_connection.hpp against a real PostgreSQL: the session it sets
// up, what it sends and reads back, and each way a statement can fail,
// caused for real (an error raised in SQL, a backend terminated while idle
// or mid-statement, a statement that outlives the call timeout).
#include "service/db/pg_connection.hpp"
#include "store/transaction.hpp"
#include "support/eventually.hpp"
#include "support/test_database.hpp"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/use_future.hpp>

#include <doctest/doctest.h>

#include <algorithm>
#include <future>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

using namespace gw;
using namespace gw::test;

namespace {

struct Connected {
  TestDatabase db;
  asio::io_context io;
  std::shared_ptr<PgConnection> connection;

  explicit Connected(std::chrono::milliseconds call_timeout = std::chrono::milliseconds(10000),
                     std::chrono::milliseconds statement_timeout = std::chrono::milliseconds(2000)) {
    SessionOptions o;
    o.url = db.url();
    o.statement_timeout = statement_timeout;
    o.application_name = "pg-connection-test";
    connection = std::make_shared<PgConnection>(io.get_executor(), open_pg_connection(o), call_timeout);
    db.exec(
        "CREATE FUNCTION raise_state(code text) RETURNS int LANGUAGE plpgsql AS"
        " $$ BEGIN RAISE EXCEPTION 'raised %', code USING ERRCODE = code; END $$");
  }

  // Runs `sql` with `args` on the connection, on this thread, to the end.
  template <class... Args>
  PgResult run(const char* name, const char* sql, const Args&... args) {
    const Statement statement{name, sql};
    auto params = PgParams::of(std::make_tuple(args...));
    std::vector<std::future<std::optional<PgResult>>> done;
    done.push_back(asio::co_spawn(io, awaited(statement, params), asio::use_future));
    run_until_answered(done);
    return std::move(*done[0].get());
  }

  // Runs the io_context until every one of `answers` is in. Not until it
  // runs out of work: the connection's deadline timer stays armed between
  // calls (deadline.hpp) and would hold it to the call timeout.
  void run_until_answered(std::vector<std::future<std::optional<PgResult>>>& answers) {
    const auto answered = [&] {
      return std::all_of(answers.begin(), answers.end(), [](const auto& answer) {
        return answer.wait_for(std::chrono::seconds(0)) == std::future_status::ready;
      });
    };
    io.restart();
    while (!answered()) io.run_one();
  }

  // run(), as co_spawn wants it (a default-constructible result).
  asio::awaitable<std::optional<PgResult>> awaited(const Statement& statement, const PgParams& params) {
    co_return co_await connection->run(statement, params);
  }

  // Each statement with its one argument (text, cast in the SQL as needed),
  // all started before any is answered: each is sent behind the one before
  // (pipelined) before the first answer is read. Returns their answers, or
  // the exceptions they ended with, in the order given. started() leaves
  // the io_context to be run (terminated_while_sleeping, say); all() runs it here.
  using Call = std::pair<Statement, std::string>;
  std::vector<std::future<std::optional<PgResult>>> started(const std::vector<Call>& calls) {
    std::vector<std::future<std::optional<PgResult>>> answers;
    for (const auto& call : calls) answers.push_back(asio::co_spawn(io, with_text(call), asio::use_future));
    return answers;
  }
  std::vector<std::future<std::optional<PgResult>>> all(const std::vector<Call>& calls) {
    auto answers = started(calls);
    run_until_answered(answers);
    return answers;
  }
  asio::awaitable<std::optional<PgResult>> with_text(Call call) {
    const auto params = PgParams::of(std::make_tuple(call.second));
    co_return co_await connection->run(call.first, params);
  }

  // Runs the io_context on a second thread, terminates this connection's
  // backend as soon as it is seen running pg_sleep, and waits until every
  // one of `answers` is in. Whether it was seen running.
  bool terminated_while_sleeping(std::vector<std::future<std::optional<PgResult>>>& answers) {
    const auto pid = backend_pid();
    std::thread runner([&] { run_until_answered(answers); });
    const bool seen = eventually([&] {
      return db.scalar("SELECT count(*) FROM pg_stat_activity WHERE pid = " + pid + " AND query LIKE '%pg_sleep%'"
                       " AND state = 'active'") == "1";
    });
    db.exec("SELECT pg_terminate_backend(" + pid + ")");
    runner.join();
    return seen;
  }

  std::string backend_pid() {
    // This test's database only: tests running side by side share the server.
    return db.scalar(
        "SELECT pid FROM pg_stat_activity WHERE application_name = 'pg-connection-test'"
        " AND datname = current_database()");
  }
};

}  // namespace

TEST_CASE("pg connection: the session is SERIALIZABLE by default, with the pool's timeouts and hex bytea") {
  Connected c(std::chrono::milliseconds(10000), std::chrono::milliseconds(1500));
  auto r = c.run("settings",
                 "SELECT current_setting('transaction_isolation'), current_setting('statement_timeout'),"
                 " current_setting('bytea_output'), current_setting('application_name')");
  CHECK(r.at(0)[0].as<std::string>() == "serializable");
  CHECK(r.at(0)[1].as<std::string>() == "1500ms");
  CHECK(r.at(0)[2].as<std::string>() == "hex");
  CHECK(r.at(0)[3].as<std::string>() == "pg-connection-test");
}

TEST_CASE("pg connection: text, integers, booleans, nulls and bytea go out and come back unchanged") {
  Connected c;
  std::string bytes("\0\x01\xff\\x'\"", 7);
  for (int i = 0; i < 256; ++i) bytes.push_back(static_cast<char>(i));
  const std::optional<std::int64_t> none;
  auto r = c.run("echo", "SELECT $1::text, $2::bigint, $3::boolean, $4::bigint, $5::bytea, octet_length($5)",
                 std::string("tenant-é \"1\""), std::int64_t{-9223372036854775807 - 1}, true, none,
                 pqxx::binarystring(bytes));
  const auto row = r.at(0);
  CHECK(row[0].as<std::string>() == "tenant-é \"1\"");
  CHECK(row[1].as<std::int64_t>() == std::numeric_limits<std::int64_t>::min());
  CHECK(row[2].as<bool>());
  CHECK(row[3].is_null());
  CHECK(row[3].as<std::optional<std::int64_t>>() == std::nullopt);
  CHECK(field_bytes(row[4]) == bytes);
  CHECK(row[5].as<int>() == static_cast<int>(bytes.size()));
  CHECK_THROWS_AS(r.at(1), std::out_of_range);
}

TEST_CASE("pg connection: a statement larger than the socket buffer is written in parts and answered") {
  Connected c;
  const std::string big(4 << 20, 'x');
  auto r = c.run("length", "SELECT length($1::text)", big);
  CHECK(r.at(0)[0].as<std::int64_t>() == static_cast<std::int64_t>(big.size()));
}

TEST_CASE("pg connection: an error keeps its SQLSTATE and leaves the connection usable") {
  Connected c;
  try {
    c.run("divide", "SELECT 1 / $1::int", 0);
    FAIL("no error");
  } catch (const pqxx::sql_error& e) {
    CHECK(e.sqlstate() == "22012");
  }
  CHECK_FALSE(c.connection->broken());
  CHECK(c.run("divide", "SELECT 1 / $1::int", 1).at(0)[0].as<int>() == 1);
}

TEST_CASE("pg connection: a statement whose Prepare failed is prepared again at its next use") {
  Connected c;
  const char* sql = "SELECT later_function($1::int)";
  try {
    c.run("later", sql, 1);
    FAIL("no error");
  } catch (const pqxx::sql_error& e) {
    CHECK(e.sqlstate() == "42883");  // the function does not exist yet
  }
  c.db.exec("CREATE FUNCTION later_function(n int) RETURNS int LANGUAGE sql AS 'SELECT n + 1'");
  CHECK(c.run("later", sql, 1).at(0)[0].as<int>() == 2);
  CHECK_FALSE(c.connection->broken());
}

TEST_CASE("pg connection: a serialization failure is a Conflict, committed nothing, and the connection stays") {
  Connected c;
  CHECK_THROWS_AS(c.run("raise", "SELECT raise_state($1)", std::string("40001")), Conflict);
  CHECK_THROWS_AS(c.run("raise", "SELECT raise_state($1)", std::string("40P01")), Conflict);
  CHECK_FALSE(c.connection->broken());
}

TEST_CASE("pg connection: an error at commit, after the rows were sent, is the answer: nothing committed") {
  Connected c;
  // A deferred unique check runs at commit, after INSERT ... RETURNING has
  // sent its row: as a serialization failure found at commit does.
  c.db.exec("CREATE TABLE deferred (k int UNIQUE DEFERRABLE INITIALLY DEFERRED)");
  c.db.exec("INSERT INTO deferred VALUES (1)");
  CHECK_THROWS_AS(c.run("insert_dup", "INSERT INTO deferred VALUES ($1::int) RETURNING k", 1), Conflict);
  CHECK(c.db.scalar("SELECT count(*) FROM deferred") == "1");
  CHECK_FALSE(c.connection->broken());
  CHECK(c.run("insert_dup", "INSERT INTO deferred VALUES ($1::int) RETURNING k", 2).at(0)[0].as<int>() == 2);
  CHECK(c.db.scalar("SELECT count(*) FROM deferred") == "2");
}

TEST_CASE("pg connection: a statement timeout is AuthorityUnavailable and the connection is given up") {
  Connected c;
  CHECK_THROWS_AS(c.run("raise", "SELECT raise_state($1)", std::string("57014")), AuthorityUnavailable);
  CHECK(c.connection->broken());
  CHECK_THROWS_AS(c.run("one", "SELECT 1"), PgNotSent);
}

TEST_CASE("pg connection: a backend terminated while idle is found before sending: nothing was sent") {
  Connected c;
  c.run("one", "SELECT 1");
  const auto pid = c.backend_pid();
  c.db.exec("SELECT pg_terminate_backend(" + pid + ")");
  REQUIRE(eventually([&] { return c.backend_pid().empty(); }));
  const auto before = c.db.scalar("SELECT count(*) FROM tasks");
  CHECK_THROWS_AS(c.run("insert", "INSERT INTO tasks (tenant, task, owner, epoch, secret_hash, expires_at_ms,"
                                  " granted_at_ms) VALUES ('t', 'never', 'o', 1, '\\x00', 1, 0) RETURNING 1"),
                  PgNotSent);
  CHECK(c.connection->broken());
  CHECK(c.db.scalar("SELECT count(*) FROM tasks") == before);
}

TEST_CASE("pg connection: a backend terminated mid-statement is AuthorityUnavailable, never sent again") {
  Connected c(std::chrono::milliseconds(120000), std::chrono::milliseconds(60000));
  // Prepared beforehand: the server shows a statement as active while it
  // parses it too, and this test is about one that runs.
  const Statement slow{"sleep", "SELECT pg_sleep($1::int)"};
  c.run(slow.name, slow.sql, 0);
  const auto thirty = PgParams::of(std::make_tuple(30));
  std::vector<std::future<std::optional<PgResult>>> answers;
  answers.push_back(asio::co_spawn(c.io, c.awaited(slow, thirty), asio::use_future));
  REQUIRE(c.terminated_while_sleeping(answers));
  try {
    answers[0].get();
    FAIL("no error");
  } catch (const AuthorityUnavailable& e) {
    // The server's own word (it rolled the statement back) when its error
    // is read before the connection's end, else "in doubt": the two may
    // arrive in one read or in two.
    const std::string what = e.what();
    CHECK((what.find("in doubt") != std::string::npos || what.find("terminating connection") != std::string::npos));
  }
  CHECK(c.connection->broken());
  CHECK_THROWS_AS(c.run("one", "SELECT 1"), PgNotSent);
}

TEST_CASE("pg connection: no answer within the call timeout leaves it in doubt and gives the connection up") {
  Connected c(std::chrono::milliseconds(300), std::chrono::milliseconds(60000));
  try {
    c.run("slow", "SELECT pg_sleep(20)");
    FAIL("no error");
  } catch (const AuthorityUnavailable& e) {
    CHECK(std::string(e.what()).find("no answer within 300 ms") != std::string::npos);
  }
  CHECK(c.connection->broken());
}

TEST_CASE("pg connection: statements sent together are answered in order, each committed or refused on its own") {
  Connected c;
  c.db.exec("CREATE TABLE pipelined (k int UNIQUE DEFERRABLE INITIALLY DEFERRED)");
  c.db.exec("INSERT INTO pipelined VALUES (3)");
  const Statement insert{"insert_k", "INSERT INTO pipelined VALUES ($1::int) RETURNING k"};
  const Statement divide{"divide_k", "INSERT INTO pipelined VALUES (1 / $1::int) RETURNING k"};
  const Statement pause{"pause", "SELECT pg_sleep($1::float8)"};
  // Behind a pause, so that all are sent before the first answer comes: 1
  // and 2 commit; 3 fails at its commit (a duplicate found then); 0 divides
  // by zero; 5 commits after both.
  auto answers =
      c.all({{pause, "0.2"}, {insert, "1"}, {insert, "2"}, {insert, "3"}, {divide, "0"}, {insert, "5"}});
  CHECK(answers[0].get()->size() == 1);
  CHECK(answers[1].get()->at(0)[0].as<int>() == 1);
  CHECK(answers[2].get()->at(0)[0].as<int>() == 2);
  CHECK_THROWS_AS(answers[3].get(), Conflict);
  try {
    answers[4].get();
    FAIL("no error");
  } catch (const pqxx::sql_error& e) {
    CHECK(e.sqlstate() == "22012");
  }
  CHECK(answers[5].get()->at(0)[0].as<int>() == 5);
  CHECK(c.db.scalar("SELECT string_agg(k::text, ',' ORDER BY k) FROM pipelined") == "1,2,3,5");
  CHECK_FALSE(c.connection->broken());
  CHECK(c.connection->in_flight() == 0);
  CHECK(c.run("insert_k", insert.sql, std::string("6")).at(0)[0].as<int>() == 6);
}

TEST_CASE("pg connection: a statement sent twice at once before its first answer is prepared once") {
  Connected c;
  const Statement echo{"echo_twice", "SELECT $1::int + 1"};
  const Statement pause{"pause", "SELECT pg_sleep($1::float8)"};
  // Behind a pause: all three are sent before the first of them is answered.
  auto answers = c.all({{pause, "0.2"}, {echo, "1"}, {echo, "2"}, {echo, "3"}});
  answers[0].get();
  CHECK(answers[1].get()->at(0)[0].as<int>() == 2);
  CHECK(answers[2].get()->at(0)[0].as<int>() == 3);
  CHECK(answers[3].get()->at(0)[0].as<int>() == 4);
}

TEST_CASE("pg connection: a statement timeout answers its own call, and those sent behind it are still answered") {
  Connected c;
  // The error comes after a pause: the second statement is sent before it.
  const Statement raise{"raise_late", "SELECT raise_state($1) FROM pg_sleep(0.2)"};
  const Statement two{"two", "SELECT 2 WHERE $1::int = 1"};
  auto answers = c.all({{raise, "57014"}, {two, "1"}});
  CHECK_THROWS_AS(answers[0].get(), AuthorityUnavailable);
  CHECK(answers[1].get()->at(0)[0].as<int>() == 2);
  // Given up all the same: never lent again.
  CHECK(c.connection->broken());
  CHECK_THROWS_AS(c.run("one", "SELECT 1"), PgNotSent);
}

TEST_CASE("pg connection: a backend terminated mid-statement leaves every statement sent behind it in doubt") {
  Connected c(std::chrono::milliseconds(120000), std::chrono::milliseconds(60000));
  c.db.exec("CREATE TABLE behind (k int)");
  const Statement slow{"sleep", "SELECT pg_sleep($1::int)"};
  const Statement insert{"insert_behind", "INSERT INTO behind VALUES ($1::int) RETURNING k"};
  c.run(slow.name, slow.sql, std::string("0"));
  c.run(insert.name, insert.sql, std::string("0"));  // both prepared beforehand: see the mid-statement test above
  c.db.exec("DELETE FROM behind");
  auto answers = c.started({{slow, "30"}, {insert, "1"}});
  REQUIRE(c.terminated_while_sleeping(answers));
  CHECK_THROWS_AS(answers[0].get(), AuthorityUnavailable);
  try {
    answers[1].get();
    FAIL("no error");
  } catch (const AuthorityUnavailable& e) {
    CHECK(std::string(e.what()).find("in doubt") != std::string::npos);
  }
  CHECK(c.db.scalar("SELECT count(*) FROM behind") == "0");  // never reached: the server runs them in order
  CHECK(c.connection->broken());
  CHECK_THROWS_AS(c.run("one", "SELECT 1"), PgNotSent);
}

TEST_CASE("pg connection: no answer within the call timeout leaves the statements sent behind it in doubt too") {
  Connected c(std::chrono::milliseconds(300), std::chrono::milliseconds(60000));
  const Statement slow{"slow", "SELECT pg_sleep($1::int)"};
  const Statement one{"one_more", "SELECT $1::int"};
  auto answers = c.all({{slow, "20"}, {one, "1"}});
  for (auto& answer : answers) {
    try {
      answer.get();
      FAIL("no error");
    } catch (const AuthorityUnavailable& e) {
      CHECK(std::string(e.what()).find("in doubt") != std::string::npos);
    }
  }
  CHECK(c.connection->broken());
}
