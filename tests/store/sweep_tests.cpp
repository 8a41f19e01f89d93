// Abandoned forwards (issue #7, spec section 4): an attempt still in flight
// past its forward deadline is swept to unknown exactly once, its exact
// retry is unknown_outcome (never "being forwarded now"), and a late reply
// from the original forwarder still settles it and is kept as evidence.
#include "store/store_fixture.hpp"

#include <future>

using namespace gw;
using namespace gw::test;

namespace {


// A claimed task and one operation admitted at 10 with a forward budget of
// 100: its deadline is 110.
struct Abandoned {
  Abandoned() {
    grant = f.claim("tenant-a", "task-a", "region-a", 0, 1'000'000);
    f.forward_budget_ms = 100;
    f.at(10);
    auto a = f.ledger.admit(f.session, f.admission(grant, op_a));
    REQUIRE(a.decision.action == Admission::admit_new);
    attempt = a.attempt;
  }
  std::string state() const { return f.db.scalar("SELECT state FROM operations WHERE op_id = 'op-a'"); }
  std::string evidence(const std::string& source) const {
    return f.db.scalar("SELECT count(*) FROM operation_evidence WHERE source = '" + source + "'");
  }
  StoreFixture f;
  GrantToken grant;
  int attempt = 0;
};

OutcomeRecord succeeded(const Intent& i, int attempt) {
  return OutcomeRecord{{i.tenant, i.task}, i.operation, attempt, OperationState::succeeded,
                       RecordedResponse{201, "[]", R"({"booking_id":"bk_1"})", "", 21}, "provider replied 201"};
}

}  // namespace

TEST_CASE("sweep: an attempt in flight up to its forward deadline is left alone") {
  Abandoned s;
  CHECK(s.f.db.scalar("SELECT forward_deadline_ms FROM operations") == "110");
  s.f.at(110);
  CHECK(s.f.ledger.sweep_abandoned(s.f.session, 100).empty());
  CHECK(s.state() == "in_flight");
  CHECK(s.f.ledger.admit(s.f.session, s.f.admission(s.grant, op_a)).decision.code == Code::operation_in_flight);
}

TEST_CASE("sweep: past its deadline the attempt becomes unknown, held as forward_abandoned, with evidence") {
  Abandoned s;
  s.f.at(111);
  auto swept = s.f.ledger.sweep_abandoned(s.f.session, 100);
  REQUIRE(swept.size() == 1);
  CHECK(swept[0].scope.tenant == "tenant-a");
  CHECK(swept[0].scope.task == "task-a");
  CHECK(swept[0].operation_id == "op-a");
  CHECK(swept[0].attempt == 1);
  CHECK(swept[0].provider == "booking");
  CHECK(swept[0].forward_deadline_ms == 110);
  CHECK(swept[0].swept_at_ms == 111);
  CHECK(s.state() == "unknown");
  CHECK(s.f.db.scalar("SELECT held_reason FROM operations") == "forward_abandoned");
  CHECK(s.f.db.scalar("SELECT outcome FROM operation_attempts") == "unknown");
  CHECK(s.evidence("sweep") == "1");
  CHECK(s.f.db.scalar("SELECT open_op FROM task_ledger") == "op-a");  // the task stays held
  CHECK(s.f.ledger.sweep_abandoned(s.f.session, 100).empty());       // once

  CHECK(s.f.ledger.admit(s.f.session, s.f.admission(s.grant, op_a)).decision.code == Code::unknown_outcome);
  CHECK(s.f.ledger.admit(s.f.session, s.f.admission(s.grant, {"tenant-a", "task-a", "op-b", "v", 0}))
            .decision.code == Code::unresolved_operation);
}

TEST_CASE("sweep: before any sweep, the exact retry of an abandoned forward is already unknown_outcome") {
  Abandoned s;
  s.f.at(111);
  CHECK(s.f.ledger.admit(s.f.session, s.f.admission(s.grant, op_a)).decision.code == Code::unknown_outcome);
  CHECK(s.state() == "in_flight");  // the answer changed, the record is the sweep's to write
}

