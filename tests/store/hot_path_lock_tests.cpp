// The request path's SERIALIZABLE reads stay off index pages that other
// tasks write (schema/009_hot_path.sql, docs/performance.md). PostgreSQL
// locks a B-tree lookup by page, and an insert into a page another
// transaction has read is a read-write conflict between them: with keys
// named in sequence every active task shares those pages, and such
// conflicts aborted unrelated admissions. These tests read the transaction's
// SIREAD locks from pg_locks before it commits, and check the decisions
// made on the paths that avoid the lookups are the ones the rules make.
#include "store/migrations.hpp"
#include "store/store_fixture.hpp"
#include "support/private_cluster.hpp"

using namespace gw;
using namespace gw::test;

namespace {

// The index pages `tx`'s backend holds SIREAD locks on, as "index:page".
std::string page_read_locks(const StoreFixture& f, pqxx::dbtransaction& tx) {
  const auto pid = tx.exec("SELECT pg_backend_pid()")[0][0].as<std::string>();
  return f.db.scalar(
      "SELECT coalesce(string_agg(DISTINCT relation::regclass::text || ':' || locktype, ',' "
      "ORDER BY relation::regclass::text || ':' || locktype), '') FROM pg_locks "
      "WHERE mode = 'SIReadLock' AND pid = " + pid + " AND locktype IN ('page', 'relation')");
}

bool contains(const std::string& locks, const std::string& what) { return locks.find(what) != std::string::npos; }

const Intent op_1{"tenant-a", "trip-1", "trip-1-op-1", "value-1", 0};

// `next` under `grant`, admitted and its success recorded in one
// SERIALIZABLE transaction: the pages its reads locked after the admission,
// then after the outcome (page_read_locks), joined by ';'.
std::string locks_of_a_write(StoreFixture& f, const GrantToken& grant, const Intent& next) {
  pqxx::transaction<pqxx::serializable> tx(f.session.connection());
  const auto admitted = f.ledger.admit(tx, f.admission(grant, next));
  REQUIRE(admitted.decision.action == Admission::admit_new);
  REQUIRE(admitted.rows);
  REQUIRE(admitted.rows->ledger);
  auto locks = page_read_locks(f, tx);
  const OutcomeRecord record{{next.tenant, next.task}, next.operation, 1, OperationState::succeeded,
                             RecordedResponse{201, "[]", "{}", "", 2}, "provider replied", admitted.rows};
  REQUIRE(f.ledger.record_outcome(tx, record, grant).version == next.expected_version + 1);
  locks += ";" + page_read_locks(f, tx);
  tx.commit();
  return locks;
}

// trip-1 claimed at 10 and op_1 admitted at 20, as a new key: with the
// addresses of its rows.
struct Admitted {
  Admitted() {
    grant = f.claim("tenant-a", "trip-1", "region-a", 10, 100'000);
    f.at(20);
    admitted = f.ledger.admit(f.session, f.admission(grant, op_1));
    REQUIRE(admitted.rows);
  }
  // The outcome record of that attempt, carrying the admitted rows.
  OutcomeRecord outcome(OperationState state, unsigned status) const {
    return {{"tenant-a", "trip-1"}, "trip-1-op-1", 1, state, RecordedResponse{status, "[]", "{}", "", 2},
            "provider replied", admitted.rows};
  }
  StoreFixture f;
  GrantToken grant;
  AdmissionResult admitted;
};

}  // namespace

TEST_CASE("hot path: a first claim inserts the task without reading the tasks index") {
  StoreFixture f;
  f.at(10);
  pqxx::transaction<pqxx::serializable> tx(f.session.connection());
  auto r = f.authority.claim(tx, {"tenant-a", "trip-1"}, "region-a", 1000);
  REQUIRE(r.code == Code::granted);
  CHECK(r.expires_at_ms == 1010);
  const auto locks = page_read_locks(f, tx);
  CHECK_FALSE(contains(locks, "tasks_pkey"));
  CHECK_FALSE(contains(locks, "task_ledger_pkey"));
  tx.commit();
  CHECK(f.db.scalar("SELECT owner || ' ' || expires_at_ms || ' ' || granted_at_ms FROM tasks") == "region-a 1010 10");
  CHECK(f.db.scalar("SELECT version FROM task_ledger WHERE task = 'trip-1'") == "0");
}

TEST_CASE("hot path: a claim of a task that exists is decided on the task as read") {
  StoreFixture f;
  f.claim("tenant-a", "trip-1", "region-a", 10, 1000);
  f.at(20);
  CHECK(f.authority.claim(f.session, {"tenant-a", "trip-1"}, "region-b", 1000).code == Code::busy);
  f.at(1010);
  auto r = f.authority.claim(f.session, {"tenant-a", "trip-1"}, "region-b", 1000);
  CHECK(r.code == Code::granted);
  CHECK(f.db.scalar("SELECT owner FROM tasks") == "region-b");
}

TEST_CASE("hot path: a claim whose lease would end past the largest time is refused, not inserted") {
  StoreFixture f;
  f.at(std::numeric_limits<std::int64_t>::max() - 10);
  CHECK(f.authority.claim(f.session, {"tenant-a", "trip-1"}, "region-a", 11).code == Code::invalid_request);
  CHECK(f.db.scalar("SELECT count(*) FROM tasks") == "0");
}

TEST_CASE("hot path: a new key is admitted without reading the operations index or writing an attempt row") {
  StoreFixture f;
  auto grant = f.claim("tenant-a", "trip-1", "region-a", 10, 100'000);
  f.at(20);
  pqxx::transaction<pqxx::serializable> tx(f.session.connection());
  auto a = f.ledger.admit(tx, f.admission(grant, op_1));
  REQUIRE(a.decision.action == Admission::admit_new);
  REQUIRE(a.rows);
  const auto locks = page_read_locks(f, tx);
  CHECK_FALSE(contains(locks, "operations_pkey"));
  CHECK_FALSE(contains(locks, "earlier_attempts"));
  CHECK_FALSE(contains(locks, "operations:relation"));
  tx.commit();
  CHECK(f.db.scalar("SELECT state || ' ' || attempts FROM operations") == "in_flight 1");
  CHECK(f.db.scalar("SELECT count(*) FROM earlier_attempts") == "0");
  CHECK(f.db.scalar("SELECT open_op FROM task_ledger") == "trip-1-op-1");
}

TEST_CASE("hot path: the outcome of that admission updates its row at its address, no index read") {
  Admitted a;
  auto& f = a.f;
  pqxx::transaction<pqxx::serializable> tx(f.session.connection());
  auto o = f.ledger.record_outcome(tx, a.outcome(OperationState::succeeded, 201), a.grant);
  CHECK(o.recorded);
  CHECK(o.version == 1);
  const auto locks = page_read_locks(f, tx);
  CHECK_FALSE(contains(locks, "operations_pkey"));
  CHECK_FALSE(contains(locks, "earlier_attempts"));
  tx.commit();
  CHECK(f.db.scalar("SELECT state || ' ' || committed_version FROM operations") == "succeeded 1");
  CHECK(f.db.scalar("SELECT outcome || ' ' || upstream_status FROM operation_attempts") == "succeeded 201");
  CHECK(f.db.scalar("SELECT version || ' ' || coalesce(open_op, '-') FROM task_ledger") == "1 -");
}

TEST_CASE("hot path: an outcome whose row moved since admission finds it by key") {
  Admitted a;
  auto& f = a.f;
  // Another version of the row (what a sweep's update does), same values.
  f.db.exec("UPDATE operations SET updated_ms = updated_ms");
  CHECK(f.db.scalar("SELECT ctid::text FROM operations") != a.admitted.rows->operation);
  CHECK(f.ledger.record_outcome(f.session, a.outcome(OperationState::rejected, 422), a.grant).recorded);
  CHECK(f.db.scalar("SELECT state FROM operations") == "rejected");
  CHECK(f.db.scalar("SELECT outcome || ' ' || upstream_status FROM operation_attempts") == "rejected 422");
}

TEST_CASE("hot path: a task's next write reads and writes its ledger row at its address, no ledger index page") {
  Admitted a;
  auto& f = a.f;
  REQUIRE(f.ledger.record_outcome(f.session, a.outcome(OperationState::succeeded, 201), a.grant).recorded);
  // Writes 2 to 9: each admission's ledger write either way (every other
  // one visits the row through its key to prune the page, without a read lock).
  for (int n = 2; n <= 9; ++n) {
    CAPTURE(n);
    f.at(10 * n + 10);
    const Intent next{"tenant-a", "trip-1", "trip-1-op-" + std::to_string(n), "value-" + std::to_string(n), n - 1};
    const auto locks = locks_of_a_write(f, a.grant, next);
    CHECK_MESSAGE(!contains(locks, "task_ledger_pkey"), locks);
    CHECK(f.db.scalar("SELECT version || ' ' || coalesce(open_op, '-') FROM task_ledger") == std::to_string(n) + " -");
  }

  // A gateway that has not seen the task reads the ledger's index page.
  LedgerStore cold(f.clock);
  const Intent op_10{"tenant-a", "trip-1", "trip-1-op-10", "value-10", 9};
  pqxx::transaction<pqxx::serializable> first(f.session.connection());
  REQUIRE(cold.admit(first, f.admission(a.grant, op_10)).decision.action == Admission::admit_new);
  const auto locks = page_read_locks(f, first);
  CHECK_MESSAGE(contains(locks, "task_ledger_pkey"), locks);
}

TEST_CASE("hot path: a ledger row written at its address stays on its page, pruned through its key") {
  // A TID scan never prunes a page, so a row only ever read and updated at
  // its address would fill its page with dead versions within about sixty
  // writes, then move to another page with each next update: 600 writes
  // (1,200 versions of about 60 bytes) spread over nine pages. Every other
  // admission visits the row through its key, where PostgreSQL prunes.
  // On a cluster of its own: a snapshot open anywhere on the server (another
  // test's, in another database) holds back pruning here too.
  PrivateCluster cluster;
  {
    pqxx::connection c(cluster.url());
    migrate(c);
  }
  AuthorityClock clock(ClockSource::manual);
  AuthorityStore authority(clock);
  LedgerStore ledger(clock);
  SessionOptions options{cluster.url()};
  Session session(options, no_failures());
  const auto at = [&](std::int64_t now) { REQUIRE(authority.set_manual_clock(session, now) == Code::ok); };
  at(1);
  const auto claimed = authority.claim(session, {"tenant-a", "trip-1"}, "region-a", 100'000);
  REQUIRE(claimed.code == Code::granted);
  const auto grant = *decode_grant_token(claimed.token);
  constexpr int writes = 600;
  for (int n = 0; n < writes; ++n) {
    at(2 + n);
    const Intent write{"tenant-a", "trip-1", "op-" + std::to_string(n), "value", n};
    const auto a = ledger.admit(session, admission_request(grant, write, 1'000'000));
    REQUIRE(a.decision.action == Admission::admit_new);
    const RecordedResponse reply{201, "[]", "{}", "", 2};
    const OutcomeRecord outcome{{write.tenant, write.task}, write.operation, 1, OperationState::succeeded, reply,
                                "test", a.rows};
    REQUIRE(ledger.record_outcome(session, outcome, grant).recorded);
  }
  pqxx::connection c(cluster.url());
  pqxx::nontransaction q(c);
  CHECK(q.exec1("SELECT version FROM task_ledger")[0].as<int>() == writes);
  const auto pages = q.exec1("SELECT pg_relation_size('task_ledger') / 8192")[0].as<int>();
  CHECK_MESSAGE(pages == 1, "task_ledger grew to " << pages << " pages");
}

TEST_CASE("hot path: an address that no longer holds the ledger row is decided by key, then remembered again") {
  Admitted a;
  auto& f = a.f;
  REQUIRE(f.ledger.record_outcome(f.session, a.outcome(OperationState::succeeded, 201), a.grant).recorded);
  // A new version of the row, as a resolution writes it: the address
  // remembered now holds a dead version.
  f.db.exec("UPDATE task_ledger SET version = version");
  const Intent op_2{"tenant-a", "trip-1", "trip-1-op-2", "value-2", 1};
  CHECK(f.commit(a.grant, op_2, 30) == Code::committed);
  CHECK(f.db.scalar("SELECT version || ' ' || coalesce(open_op, '-') FROM task_ledger") == "2 -");
  // That decision found the row by key and kept its address: the next one
  // reads no page of the ledger's index.
  f.at(40);
  const Intent op_2b{"tenant-a", "trip-1", "trip-1-op-2b", "value-2b", 2};
  const auto locks = locks_of_a_write(f, a.grant, op_2b);
  CHECK_MESSAGE(!contains(locks, "task_ledger_pkey"), locks);
  // The lease ends and another owner claims the task: the old grant is
  // refused on the row as it is now, not on the version it last wrote.
  f.at(100'011);
  const auto next = f.claim("tenant-a", "trip-1", "region-b", 100'011, 1000);
  const Intent op_3{"tenant-a", "trip-1", "trip-1-op-3", "value-3", 3};
  CHECK(f.commit(a.grant, op_3, 100'012) == Code::stale_owner);
  CHECK(f.commit(next, op_3, 100'013) == Code::committed);
  CHECK(f.db.scalar("SELECT version FROM task_ledger") == "4");
}

TEST_CASE("hot path: a key that exists is decided with its operation: exact retry, conflict, refusal order") {
  StoreFixture f;
  auto grant = f.claim("tenant-a", "trip-1", "region-a", 10, 100'000);
  REQUIRE(f.commit(grant, op_1, 20) == Code::committed);
  // The ledger alone would refuse (version 1 now, Expected-Version 0), but
  // the operation under the key answers first.
  CHECK(f.commit(grant, op_1, 30) == Code::historical_retry);
  Intent changed = op_1;
  changed.value = "other";
  CHECK(f.commit(grant, changed, 40) == Code::operation_conflict);
  // A new key under the old version: the ledger's refusal, audited.
  Intent stale{"tenant-a", "trip-1", "trip-1-op-2", "value-2", 0};
  CHECK(f.commit(grant, stale, 50) == Code::version_conflict);
  CHECK(f.db.scalar("SELECT count(*) FROM operations") == "1");
  CHECK(f.db.scalar("SELECT string_agg(code, ',' ORDER BY id) FROM rejections") == "operation_conflict,version_conflict");
}

TEST_CASE("hot path: on a fresh database once analyzed, admission and outcome read no table whole") {
  // 64 tasks: on a fresh database the ledger is two pages, and once
  // ANALYZE has counted them a primary key lookup costs more than a scan.
  // A scan's predicate lock covers the relation, so every other task's
  // ledger update would be a read-write conflict with this decision. (The
  // one-row authority is read whole, and may be: no decision writes it.)
  StoreFixture f;
  for (int n = 2; n <= 64; ++n) f.claim("tenant-a", "trip-" + std::to_string(n), "region-a", 10, 100'000);
  auto grant = f.claim("tenant-a", "trip-1", "region-a", 10, 100'000);
  f.db.exec("ANALYZE");
  REQUIRE(f.db.scalar("SELECT reltuples::bigint FROM pg_class WHERE relname = 'task_ledger'") == "64");
  f.at(20);
  std::optional<AdmissionResult> admitted;
  {
    pqxx::transaction<pqxx::serializable> tx(f.session.connection());
    admitted = f.ledger.admit(tx, f.admission(grant, op_1));
    REQUIRE(admitted->decision.action == Admission::admit_new);
    const auto locks = page_read_locks(f, tx);
    for (const char* table : {"tasks:relation", "task_ledger:relation", "operations:relation"})
      CHECK_MESSAGE(!contains(locks, table), locks);
    tx.commit();
  }
  pqxx::transaction<pqxx::serializable> tx(f.session.connection());
  const OutcomeRecord record{{"tenant-a", "trip-1"}, "trip-1-op-1", 1, OperationState::succeeded,
                             RecordedResponse{201, "[]", "{}", "", 2}, "provider replied", admitted->rows};
  CHECK(f.ledger.record_outcome(tx, record, grant).recorded);
  const auto locks = page_read_locks(f, tx);
  for (const char* table : {"tasks:relation", "task_ledger:relation", "operations:relation"})
    CHECK_MESSAGE(!contains(locks, table), locks);
  tx.commit();
}

TEST_CASE("sessions: SERIALIZABLE work plans without sequential scans or JIT, READ COMMITTED work with scans") {
  StoreFixture f;
  const auto setting = [](pqxx::dbtransaction& tx, const char* name) {
    return tx.exec1(std::string("SHOW ") + name)[0].as<std::string>();
  };
  {
    pqxx::transaction<pqxx::serializable> tx(f.session.connection());
    CHECK(setting(tx, "transaction_isolation") == "serializable");
    CHECK(setting(tx, "enable_seqscan") == "off");
    CHECK(setting(tx, "jit") == "off");
    tx.commit();
  }
  read_committed(f.session, [&](pqxx::dbtransaction& tx) {
    CHECK(setting(tx, "transaction_isolation") == "read committed");
    CHECK(setting(tx, "enable_seqscan") == "on");
    CHECK(setting(tx, "jit") == "off");
    return 0;
  });
  // SET LOCAL: the next SERIALIZABLE transaction on the session is back to no scans.
  pqxx::transaction<pqxx::serializable> tx(f.session.connection());
  CHECK(setting(tx, "enable_seqscan") == "off");
}
