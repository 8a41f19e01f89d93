// The reconciler's lookup schedule (store/reconcile_store.hpp): held
// operations are handed out for lookup once each across gateways, not
// before they are due, and never when not held; each lookup's answer is
// kept exactly as evidence and reschedules the next; "look up now" works.
#include "store/reconcile_store.hpp"

#include "core/digest.hpp"
#include "store/store_fixture.hpp"

#include <future>
#include <set>

using namespace gw;
using namespace gw::test;

namespace {

const std::vector<std::string> booking_only{"booking"};

struct Reconcile {
  StoreFixture f;
  ReconcileStore store{f.clock};

  Reconcile() { f.forward_budget_ms = 100; }

  // Claims `task`, admits `op` at `at` (forward deadline at + 100) and
  // records its outcome unknown at at + 10: held, reason outcome_unknown.
  GrantToken hold(const std::string& task, const std::string& op = "op-a", std::int64_t at = 10,
                  const std::string& provider = "booking") {
    auto grant = f.claim("tenant-a", task, "region-a", at, 1'000'000);
    auto rq = f.admission(grant, {"tenant-a", task, op, "v", 0});
    rq.provider = provider;
    auto a = f.ledger.admit(f.session, rq);
    REQUIRE(a.decision.action == Admission::admit_new);
    f.at(at + 10);
    REQUIRE(f.ledger.record_outcome(f.session, unknown({"tenant-a", task}, op, a.attempt), grant).recorded);
    return grant;
  }

  static OutcomeRecord unknown(const TaskScope& scope, const std::string& op, int attempt) {
    return OutcomeRecord{scope, op, attempt, OperationState::unknown, std::nullopt, "timeout after sending"};
  }

  std::vector<DueLookup> due(std::int64_t now, const std::vector<std::string>& providers = booking_only,
                             unsigned limit = 100, std::int64_t lease = 5000) {
    f.at(now);
    return store.due_for_lookup(f.session, providers, limit, lease);
  }

  LookupRecord answered(const DueLookup& d, std::int64_t delay) const {
    LookupRecord r;
    r.scope = d.scope;
    r.operation_id = d.operation_id;
    r.attempt = d.attempt;
    r.provider = d.provider;
    r.status = 404;
    r.headers_json = R"([["Content-Type","application/json"]])";
    r.body = R"({"state":"not_found"})";
    r.detail = "lookup answered 404 (not found), inside the settle window";
    r.next_lookup_delay_ms = delay;
    return r;
  }

  std::string op(const std::string& column, const std::string& op_id = "op-a") const {
    return f.db.scalar("SELECT coalesce(" + column + "::text, 'NULL') FROM operations WHERE op_id = '" + op_id + "'");
  }
};

}  // namespace

TEST_CASE("reconcile store: a held operation is due at once and handed out once, with what the loop needs") {
  Reconcile r;
  r.hold("task-a");
  auto due = r.due(30);
  REQUIRE(due.size() == 1);
  const auto& d = due[0];
  CHECK(d.scope.tenant == "tenant-a");
  CHECK(d.scope.task == "task-a");
  CHECK(d.operation_id == "op-a");
  CHECK(d.attempt == 1);
  CHECK(d.provider == "booking");
  CHECK(d.upstream_key == upstream_idempotency_key("tenant-a", "task-a", "op-a"));
  CHECK(d.upstream_key == r.op("upstream_key"));
  CHECK(d.forward_deadline_ms == 110);
  CHECK(d.lookups == 0);
  CHECK_FALSE(d.last_lookup_ms);
  CHECK(d.handed_out_ms == 30);
  // Reserved for the lease: the schedule says so, and the state is untouched.
  CHECK(r.op("next_lookup_ms") == "5030");
  CHECK(r.op("lookup_attempt") == "1");
  CHECK(r.op("state") == "unknown");
  CHECK(r.op("held_reason") == "outcome_unknown");

  // Not again: neither on this session nor on another gateway's.
  CHECK(r.due(30).empty());
  Session other(r.f.session_options, no_failures());
  CHECK(r.store.due_for_lookup(other, booking_only, 100, 5000).empty());
  CHECK(r.due(5029).empty());
  // A lookup never recorded (its gateway died) is handed out again after the lease.
  auto again = r.due(5030);
  REQUIRE(again.size() == 1);
  CHECK(again[0].operation_id == "op-a");
  CHECK(again[0].lookups == 0);
  CHECK(again[0].handed_out_ms == 5030);
}

