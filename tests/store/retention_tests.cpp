// Retention (issue #7) against a real PostgreSQL: what each batch removes,
// what it must never remove, that it takes rows nobody holds without waiting
// for the ones somebody does, and that a forgotten operation's exact retry is
// refused rather than run again.
#include "store/store_fixture.hpp"

#include "store/retention_store.hpp"
#include "store/webhook_store.hpp"

#include <future>
#include <map>

using namespace gw;
using namespace gw::test;
using std::chrono::milliseconds;

namespace {

constexpr milliseconds age{1000};

struct Retention {
  std::string scalar(const std::string& sql) const { return f.db.scalar(sql); }
  std::string count(const std::string& table) const { return scalar("SELECT count(*) FROM " + table); }

  // op settled as `state` at `now`, from an admission at now - 5.
  void settle(const GrantToken& grant, const Intent& op, OperationState state, std::int64_t now) {
    f.at(now - 5);
    auto a = f.ledger.admit(f.session, f.admission(grant, op));
    REQUIRE(a.decision.action != Admission::reject);
    f.at(now);
    std::optional<RecordedResponse> reply;
    if (state == OperationState::succeeded) reply = RecordedResponse{201, "[]", R"({"ok":true})", "", 11};
    if (state == OperationState::rejected) reply = RecordedResponse{409, "[]", R"({"error":"taken"})", "", 17};
    OutcomeRecord o{{op.tenant, op.task}, op.operation, a.attempt, state, reply, "test"};
    REQUIRE(f.ledger.record_outcome(f.session, o, grant).recorded);
  }

  StoreFixture f;
  RetentionStore retention{f.clock};
};

WebhookRules success_rules() {
  WebhookRules rules;
  rules.key_pointer = "/idempotency_key";
  rules.outcome_pointer = "/status";
  rules.outcomes = {{"201", OperationState::succeeded}};
  return rules;
}

RejectionRecord refusal(const std::string& task) {
  RejectionRecord r;
  r.scope = {"tenant-a", task};
  r.operation_id = "op-x";
  r.method = "POST";
  r.provider = "booking";
  r.target = "/bookings";
  r.code = Code::stale_owner;
  return r;
}

}  // namespace

TEST_CASE("retention: a succeeded operation past its age goes with its reply and attempts, and its retry is version_conflict") {
  Retention r;
  auto grant = r.f.claim("tenant-a", "task-a", "region-a", 0, 1'000'000);
  const Intent op{"tenant-a", "task-a", "op-a", "value-a", 0};
  REQUIRE(r.f.commit(grant, op, 100) == Code::committed);

  r.f.at(100 + age.count());  // exactly its age: kept
  auto kept = r.retention.remove_operations(r.f.session, age, 10);
  CHECK(kept.rows == 0);
  CHECK(kept.now_ms == 1100);
  CHECK(r.count("operations") == "1");

  r.f.at(101 + age.count());
  auto gone = r.retention.remove_operations(r.f.session, age, 10);
  CHECK(gone.rows == 1);
  CHECK(gone.attempts == 1);
  CHECK(r.count("operations") == "0");
  CHECK(r.count("operation_attempts") == "0");
  CHECK(r.scalar("SELECT version FROM task_ledger") == "1");  // the task's own rows stay

  // The same key and body: no replay any more, and no second execution.
  auto retry = r.f.ledger.admit(r.f.session, r.f.admission(grant, op));
  CHECK(retry.decision.action == Admission::reject);
  CHECK(retry.decision.code == Code::version_conflict);
  CHECK(r.count("operations") == "0");
}

