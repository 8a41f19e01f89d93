// Decisions sent as one statement outside a transaction block (autocommit,
// store/transaction.hpp): the usual admission, outcome and first claim are
// one round trip each, every session's implicit transactions are
// SERIALIZABLE while READ COMMITTED work says so (and a statement sent
// alone writes nothing unless it is), a connection the server
// closed is replaced before anything is sent, and one that breaks under a
// statement is never tried again. Round trips are counted from libpq's own
// protocol trace of the session's connection.
#include "store/store_fixture.hpp"
#include "support/parallel.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <sstream>

#include <poll.h>

using namespace gw;
using namespace gw::test;

namespace {

// The messages the gateway sent during fn(), by name ("Query", "Bind",
// "Sync", ...), with a simple query's text after it.
template <class Fn>
std::vector<std::string> sent_messages(Session& session, Fn fn) {
  char* buffer = nullptr;
  std::size_t size = 0;
  std::FILE* trace = open_memstream(&buffer, &size);
  REQUIRE(trace);
  session.connection().trace(trace);
  fn();
  session.connection().trace(nullptr);
  std::fclose(trace);
  std::string text(buffer, size);
  std::free(buffer);
  // libpq 15: [timestamp TAB] F|B TAB length TAB message [TAB fields].
  std::vector<std::string> out;
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    std::vector<std::string> fields;
    std::istringstream parts(line);
    for (std::string field; std::getline(parts, field, '\t');) fields.push_back(field);
    for (std::size_t i = 0; i + 2 < fields.size(); ++i)
      if (fields[i] == "F") {
        out.push_back(fields[i + 2] + (i + 3 < fields.size() ? " " + fields[i + 3] : ""));
        break;
      }
  }
  return out;
}

// One round trip ends with each Sync (extended protocol) or simple Query.
std::size_t round_trips(const std::vector<std::string>& messages) {
  std::size_t n = 0;
  for (const auto& m : messages)
    if (m.starts_with("Sync") || m.starts_with("Query")) ++n;
  return n;
}

bool any_query(const std::vector<std::string>& messages) {
  return std::any_of(messages.begin(), messages.end(), [](const std::string& m) { return m.starts_with("Query"); });
}

std::size_t queries_with(const std::vector<std::string>& messages, std::string_view text) {
  return std::count_if(messages.begin(), messages.end(), [&](const std::string& m) {
    return m.starts_with("Query") && m.find(text) != std::string::npos;
  });
}

const RecordedResponse booked{201, R"([["Content-Type","application/json"]])", R"({"booked":true})", "", 15};

// What the gateway sent for each of the three usual decisions, made after
// op-a's commit (so that every statement is already prepared): op-b's
// admission and outcome on task-a, and the first claim of task-b. Each is
// checked to have been made and committed.
struct UsualDecisions {
  std::vector<std::string> admission, outcome, claim;
};

UsualDecisions usual_decisions(StoreFixture& f, const GrantToken& grant, std::int64_t version = 1) {
  UsualDecisions sent;
  const Intent op_b{"tenant-a", "task-a", "op-b", "value-b", version};
  AdmissionResult a;
  sent.admission = sent_messages(f.session, [&] { a = f.ledger.admit(f.session, f.admission(grant, op_b)); });
  REQUIRE(a.decision.action == Admission::admit_new);
  OutcomeResult o;
  sent.outcome = sent_messages(f.session, [&] {
    o = f.ledger.record_outcome(
        f.session, {{"tenant-a", "task-a"}, "op-b", a.attempt, OperationState::succeeded, booked, "test", a.rows},
        grant);
  });
  REQUIRE(o.recorded);
  CHECK(o.version == version + 1);
  ClaimResult c;
  sent.claim = sent_messages(f.session, [&] { c = f.authority.claim(f.session, {"tenant-a", "task-b"}, "region-a", 100); });
  REQUIRE(c.code == Code::granted);
  // All of it committed: another connection sees it.
  CHECK(f.db.scalar("SELECT state || '/' || committed_version FROM operations WHERE op_id = 'op-b'") ==
        "succeeded/" + std::to_string(version + 1));
  CHECK(f.db.scalar("SELECT count(*) FROM tasks WHERE task = 'task-b'") == "1");
  return sent;
}

}  // namespace

TEST_CASE("autocommit: the usual admission, outcome and first claim are one round trip each, no BEGIN or COMMIT") {
  StoreFixture f;
  const auto grant = f.claim("tenant-a", "task-a", "region-a", 1, 100);
  // Every statement is prepared on the connection at its first use: five
  // writes use every form of the admission and the outcome (store/
  // ledger_store.cpp, LedgerPath: one in four visits the ledger row by key).
  for (int v = 0; v < 5; ++v) {
    const Intent warm{"tenant-a", "task-a", "warm-" + std::to_string(v), "value", v};
    REQUIRE(f.commit(grant, warm, 2 + v) == Code::committed);
  }
  const auto sent = usual_decisions(f, grant, 5);
  for (const auto* messages : {&sent.admission, &sent.outcome, &sent.claim}) {
    CAPTURE(messages->size());
    CHECK(round_trips(*messages) == 1);
    CHECK_FALSE(any_query(*messages));
  }
}

