// The one-statement admission and outcome (store/ledger_store.cpp): their
// SQL conditions may only narrow what the rules allow. Each refusal the
// rules make is answered with the rules' code and writes nothing; an
// outcome whose task moved since its admission is recorded from what is
// read, not from what the admission saw.
#include "core/labels.hpp"
#include "store/store_fixture.hpp"

using namespace gw;
using namespace gw::test;

namespace {

struct OneStatementFixture : StoreFixture {
  GrantToken grant = claim("tenant-a", "task-a", "region-a", 0, 100);

  OneStatementFixture() { at(1); }

  // What the admission left behind for the task: operations, attempts and
  // the ledger's open operation.
  std::string written() const {
    return db.scalar(
        "SELECT (SELECT count(*) FROM operations) || '/' || (SELECT count(*) FROM operation_attempts) || '/' ||"
        " coalesce((SELECT open_op FROM task_ledger WHERE task = 'task-a'), '-')");
  }

  Code refused(const GrantToken& presented, const Intent& intent = op_a) {
    const auto a = ledger.admit(session, admission(presented, intent));
    CHECK(a.decision.action == Admission::reject);
    CHECK_FALSE(a.rows);
    return a.decision.code;
  }
};

}  // namespace

TEST_CASE("one-statement admission: a new key under the current grant is written once, with its rows") {
  OneStatementFixture f;
  const auto a = f.ledger.admit(f.session, f.admission(f.grant, op_a));
  CHECK(a.decision.action == Admission::admit_new);
  REQUIRE(a.rows);
  CHECK(a.rows->version == 0);
  CHECK(f.db.scalar("SELECT ctid::text FROM operations WHERE op_id = 'op-a'") == a.rows->operation);
  // Its attempt is in the operation's row: no row of its own to write.
  CHECK(f.db.scalar("SELECT attempt_owner || '/' || attempt_epoch FROM operations WHERE op_id = 'op-a'") ==
        "region-a/" + std::to_string(f.grant.identity.epoch));
  CHECK(f.db.scalar("SELECT count(*) FROM earlier_attempts") == "0");
  CHECK(f.written() == "1/1/op-a");
}

TEST_CASE("one-statement admission: every grant refusal is the rules' code and writes nothing") {
  OneStatementFixture f;
  SUBCASE("another realm") {
    auto presented = f.grant;
    presented.identity.realm = "another-realm";
    CHECK(f.refused(presented) == Code::authority_generation_mismatch);
  }
  SUBCASE("a grant for another task") {
    const Intent elsewhere{"tenant-a", "task-b", "op-a", "value-a", 0};
    CHECK(f.refused(f.grant, elsewhere) == Code::scope_mismatch);
  }
  SUBCASE("the right owner and epoch with another secret") {
    auto presented = f.grant;
    presented.secret.back() = presented.secret.back() == 'A' ? 'B' : 'A';
    CHECK(f.refused(presented) == Code::stale_owner);
  }
  SUBCASE("another owner presenting the current epoch") {
    auto presented = f.grant;
    presented.identity.owner = "region-b";
    CHECK(f.refused(presented) == Code::stale_owner);
  }
  SUBCASE("an expired lease") {
    f.at(100);
    CHECK(f.refused(f.grant) == Code::expired_owner);
  }
  SUBCASE("a grant replaced by a new claim") {
    f.at(101);
    f.claim("tenant-a", "task-a", "region-b", 101, 100);
    CHECK(f.refused(f.grant) == Code::stale_owner);
  }
  // Each refusal goes to the rejection audit, not to the ledger.
  CHECK(f.written() == "0/0/-");
}

TEST_CASE("one-statement admission: every ledger refusal is the rules' code and writes nothing") {
  OneStatementFixture f;
  SUBCASE("a version that passed") {
    f.db.exec("UPDATE task_ledger SET version = 3");
    CHECK(f.refused(f.grant) == Code::version_conflict);
    CHECK(f.written() == "0/0/-");
  }
  SUBCASE("the largest version: no next one to expect") {
    f.db.exec("UPDATE task_ledger SET version = 9223372036854775807");
    const Intent at_max{"tenant-a", "task-a", "op-a", "value-a", max_integer};
    CHECK(f.refused(f.grant, at_max) == Code::version_exhausted);
    CHECK(f.written() == "0/0/-");
  }
  SUBCASE("another operation holding the task") {
    const auto held = f.ledger.admit(f.session, f.admission(f.grant, op_a));
    REQUIRE(held.rows);
    const Intent op_b{"tenant-a", "task-a", "op-b", "value-b", 0};
    CHECK(f.refused(f.grant, op_b) == Code::unresolved_operation);
    CHECK(f.written() == "1/1/op-a");
  }
  SUBCASE("the same key again while in flight") {
    REQUIRE(f.ledger.admit(f.session, f.admission(f.grant, op_a)).rows);
    CHECK(f.refused(f.grant) == Code::operation_in_flight);
    CHECK(f.written() == "1/1/op-a");
  }
}

TEST_CASE("one-statement outcome: a task that moved since admission is recorded from what is read") {
  OneStatementFixture f;
  const auto a = f.ledger.admit(f.session, f.admission(f.grant, op_a));
  REQUIRE(a.rows);
  // Not something the gateway does while an operation is open: the
  // statement must not write the version the admission saw over it.
  f.db.exec("UPDATE task_ledger SET version = 5");
  RecordedResponse reply{201, "[]", "{}", "", 2};
  const auto o = f.ledger.record_outcome(
      f.session, {{"tenant-a", "task-a"}, "op-a", a.attempt, OperationState::succeeded, reply, "test", a.rows},
      f.grant);
  CHECK(o.recorded);
  CHECK(o.version == 6);
  CHECK(f.db.scalar("SELECT version || '/' || coalesce(open_op, '-') FROM task_ledger") == "6/-");
  CHECK(f.db.scalar("SELECT state || '/' || committed_version FROM operations") == "succeeded/6");
  CHECK(f.db.scalar("SELECT outcome FROM operation_attempts") == "succeeded");
}