TEST_CASE("reconcile store: the limit and the order: due first, oldest due first") {
  Reconcile r;
  r.hold("task-a", "op-a", 10);
  r.hold("task-b", "op-b", 20);
  r.hold("task-c", "op-c", 30);
  auto first = r.due(40, booking_only, 3, 10);
  REQUIRE(first.size() == 3);
  // Looked up at 50: op-b due again at 50, op-c at 100, op-a at 200.
  r.f.at(50);
  for (const auto& d : first)
    r.store.record_lookup(r.f.session,
                          r.answered(d, d.operation_id == "op-c" ? 50 : d.operation_id == "op-a" ? 150 : 0));
  // op-d is held later but never looked up: due since it was held, so first.
  r.hold("task-d", "op-d", 60);
  auto ids = [](const std::vector<DueLookup>& due) {
    std::set<std::string> out;
    for (const auto& d : due) out.insert(d.operation_id);
    return out;
  };
  CHECK(ids(r.due(300, booking_only, 2)) == std::set<std::string>{"op-d", "op-b"});
  CHECK(ids(r.due(300, booking_only, 1)) == std::set<std::string>{"op-c"});
  CHECK(ids(r.due(300, booking_only, 5)) == std::set<std::string>{"op-a"});
  CHECK(r.due(300).empty());
}

TEST_CASE("reconcile store: several gateways on one database hand each due operation out exactly once") {
  Reconcile r;
  constexpr int tasks = 40;
  for (int t = 0; t < tasks; ++t) r.hold("task-" + std::to_string(t), "op-" + std::to_string(t), 10 + 20 * t);
  r.f.at(1000);
  // Four gateways' reconcilers, each on its own connection, small batches.
  std::vector<std::future<std::vector<std::string>>> gateways;
  for (int i = 0; i < 4; ++i)
    gateways.push_back(std::async(std::launch::async, [&r] {
      Session own(r.f.session_options, no_failures());
      std::vector<std::string> taken;
      // Bounded: a lease that did not hold would hand the same operations out forever.
      while (taken.size() <= tasks) {
        auto due = r.store.due_for_lookup(own, booking_only, 3, 60000);
        if (due.empty()) break;
        for (const auto& d : due) taken.push_back(d.operation_id);
      }
      return taken;
    }));
  std::multiset<std::string> all;
  for (auto& g : gateways)
    for (const auto& id : g.get()) all.insert(id);
  CHECK(all.size() == tasks);
  CHECK(std::set<std::string>(all.begin(), all.end()).size() == tasks);
  CHECK(r.f.db.scalar("SELECT count(*) FROM operations WHERE next_lookup_ms = 61000") == std::to_string(tasks));
}