TEST_CASE("sweep: the original forwarder's late reply settles the swept attempt and is kept as evidence") {
  Abandoned s;
  s.f.at(111);
  REQUIRE(s.f.ledger.sweep_abandoned(s.f.session, 100).size() == 1);
  s.f.at(120);
  auto late = s.f.ledger.record_outcome(s.f.session, succeeded(op_a, s.attempt), s.grant);
  CHECK(late.recorded);
  CHECK(late.version == 1);
  CHECK(s.state() == "succeeded");
  CHECK(s.f.db.scalar("SELECT held_reason IS NULL FROM operations") == "t");
  CHECK(s.f.db.scalar("SELECT open_op IS NULL FROM task_ledger") == "t");
  CHECK(s.evidence("sweep") == "1");
  CHECK(s.evidence("late_reply") == "1");
  CHECK(s.f.db.scalar("SELECT upstream_status FROM operation_evidence WHERE source = 'late_reply'") == "201");
  // And the owner's exact retry now reads the recorded result.
  CHECK(s.f.ledger.admit(s.f.session, s.f.admission(s.grant, op_a)).decision.code == Code::historical_retry);
}

TEST_CASE("sweep: a record that won the race is left alone, and a reply for a settled attempt is evidence only") {
  Abandoned s;
  s.f.at(111);
  // The forwarder recorded its outcome just in time (past the deadline, before any sweep).
  REQUIRE(s.f.ledger.record_outcome(s.f.session, succeeded(op_a, s.attempt), s.grant).recorded);
  CHECK(s.f.ledger.sweep_abandoned(s.f.session, 100).empty());
  CHECK(s.state() == "succeeded");
  CHECK(s.evidence("sweep") == "0");
  // A second report of the same attempt changes nothing but is kept.
  CHECK_FALSE(s.f.ledger.record_outcome(s.f.session, succeeded(op_a, s.attempt), s.grant).recorded);
  CHECK(s.evidence("late_reply") == "1");
  CHECK(s.f.db.scalar("SELECT version FROM task_ledger") == "1");
}

TEST_CASE("sweep: an unknown outcome from the provider itself is held as outcome_unknown, not settled by a late report") {
  Abandoned s;
  s.f.at(20);
  OutcomeRecord unknown{{"tenant-a", "task-a"}, "op-a", s.attempt, OperationState::unknown, std::nullopt, "timeout"};
  REQUIRE(s.f.ledger.record_outcome(s.f.session, unknown, s.grant).recorded);
  CHECK(s.f.db.scalar("SELECT held_reason FROM operations") == "outcome_unknown");
  CHECK_FALSE(s.f.ledger.record_outcome(s.f.session, succeeded(op_a, s.attempt), s.grant).recorded);
  CHECK(s.state() == "unknown");
}

TEST_CASE("sweep: several sweepers on one database sweep each abandoned forward exactly once") {
  StoreFixture f;
  f.forward_budget_ms = 5;
  constexpr int tasks = 40;
  for (int t = 0; t < tasks; ++t) {
    const auto task = "task-" + std::to_string(t);
    auto g = f.claim("tenant-a", task, "region-a", 0, 1'000'000);
    REQUIRE(f.ledger.admit(f.session, f.admission(g, {"tenant-a", task, "op-a", "v", 0})).decision.action ==
            Admission::admit_new);
  }
  f.at(100);
  // Four gateways' sweepers, each on its own connection, small batches.
  std::vector<std::future<std::size_t>> sweepers;
  for (int i = 0; i < 4; ++i)
    sweepers.push_back(std::async(std::launch::async, [&f] {
      Session own(f.session_options, no_failures());
      std::size_t total = 0;
      for (;;) {
        auto swept = f.ledger.sweep_abandoned(own, 3);
        if (swept.empty()) return total;
        total += swept.size();
      }
    }));
  std::size_t total = 0;
  for (auto& s : sweepers) total += s.get();
  CHECK(total == tasks);
  CHECK(f.db.scalar("SELECT count(*) FROM operations WHERE state = 'unknown'") == std::to_string(tasks));
  CHECK(f.db.scalar("SELECT count(*) FROM operation_evidence WHERE source = 'sweep'") == std::to_string(tasks));
  CHECK(f.db.scalar("SELECT count(DISTINCT (tenant, task, op_id)) FROM operation_evidence") == std::to_string(tasks));
}