TEST_CASE("autocommit: anything else is decided in a transaction, as before") {
  StoreFixture f;
  const auto grant = f.claim("tenant-a", "task-a", "region-a", 1, 100);
  REQUIRE(f.commit(grant, op_a, 2) == Code::committed);
  // The same key again: a replay, which the one statement does not write.
  AdmissionResult a;
  const auto replay = sent_messages(f.session, [&] { a = f.ledger.admit(f.session, f.admission(grant, op_a)); });
  CHECK(a.decision.action == Admission::replay);
  CHECK(queries_with(replay, "BEGIN; SET TRANSACTION ISOLATION LEVEL SERIALIZABLE") == 1);
  CHECK(queries_with(replay, "COMMIT") == 1);
}

TEST_CASE("autocommit: a session that lost its SERIALIZABLE default writes nothing alone") {
  // As behind a pooler that hands out server connections per transaction.
  StoreFixture f;
  const auto grant = f.claim("tenant-a", "task-a", "region-a", 1, 100);
  REQUIRE(f.commit(grant, op_a, 2) == Code::committed);
  autocommit(f.session, [](auto& tx) { return tx.exec("SET default_transaction_isolation = 'read committed'").size(); });
  const auto sent = usual_decisions(f, grant);
  for (const auto* messages : {&sent.admission, &sent.outcome, &sent.claim})
    CHECK(queries_with(*messages, "BEGIN; SET TRANSACTION ISOLATION LEVEL SERIALIZABLE") == 1);
}

TEST_CASE("autocommit: decisions are SERIALIZABLE, READ COMMITTED work says so") {
  StoreFixture f;
  const auto isolation = [](auto& tx) { return tx.exec("SHOW transaction_isolation")[0][0].template as<std::string>(); };
  CHECK(autocommit(f.session, isolation) == "serializable");
  CHECK(serializable(f.session, isolation) == "serializable");
  CHECK(read_committed(f.session, isolation) == "read committed");
}

TEST_CASE("autocommit: a kept connection the server closed is replaced before the statement is sent") {
  StoreFixture f;
  const auto grant = f.claim("tenant-a", "task-a", "region-a", 1, 100);
  const auto pid = serializable(f.session, [](auto& tx) { return tx.exec("SELECT pg_backend_pid()")[0][0].template as<int>(); });
  const int socket = f.session.connection().sock();
  f.db.exec("SELECT pg_terminate_backend(" + std::to_string(pid) + ")");
  // The backend's goodbye (its FATAL notice, then end of stream) arrives.
  pollfd p{socket, POLLIN, 0};
  REQUIRE(::poll(&p, 1, 10'000) == 1);

  // Sent on the closed connection it would have failed in doubt.
  const auto a = f.ledger.admit(f.session, f.admission(grant, op_a));
  CHECK(a.decision.action == Admission::admit_new);
  CHECK(f.db.scalar("SELECT state FROM operations WHERE op_id = 'op-a'") == "in_flight");
}

TEST_CASE("autocommit: a statement whose connection breaks under it is never tried again") {
  StoreFixture f;
  f.db.exec("CREATE TABLE autocommit_probe (n int)");
  Workers workers;
  std::string failure;
  workers.spawn([&] {
    try {
      // Sleeps, then writes: cut in its sleep, it must not run a second time.
      autocommit(f.session, [](auto& tx) {
        return tx.exec("INSERT INTO autocommit_probe SELECT 1 FROM pg_sleep(30)").affected_rows();
      });
    } catch (const AuthorityUnavailable& e) {
      failure = e.what();
    }
  });
  // Waits for the statement to be running, then ends its backend.
  for (int i = 0; i < 10'000; ++i) {
    if (f.db.scalar("SELECT count(*) FROM pg_stat_activity WHERE datname = current_database()"
                    " AND query LIKE 'INSERT INTO autocommit_probe%' AND state = 'active'") == "1")
      break;
  }
  f.db.exec("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database()"
            " AND query LIKE 'INSERT INTO autocommit_probe%'");
  workers.join();
  CAPTURE(failure);
  CHECK_FALSE(failure.empty());
  CHECK(f.db.scalar("SELECT count(*) FROM autocommit_probe") == "0");
  CHECK(f.db.scalar("SELECT count(*) FROM pg_stat_activity WHERE datname = current_database()"
                    " AND query LIKE 'INSERT INTO autocommit_probe%' AND state = 'active'") == "0");
  // The session goes on with a new connection.
  CHECK(autocommit(f.session, [](auto& tx) { return tx.exec("SELECT 1")[0][0].template as<int>(); }) == 1);
}