TEST_CASE("reconcile store: record_lookup keeps the answer exactly and schedules the next lookup") {
  Reconcile r;
  r.hold("task-a");
  auto due = r.due(30);
  REQUIRE(due.size() == 1);

  LookupRecord rec;
  rec.scope = due[0].scope;
  rec.operation_id = "op-a";
  rec.attempt = 1;
  rec.provider = "booking";
  rec.status = 200;
  rec.headers_json = R"([["Content-Type","application/json"],["X-Dup","1"],["X-Dup","2"]])";
  rec.body = std::string("{\"state\":\"executed\",\"x\":\"\0\xFF\"}", 29);
  rec.outcome = OperationState::succeeded;
  rec.detail = "lookup answered 200 (found) with original status 201: succeeded";
  rec.next_lookup_delay_ms = 250;
  r.f.at(40);
  auto recorded = r.store.record_lookup(r.f.session, rec);
  CHECK(recorded.recorded_ms == 40);
  CHECK(recorded.next_lookup_ms == 290);

  const std::string where = " FROM operation_evidence WHERE id = " + std::to_string(recorded.evidence_id);
  CHECK(r.f.db.scalar("SELECT count(*)" + where) == "1");
  CHECK(r.f.db.scalar("SELECT tenant || '|' || task || '|' || op_id || '|' || attempt" + where) ==
        "tenant-a|task-a|op-a|1");
  CHECK(r.f.db.scalar("SELECT source" + where) == "lookup");
  CHECK(r.f.db.scalar("SELECT outcome" + where) == "succeeded");
  CHECK(r.f.db.scalar("SELECT upstream_status" + where) == "200");
  CHECK(r.f.db.scalar("SELECT detail" + where) == rec.detail);
  CHECK(r.f.db.scalar("SELECT response_headers = '" + rec.headers_json + "'::jsonb" + where) == "t");
  CHECK(r.f.db.scalar("SELECT jsonb_array_length(response_headers)" + where) == "3");
  CHECK(r.f.db.scalar("SELECT encode(response_body, 'hex')" + where) == to_hex(rec.body));
  CHECK(r.f.db.scalar("SELECT encode(response_sha256, 'hex')" + where) == sha256_hex(rec.body));
  CHECK(r.f.db.scalar("SELECT response_length" + where) == "29");
  CHECK(r.f.db.scalar("SELECT actor" + where) == "booking");
  CHECK(r.f.db.scalar("SELECT reference IS NULL" + where) == "t");
  CHECK(r.f.db.scalar("SELECT recorded_ms" + where) == "40");

  // Counted and rescheduled; nothing else about the operation moves.
  CHECK(r.op("lookups") == "1");
  CHECK(r.op("last_lookup_ms") == "40");
  CHECK(r.op("next_lookup_ms") == "290");
  CHECK(r.op("state") == "unknown");
  CHECK(r.op("held_reason") == "outcome_unknown");
  CHECK(r.f.db.scalar("SELECT open_op FROM task_ledger") == "op-a");
  CHECK(r.f.db.scalar("SELECT version FROM task_ledger") == "0");

  CHECK(r.due(289).empty());
  auto next = r.due(290);
  REQUIRE(next.size() == 1);
  CHECK(next[0].lookups == 1);
  CHECK(next[0].last_lookup_ms == 40);

  // A lookup that got no reply: status, headers, body and digest are absent, not empty.
  LookupRecord failed;
  failed.scope = next[0].scope;
  failed.operation_id = "op-a";
  failed.attempt = 1;
  failed.provider = "booking";
  failed.detail = "lookup failed (connect_failed): the outcome stays unknown";
  failed.next_lookup_delay_ms = 1000;
  r.f.at(300);
  auto second = r.store.record_lookup(r.f.session, failed);
  CHECK(second.evidence_id != recorded.evidence_id);
  CHECK(second.next_lookup_ms == 1300);
  const std::string where2 = " FROM operation_evidence WHERE id = " + std::to_string(second.evidence_id);
  CHECK(r.f.db.scalar("SELECT outcome" + where2) == "unknown");
  CHECK(r.f.db.scalar(
            "SELECT upstream_status IS NULL AND response_headers IS NULL AND response_body IS NULL"
            " AND response_sha256 IS NULL AND response_length IS NULL" +
            where2) == "t");
  CHECK(r.op("lookups") == "2");
  CHECK(r.f.db.scalar("SELECT count(*) FROM operation_evidence WHERE source = 'lookup'") == "2");
}