TEST_CASE("one-statement outcome: at the admitted rows, written once, and a second record of it is not") {
  OneStatementFixture f;
  const auto a = f.ledger.admit(f.session, f.admission(f.grant, op_a));
  REQUIRE(a.rows);
  const OutcomeRecord record{{"tenant-a", "task-a"}, "op-a", a.attempt, OperationState::succeeded,
                             RecordedResponse{201, "[]", "{}", "", 2}, "test", a.rows};
  const auto first = f.ledger.record_outcome(f.session, record, f.grant);
  CHECK(first.recorded);
  CHECK(first.version == 1);
  CHECK(first.reply_gate == Code::ok);
  const auto again = f.ledger.record_outcome(f.session, record, f.grant);
  CHECK_FALSE(again.recorded);
  CHECK(again.version == 1);
  CHECK(f.db.scalar("SELECT version FROM task_ledger") == "1");
  // The second one is kept as evidence, not written over the first.
  CHECK(f.db.scalar("SELECT count(*) FROM operation_evidence") == "1");
}

TEST_CASE("snapshot: each way of reading the operation returns snapshot_width columns, and what its callers read") {
  OneStatementFixture f;
  const auto a = f.ledger.admit(f.session, f.admission(f.grant, op_a));
  REQUIRE(a.rows);
  pqxx::connection c(f.db.url());
  pqxx::work tx(c);
  const struct {
    OperationRead read;
    const char* name;
  } reads[] = {{OperationRead::none, "s_none"}, {OperationRead::by_key, "s_by_key"}, {OperationRead::at_location, "s_at"}};
  for (const auto& r : reads) {
    CAPTURE(r.name);
    // Typed, so that a parameter a way of reading leaves out is still accepted.
    tx.exec0("PREPARE " + std::string(r.name) + "(text, text, text, bigint, tid) AS " + snapshot_sql(f.clock, r.read));
    const auto rows = tx.exec("EXECUTE " + std::string(r.name) + "('tenant-a', 'task-a', 'op-a', 0, " +
                              tx.quote(a.rows->operation) + ")");
    REQUIRE(rows.size() == 1);
    CHECK(rows.columns() == snapshot_width(r.read));
    const auto snap = parse_snapshot(rows[0], f.clock, r.read);
    CHECK(snap.ledger.open_operation == std::optional<std::string>("op-a"));
    if (r.read == OperationRead::none) {
      CHECK_FALSE(snap.operation);
      continue;
    }
    REQUIRE(snap.operation);
    CHECK(snap.operation->state == OperationState::in_flight);
    CHECK(snap.operation->attempts == 1);
    CHECK_FALSE(snap.operation->held_reason);
    // By key, the whole operation; at its address, only what settling weighs.
    CHECK(snap.operation->target == (r.read == OperationRead::by_key ? "/bookings" : ""));
  }
}

TEST_CASE("snapshot's ledger row: at its address only when the row there is the task's and visible, by key wherever it is") {
  OneStatementFixture f;
  f.claim("tenant-a", "task-b", "region-b", 1, 100);
  const auto where = [&](const char* task) {
    return f.db.scalar(std::string("SELECT ctid::text FROM task_ledger WHERE task = '") + task + "'");
  };
  const auto dead = where("task-a");
  // A new version of task-a's row: the old address holds a dead one.
  f.db.exec("UPDATE task_ledger SET version = 4 WHERE task = 'task-a'");
  const auto now = where("task-a");
  REQUIRE(dead != now);

  pqxx::connection c(f.db.url());
  pqxx::work tx(c);
  for (const auto read : {LedgerAt::at_address, LedgerAt::by_key}) {
    const std::string name = read == LedgerAt::at_address ? "s_at" : "s_key";
    tx.exec0("PREPARE " + name + "(text, text, text, bigint, tid, tid) AS " +
             snapshot_sql(f.clock, OperationRead::none, LedgerAt{6, read}));
  }
  const int found = snapshot_width(OperationRead::none);
  const auto snapshot = [&](const std::string& name, const std::string& address) {
    const auto rows = tx.exec("EXECUTE " + name + "('tenant-a', 'task-a', NULL, 0, NULL, " + address + ")");
    REQUIRE(rows.size() == 1);
    CHECK(rows.columns() == found + 1);
    return rows[0];
  };
  {
    const auto row = snapshot("s_at", tx.quote(now));
    CHECK(parse_snapshot(row, f.clock, OperationRead::none).ledger.version == 4);
    CHECK(row[found].as<std::string>() == now);
  }
  const struct {
    const char* name;
    std::string address;
  } misses[] = {
      {"none known", "NULL"},
      {"another task's row", tx.quote(where("task-b"))},
      {"a dead version", tx.quote(dead)},
      {"past the table's end", "'(4000,1)'"},
  };
  for (const auto& m : misses) {
    CAPTURE(m.name);
    const auto row = snapshot("s_at", m.address);
    // The owner row is read by key either way; the ledger row is not found.
    CHECK(parse_snapshot(row, f.clock, OperationRead::none).owner.has_value());
    CHECK(row[6].is_null());
    CHECK(row[found].is_null());
  }
  // By key: found wherever it is, and its address returned.
  const auto by_key = snapshot("s_key", "NULL");
  CHECK(parse_snapshot(by_key, f.clock, OperationRead::none).ledger.version == 4);
  CHECK(by_key[found].as<std::string>() == now);
}
