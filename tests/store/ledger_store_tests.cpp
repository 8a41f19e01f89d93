// The ledger's admission and outcome transactions against PostgreSQL.
#include "store/store_fixture.hpp"

#include <thread>

using namespace gw;
using namespace gw::test;

namespace {
const Intent op_b{"tenant-a", "task-a", "op-b", "value-b", 0};

OutcomeRecord outcome(const Intent& i, int attempt, OperationState state, std::optional<unsigned> status = {}) {
  OutcomeRecord o{{i.tenant, i.task}, i.operation, attempt, state, std::nullopt, "test"};
  if (status) o.response = RecordedResponse{*status, "[]", "body", "", 4};
  return o;
}
}  // namespace

TEST_CASE("admission records the operation in_flight with the admitting grant") {
  StoreFixture f;
  auto g = f.claim("tenant-a", "task-a", "region-a", 0, 100);
  f.at(1);
  auto a = f.ledger.admit(f.session, f.admission(g, op_a));
  CHECK(a.decision.action == Admission::admit_new);
  CHECK(a.attempt == 1);
  CHECK(a.upstream_key == upstream_idempotency_key("tenant-a", "task-a", "op-a"));
  CHECK(f.db.scalar("SELECT state FROM operations WHERE op_id = 'op-a'") == "in_flight");
  CHECK(f.db.scalar("SELECT owner || '/' || epoch FROM operation_attempts") ==
        "region-a/" + std::to_string(g.identity.epoch));
  CHECK(f.db.scalar("SELECT open_op FROM task_ledger") == "op-a");
}

TEST_CASE("outcome succeeded: version +1, hold released, response kept for replay") {
  StoreFixture f;
  auto g = f.claim("tenant-a", "task-a", "region-a", 0, 100);
  f.at(1);
  auto a = f.ledger.admit(f.session, f.admission(g, op_a));
  auto o = f.ledger.record_outcome(f.session, outcome(op_a, a.attempt, OperationState::succeeded, 201), g);
  CHECK(o.recorded);
  CHECK(o.version == 1);
  CHECK(o.reply_gate == Code::ok);
  auto replay = f.ledger.admit(f.session, f.admission(g, op_a));
  CHECK(replay.decision.code == Code::historical_retry);
  REQUIRE(replay.recorded);
  REQUIRE(replay.recorded->response);
  CHECK(replay.recorded->response->status == 201);
  CHECK(replay.recorded->response->body == "body");
  CHECK(replay.recorded->committed_version == 1);
}

TEST_CASE("outcome rejected: version unchanged, replayed on retry") {
  StoreFixture f;
  auto g = f.claim("tenant-a", "task-a", "region-a", 0, 100);
  f.at(1);
  auto a = f.ledger.admit(f.session, f.admission(g, op_a));
  auto o = f.ledger.record_outcome(f.session, outcome(op_a, a.attempt, OperationState::rejected, 409), g);
  CHECK(o.version == 0);
  CHECK(f.ledger.admit(f.session, f.admission(g, op_a)).decision.code == Code::historical_retry);
  CHECK(f.ledger.admit(f.session, f.admission(g, op_b)).decision.action == Admission::admit_new);
}

TEST_CASE("outcome not_executed: the same key is admitted again as the next attempt") {
  StoreFixture f;
  auto g = f.claim("tenant-a", "task-a", "region-a", 0, 100);
  f.at(1);
  auto a = f.ledger.admit(f.session, f.admission(g, op_a));
  f.ledger.record_outcome(f.session, outcome(op_a, a.attempt, OperationState::not_executed), g);
  auto again = f.ledger.admit(f.session, f.admission(g, op_a));
  CHECK(again.decision.action == Admission::readmit);
  CHECK(again.attempt == 2);
  CHECK(again.upstream_key == a.upstream_key);
  CHECK(f.db.scalar("SELECT count(*) FROM operation_attempts") == "2");
}