TEST_CASE("reconcile store: an answer for an operation settled meanwhile is kept, and schedules nothing") {
  Reconcile r;
  auto grant = r.f.claim("tenant-a", "task-a", "region-a", 0, 1'000'000);
  r.f.at(10);
  auto a = r.f.ledger.admit(r.f.session, r.f.admission(grant, {"tenant-a", "task-a", "op-a", "v", 0}));
  REQUIRE(a.decision.action == Admission::admit_new);
  r.f.at(111);
  REQUIRE(r.f.ledger.sweep_abandoned(r.f.session, 10).size() == 1);  // held: forward_abandoned
  auto due = r.due(120);
  REQUIRE(due.size() == 1);
  // The original forwarder's late reply settles it while the lookup is out.
  r.f.at(130);
  REQUIRE(r.f.ledger
              .record_outcome(r.f.session,
                              {{"tenant-a", "task-a"}, "op-a", 1, OperationState::succeeded,
                               RecordedResponse{201, "[]", "{}", "", 2}, "provider replied 201"},
                              grant)
              .recorded);
  r.f.at(140);
  auto recorded = r.store.record_lookup(r.f.session, r.answered(due[0], 1000));
  CHECK_FALSE(recorded.next_lookup_ms);
  CHECK(r.f.db.scalar("SELECT count(*) FROM operation_evidence WHERE source = 'lookup'") == "1");
  CHECK(r.op("state") == "succeeded");
  CHECK(r.op("lookups") == "0");
  CHECK(r.op("next_lookup_ms") == "5120");  // the lease, left as it was
  CHECK(r.due(1'000'000).empty());
}

TEST_CASE("reconcile store: look up now makes a held operation due at once, keeping its count") {
  Reconcile r;
  r.hold("task-a");
  auto due = r.due(30);
  REQUIRE(due.size() == 1);
  r.f.at(40);
  r.store.record_lookup(r.f.session, r.answered(due[0], 1'000'000));
  CHECK(r.due(50).empty());

  r.f.at(60);
  auto now = r.store.lookup_now(r.f.session, {"tenant-a", "task-a"}, "op-a");
  CHECK(now.state == OperationState::unknown);
  CHECK(now.now_ms == 60);
  CHECK(r.op("next_lookup_ms") == "60");
  auto again = r.due(60);
  REQUIRE(again.size() == 1);
  CHECK(again[0].lookups == 1);
  CHECK(r.op("lookups") == "1");

  // Nothing to look up: no such operation, or not held unknown.
  CHECK_FALSE(r.store.lookup_now(r.f.session, {"tenant-a", "task-a"}, "op-x").state);
  CHECK_FALSE(r.store.lookup_now(r.f.session, {"tenant-a", "task-x"}, "op-a").state);
  auto grant = r.f.claim("tenant-a", "task-b", "region-a", 100, 1'000'000);
  REQUIRE(r.f.ledger.admit(r.f.session, r.f.admission(grant, {"tenant-a", "task-b", "op-b", "v", 0})).decision.action ==
          Admission::admit_new);
  auto in_flight = r.store.lookup_now(r.f.session, {"tenant-a", "task-b"}, "op-b");
  CHECK(in_flight.state == OperationState::in_flight);
  CHECK(r.op("next_lookup_ms", "op-b") == "NULL");
  CHECK(r.due(100).empty());
}