TEST_CASE("retention: held operations are never removed, however old") {
  Retention r;
  auto grant = r.f.claim("tenant-a", "task-a", "region-a", 0, 1'000'000'000);
  r.f.forward_budget_ms = 1'000'000'000;  // in flight and not abandoned, for the whole test
  const Intent unknown{"tenant-a", "task-a", "op-u", "v", 0};
  r.settle(grant, unknown, OperationState::unknown, 100);
  auto grant_b = r.f.claim("tenant-a", "task-b", "region-a", 200, 1'000'000'000);
  r.f.at(200);
  REQUIRE(r.f.ledger.admit(r.f.session, r.f.admission(grant_b, {"tenant-a", "task-b", "op-f", "v", 0}))
              .decision.action == Admission::admit_new);

  r.f.at(500'000'000);
  CHECK(r.retention.remove_operations(r.f.session, age, 10).rows == 0);
  CHECK(r.scalar("SELECT string_agg(op_id || '=' || state, ',' ORDER BY op_id) FROM operations") ==
        "op-f=in_flight,op-u=unknown");
  CHECK(r.f.ledger.admit(r.f.session, r.f.admission(grant, unknown)).decision.code == Code::unknown_outcome);
}

TEST_CASE("retention: the store removes exactly what removable_operation allows") {
  Retention r;
  auto grant = r.f.claim("tenant-a", "task-a", "region-a", 0, 1'000'000);
  // task-a: a rejection, then a success that moves the version past it.
  r.settle(grant, {"tenant-a", "task-a", "a-rejected-then-moved", "v", 0}, OperationState::rejected, 10);
  r.settle(grant, {"tenant-a", "task-a", "a-succeeded", "v", 0}, OperationState::succeeded, 20);
  // task-b: a rejection nothing moved past, and a not_executed.
  auto grant_b = r.f.claim("tenant-a", "task-b", "region-a", 30, 1'000'000);
  r.settle(grant_b, {"tenant-a", "task-b", "b-rejected-unmoved", "v", 0}, OperationState::rejected, 40);
  r.settle(grant_b, {"tenant-a", "task-b", "b-not-executed", "v", 0}, OperationState::not_executed, 50);
  // task-c: held.
  auto grant_c = r.f.claim("tenant-a", "task-c", "region-a", 60, 1'000'000);
  r.settle(grant_c, {"tenant-a", "task-c", "c-unknown", "v", 0}, OperationState::unknown, 70);

  // What the pure rule says, from each row as stored.
  std::map<std::string, bool> expected;
  pqxx::connection c(r.f.db.url());
  pqxx::nontransaction q(c);
  for (const auto& row : q.exec("SELECT o.op_id, o.state, o.expected_version, l.version FROM operations o "
                                "JOIN task_ledger l USING (tenant, task)")) {
    auto state = parse_operation_state(row[1].as<std::string>());
    REQUIRE(state);
    expected[row[0].as<std::string>()] =
        removable_operation(*state, row[2].as<std::int64_t>(), row[3].as<std::int64_t>());
  }
  CHECK(expected == std::map<std::string, bool>{{"a-rejected-then-moved", true},
                                                {"a-succeeded", true},
                                                {"b-rejected-unmoved", false},
                                                {"b-not-executed", true},
                                                {"c-unknown", false}});

  r.f.at(100'000);
  CHECK(r.retention.remove_operations(r.f.session, age, 100).rows == 3);
  for (const auto& [op, removable] : expected) {
    CAPTURE(op);
    CHECK(r.scalar("SELECT count(*) FROM operations WHERE op_id = '" + op + "'") == (removable ? "0" : "1"));
  }
  // The unmoved rejection is still replayed, not forwarded afresh.
  auto retry = r.f.ledger.admit(r.f.session, r.f.admission(grant_b, {"tenant-a", "task-b", "b-rejected-unmoved", "v", 0}));
  CHECK(retry.decision.action == Admission::replay);
}

TEST_CASE("retention: a batch takes at most its limit, oldest first, until none are left") {
  Retention r;
  auto grant = r.f.claim("tenant-a", "task-a", "region-a", 0, 1'000'000);
  for (int i = 0; i < 5; ++i)
    REQUIRE(r.f.commit(grant, {"tenant-a", "task-a", "op-" + std::to_string(i), "v", i}, 100 + 10 * i) ==
            Code::committed);
  r.f.at(100'000);
  CHECK(r.retention.remove_operations(r.f.session, age, 2).rows == 2);
  CHECK(r.scalar("SELECT string_agg(op_id, ',' ORDER BY op_id) FROM operations") == "op-2,op-3,op-4");
  CHECK(r.retention.remove_operations(r.f.session, age, 2).rows == 2);
  CHECK(r.retention.remove_operations(r.f.session, age, 2).rows == 1);
  CHECK(r.retention.remove_operations(r.f.session, age, 2).rows == 0);
}

TEST_CASE("retention: a row another transaction holds is skipped at once, never waited for") {
  Retention r;
  auto grant = r.f.claim("tenant-a", "task-a", "region-a", 0, 1'000'000);
  REQUIRE(r.f.commit(grant, {"tenant-a", "task-a", "op-held", "v", 0}, 100) == Code::committed);
  REQUIRE(r.f.commit(grant, {"tenant-a", "task-a", "op-free", "v", 1}, 110) == Code::committed);

  // An admission of the same key would hold the row like this.
  pqxx::connection other(r.f.db.url());
  pqxx::work holder(other);
  holder.exec("SELECT 1 FROM operations WHERE op_id = 'op-held' FOR UPDATE");

  r.f.at(100'000);
  // A wait would end in lock_timeout, an AuthorityUnavailable: it returns instead.
  CHECK(r.retention.remove_operations(r.f.session, age, 10).rows == 1);
  CHECK(r.scalar("SELECT string_agg(op_id, ',') FROM operations") == "op-held");
  holder.abort();
  CHECK(r.retention.remove_operations(r.f.session, age, 10).rows == 1);
  CHECK(r.count("operations") == "0");
}

TEST_CASE("retention: two gateways removing at once remove every row exactly once") {
  Retention r;
  auto grant = r.f.claim("tenant-a", "task-a", "region-a", 0, 1'000'000);
  constexpr int total = 40;
  for (int i = 0; i < total; ++i)
    REQUIRE(r.f.commit(grant, {"tenant-a", "task-a", "op-" + std::to_string(i), "v", i}, 100 + i) ==
            Code::committed);
  r.f.at(100'000);
  auto drain = [&r] {
    Session s(r.f.session_options, no_failures());
    RetentionStore store(r.f.clock);
    std::int64_t removed = 0;
    for (;;) {
      auto b = store.remove_operations(s, age, 3);
      removed += b.rows;
      if (b.rows == 0) return removed;
    }
  };
  auto a = std::async(std::launch::async, drain);
  auto b = std::async(std::launch::async, drain);
  CHECK(a.get() + b.get() == total);
  CHECK(r.count("operations") == "0");
  CHECK(r.count("operation_attempts") == "0");
}

TEST_CASE("retention: evidence and the webhook matched to an operation go with it, in one statement") {
  Retention r;
  auto grant = r.f.claim("tenant-a", "task-a", "region-a", 0, 1'000'000);
  const Intent op{"tenant-a", "task-a", "op-a", "v", 0};
  r.settle(grant, op, OperationState::unknown, 10);
  std::string key = r.scalar("SELECT upstream_key FROM operations");

  WebhookStore webhooks(r.f.clock);
  auto rules = success_rules();
  r.f.at(20);
  auto hook = webhooks.accept(r.f.session,
                              {"booking", "msg_1", 1700000000, R"({"idempotency_key":")" + key + R"(","status":201})"},
                              rules);
  REQUIRE(hook.match);
  HeldResolution settle{{"tenant-a", "task-a"}, "op-a", EvidenceSource::webhook, OperationState::succeeded,
                        "booking", "msg_1", std::nullopt, std::nullopt};
  REQUIRE(r.f.resolutions.resolve_held(r.f.session, settle).code == Code::resolved);
  REQUIRE(r.count("webhook_deliveries") == "1");
  const auto evidence = r.count("operation_evidence");
  REQUIRE(evidence != "0");

  r.f.at(100'000);
  auto b = r.retention.remove_operations(r.f.session, age, 10);
  CHECK(b.rows == 1);
  CHECK(b.webhooks == 1);
  CHECK(std::to_string(b.evidence) == evidence);
  CHECK(r.count("webhook_deliveries") == "0");
  CHECK(r.count("operation_evidence") == "0");
  CHECK(r.count("operations") == "0");
}

TEST_CASE("retention: rejections older than their age are removed, newer ones kept") {
  Retention r;
  r.f.at(100);
  r.f.rejections.record(r.f.session, refusal("old"));
  r.f.at(500);
  r.f.rejections.record(r.f.session, refusal("new"));
  r.f.at(1200);
  auto b = r.retention.remove_rejections(r.f.session, age, 10);
  CHECK(b.rows == 1);
  CHECK(b.now_ms == 1200);
  CHECK(r.scalar("SELECT string_agg(task, ',') FROM rejections") == "new");
  r.f.at(1501);
  CHECK(r.retention.remove_rejections(r.f.session, age, 10).rows == 1);
  CHECK(r.count("rejections") == "0");
}

TEST_CASE("retention: unmatched webhook deliveries go after their age, matched ones only with their operation") {
  Retention r;
  auto grant = r.f.claim("tenant-a", "task-a", "region-a", 0, 1'000'000);
  r.settle(grant, {"tenant-a", "task-a", "op-a", "v", 0}, OperationState::unknown, 10);
  std::string key = r.scalar("SELECT upstream_key FROM operations");
  WebhookStore webhooks(r.f.clock);
  auto rules = success_rules();
  r.f.at(20);
  REQUIRE(webhooks.accept(r.f.session, {"booking", "msg_matched", 1700000000,
                                        R"({"idempotency_key":")" + key + R"("})"},
                          rules).match);
  REQUIRE(!webhooks.accept(r.f.session, {"booking", "msg_stranger", 1700000000, R"({"idempotency_key":"nobody"})"},
                           rules).match);
  REQUIRE(!webhooks.accept(r.f.session, {"booking", "msg_garbage", 1700000000, "not json"}, rules).match);

  r.f.at(100'000);
  CHECK(r.retention.remove_webhooks(r.f.session, age, 10).rows == 2);
  CHECK(r.scalar("SELECT string_agg(webhook_id, ',') FROM webhook_deliveries") == "msg_matched");
  // Its operation is held, so it stays too.
  CHECK(r.retention.remove_operations(r.f.session, age, 10).rows == 0);
  CHECK(r.count("webhook_deliveries") == "1");
}

TEST_CASE("retention: a batch that cannot take its locks in time fails whole and changes nothing") {
  Retention r;
  auto grant = r.f.claim("tenant-a", "task-a", "region-a", 0, 1'000'000);
  REQUIRE(r.f.commit(grant, {"tenant-a", "task-a", "op-a", "v", 0}, 100) == Code::committed);
  r.f.at(100'000);
  // Another transaction holds a table the batch must delete from: the
  // session's lock_timeout ends the wait, and the batch rolls back whole.
  pqxx::connection other(r.f.db.url());
  pqxx::work holder(other);
  holder.exec("LOCK TABLE operation_attempts IN ACCESS EXCLUSIVE MODE");
  CHECK_THROWS_AS(r.retention.remove_operations(r.f.session, age, 10), AuthorityUnavailable);
  holder.abort();
  CHECK(r.count("operations") == "1");
  CHECK(r.count("operation_attempts") == "1");
  CHECK(r.retention.remove_operations(r.f.session, age, 10).rows == 1);
}