TEST_CASE("outcome unknown: the task is held and the operation is never resent") {
  StoreFixture f;
  auto g = f.claim("tenant-a", "task-a", "region-a", 0, 100);
  f.at(1);
  auto a = f.ledger.admit(f.session, f.admission(g, op_a));
  auto o = f.ledger.record_outcome(f.session, outcome(op_a, a.attempt, OperationState::unknown), g);
  CHECK(o.version == 0);
  CHECK(f.ledger.admit(f.session, f.admission(g, op_a)).decision.code == Code::unknown_outcome);
  CHECK(f.ledger.admit(f.session, f.admission(g, op_b)).decision.code == Code::unresolved_operation);
  CHECK(f.db.scalar("SELECT attempts FROM operations") == "1");
}

TEST_CASE("an in-flight operation holds the task, its exact retry is operation_in_flight") {
  StoreFixture f;
  auto g = f.claim("tenant-a", "task-a", "region-a", 0, 100);
  f.at(1);
  f.ledger.admit(f.session, f.admission(g, op_a));
  CHECK(f.ledger.admit(f.session, f.admission(g, op_a)).decision.code == Code::operation_in_flight);
  CHECK(f.ledger.admit(f.session, f.admission(g, op_b)).decision.code == Code::unresolved_operation);
}

TEST_CASE("eight concurrent admissions of one key: exactly one is admitted") {
  StoreFixture f;
  auto g = f.claim("tenant-a", "task-a", "region-a", 0, 100);
  f.at(1);
  std::atomic<int> admitted{0}, in_flight{0}, other{0};
  std::vector<std::thread> threads;
  for (int i = 0; i < 8; ++i)
    threads.emplace_back([&] {
      Session s(f.session_options, no_failures());
      auto a = until_decided([&] { return f.ledger.admit(s, f.admission(g, op_a)); });
      if (a.decision.action == Admission::admit_new) ++admitted;
      else if (a.decision.code == Code::operation_in_flight) ++in_flight;
      else ++other;
    });
  for (auto& t : threads) t.join();
  CHECK(admitted == 1);
  CHECK(in_flight == 7);
  CHECK(other == 0);
  CHECK(f.db.scalar("SELECT count(*) FROM operation_attempts") == "1");
}

TEST_CASE("ownership changes while upstream: outcome recorded, old owner's reply gate is stale_owner") {
  StoreFixture f;
  auto old_grant = f.claim("tenant-a", "task-a", "region-a", 0, 10);
  f.at(1);
  auto a = f.ledger.admit(f.session, f.admission(old_grant, op_a));
  auto new_grant = f.claim("tenant-a", "task-a", "region-b", 10, 10);
  auto o = f.ledger.record_outcome(f.session, outcome(op_a, a.attempt, OperationState::succeeded, 201), old_grant);
  CHECK(o.recorded);
  CHECK(o.version == 1);
  CHECK(o.reply_gate == Code::stale_owner);
  f.at(11);
  CHECK(f.ledger.admit(f.session, f.admission(new_grant, op_a)).decision.code == Code::historical_retry);
}

TEST_CASE("an outcome for an attempt no longer in flight is not recorded twice") {
  StoreFixture f;
  auto g = f.claim("tenant-a", "task-a", "region-a", 0, 100);
  f.at(1);
  auto a = f.ledger.admit(f.session, f.admission(g, op_a));
  CHECK(f.ledger.record_outcome(f.session, outcome(op_a, a.attempt, OperationState::succeeded, 200), g).recorded);
  auto again = f.ledger.record_outcome(f.session, outcome(op_a, a.attempt, OperationState::succeeded, 200), g);
  CHECK_FALSE(again.recorded);
  CHECK(again.version == 1);
}

TEST_CASE("admission checks the grant before disclosing anything") {
  StoreFixture f;
  auto g = f.claim("tenant-a", "task-a", "region-a", 0, 10);
  REQUIRE(f.commit(g, op_a, 1) == Code::committed);
  f.at(10);
  auto a = f.ledger.admit(f.session, f.admission(g, op_a));
  CHECK(a.decision.code == Code::expired_owner);
  CHECK_FALSE(a.recorded);
}