TEST_CASE("reconcile store: operations not held unknown, or of a provider without a lookup, are never due") {
  Reconcile r;
  // One operation in each state that is not held unknown, each on its own task.
  auto g1 = r.f.claim("tenant-a", "task-1", "region-a", 0, 1'000'000);
  REQUIRE(r.f.commit(g1, {"tenant-a", "task-1", "op-succeeded", "v", 0}, 1) == Code::committed);
  auto g2 = r.f.claim("tenant-a", "task-2", "region-a", 2, 1'000'000);
  auto a2 = r.f.ledger.admit(r.f.session, r.f.admission(g2, {"tenant-a", "task-2", "op-rejected", "v", 0}));
  REQUIRE(r.f.ledger
              .record_outcome(r.f.session,
                              {{"tenant-a", "task-2"}, "op-rejected", a2.attempt, OperationState::rejected,
                               RecordedResponse{409, "[]", "{}", "", 2}, "409"},
                              g2)
              .recorded);
  auto g3 = r.f.claim("tenant-a", "task-3", "region-a", 3, 1'000'000);
  auto a3 = r.f.ledger.admit(r.f.session, r.f.admission(g3, {"tenant-a", "task-3", "op-not-executed", "v", 0}));
  REQUIRE(r.f.ledger
              .record_outcome(r.f.session,
                              {{"tenant-a", "task-3"}, "op-not-executed", a3.attempt, OperationState::not_executed,
                               std::nullopt, "connect refused"},
                              g3)
              .recorded);
  auto g4 = r.f.claim("tenant-a", "task-4", "region-a", 4, 1'000'000);
  REQUIRE(r.f.ledger.admit(r.f.session, r.f.admission(g4, {"tenant-a", "task-4", "op-in-flight", "v", 0}))
              .decision.action == Admission::admit_new);
  // Held unknown, but its provider has no lookup configured.
  r.hold("task-5", "op-crm", 5, "crm");
  // Even with a schedule that says "due", made by hand.
  r.f.db.exec("UPDATE operations SET lookup_attempt = attempts, next_lookup_ms = 0");

  CHECK(r.due(10'000).empty());  // the in-flight one is past its deadline too, but not swept yet
  CHECK(r.op("state", "op-in-flight") == "in_flight");
  CHECK(r.due(10'000, {}).empty());
  CHECK(r.due(10'000, {"booking", "payments"}).empty());
  auto crm = r.due(10'000, {"booking", "crm"});
  REQUIRE(crm.size() == 1);
  CHECK(crm[0].operation_id == "op-crm");
  CHECK(crm[0].provider == "crm");
  // Nothing but the crm operation got a lease.
  CHECK(r.f.db.scalar("SELECT string_agg(op_id, ',') FROM operations WHERE next_lookup_ms > 0") == "op-crm");
}

TEST_CASE("reconcile store: a re-admitted operation held again under a later attempt starts a fresh schedule") {
  Reconcile r;
  auto grant = r.hold("task-a");
  auto due = r.due(30);
  REQUIRE(due.size() == 1);
  r.f.at(40);
  r.store.record_lookup(r.f.session, r.answered(due[0], 1'000'000));
  // resolve_held's not_executed, done by hand here: the operation settles and frees its task.
  r.f.db.exec("UPDATE operations SET state = 'not_executed', held_reason = NULL;"
              "UPDATE task_ledger SET open_op = NULL");
  r.f.at(50);
  auto re = r.f.ledger.admit(r.f.session, r.f.admission(grant, {"tenant-a", "task-a", "op-a", "v", 0}));
  REQUIRE(re.decision.action == Admission::readmit);
  REQUIRE(re.attempt == 2);
  r.f.at(60);
  REQUIRE(r.f.ledger.record_outcome(r.f.session, Reconcile::unknown({"tenant-a", "task-a"}, "op-a", 2), grant)
              .recorded);

  auto fresh = r.due(70);  // the old schedule said 1'000'040
  REQUIRE(fresh.size() == 1);
  CHECK(fresh[0].attempt == 2);
  CHECK(fresh[0].lookups == 0);
  CHECK_FALSE(fresh[0].last_lookup_ms);
  CHECK(fresh[0].forward_deadline_ms == 150);  // attempt 2's: admitted at 50
  CHECK(r.op("lookup_attempt") == "2");
  r.f.at(80);
  auto recorded = r.store.record_lookup(r.f.session, r.answered(fresh[0], 10));
  CHECK(recorded.next_lookup_ms == 90);
  CHECK(r.op("lookups") == "1");
  CHECK(r.f.db.scalar("SELECT string_agg(attempt::text, ',' ORDER BY id) FROM operation_evidence"
                      " WHERE source = 'lookup'") == "1,2");
  // A late answer for attempt 1 is evidence of attempt 1 and moves attempt 2's schedule not at all.
  r.f.at(85);
  auto stale = r.store.record_lookup(r.f.session, r.answered(due[0], 5));
  CHECK_FALSE(stale.next_lookup_ms);
  CHECK(r.op("next_lookup_ms") == "90");
}

TEST_CASE("reconcile store: the operation detail folds identical consecutive lookups into one row, every row kept") {
  Reconcile r;
  r.hold("task-a");
  auto due = r.due(30);
  REQUIRE(due.size() == 1);
  // A provider that answers 500 to every lookup, then once something else, then 500 again.
  auto failing = r.answered(due[0], 1000);
  failing.status = 500;
  failing.body = "<html>upstream <b>down</b></html>";
  failing.detail = "lookup answered 500, which is neither found nor not found: the outcome stays unknown";
  std::vector<std::int64_t> ids;
  auto record = [&](const LookupRecord& l, std::int64_t at) {
    r.f.at(at);
    ids.push_back(r.store.record_lookup(r.f.session, l).evidence_id);
  };
  for (int i = 0; i < 5; ++i) record(failing, 100 + i);
  auto other = failing;
  other.status = 502;
  other.detail = "lookup answered 502, which is neither found nor not found: the outcome stays unknown";
  record(other, 200);
  // The same words with another body is another answer: not folded.
  auto other_body = failing;
  other_body.body = "different";
  record(failing, 300);
  record(failing, 301);
  record(other_body, 302);
  // A large body: cut at body_preview_bytes, its length and digest those of the whole body.
  auto large = failing;
  large.body = std::string(static_cast<std::size_t>(body_preview_bytes) + 100, 'x');
  record(large, 400);

  // Every lookup stays stored as it was received: the folding is the listing's.
  CHECK(r.f.db.scalar("SELECT count(*) FROM operation_evidence WHERE source = 'lookup'") == "10");
  auto d = r.f.operators.detail(r.f.session, {"tenant-a", "task-a"}, "op-a");
  REQUIRE(d);
  REQUIRE(d->evidence.size() == 5);
  const auto& run = d->evidence[0];
  CHECK(run.id == ids[0]);
  CHECK(run.count == 5);
  CHECK(run.last_id == ids[4]);
  CHECK(run.recorded_ms == 100);
  CHECK(run.last_recorded_ms == 104);
  CHECK(run.upstream_status == 500);
  CHECK(run.detail == failing.detail);
  CHECK(run.body == failing.body);
  CHECK(run.body_length == static_cast<std::int64_t>(failing.body.size()));
  CHECK(run.body_sha256 == sha256_hex(failing.body));
  CHECK(d->evidence[1].count == 1);
  CHECK(d->evidence[1].id == ids[5]);
  CHECK(d->evidence[1].last_id == ids[5]);
  CHECK(d->evidence[1].last_recorded_ms == 200);
  CHECK(d->evidence[1].upstream_status == 502);
  CHECK(d->evidence[2].count == 2);
  CHECK(d->evidence[2].id == ids[6]);
  CHECK(d->evidence[2].last_recorded_ms == 301);
  CHECK(d->evidence[3].count == 1);
  CHECK(d->evidence[3].body == "different");
  const auto& cut = d->evidence[4];
  CHECK(cut.count == 1);
  CHECK(cut.body == std::string(static_cast<std::size_t>(body_preview_bytes), 'x'));
  CHECK(cut.body_length == body_preview_bytes + 100);
  CHECK(cut.body_sha256 == sha256_hex(large.body));
  // The reply the forward got is stored on the operation too: none here (a timeout).
  CHECK_FALSE(d->reply);
}
