// Resolving held operations from evidence (spec section 4): the resolution
// settles the operation beside its original record, never rewriting it,
// releases the task, counts a success in the business version, and is
// refused (changing nothing) for an operation that holds nothing.
#include "store/held_fixture.hpp"

#include "core/digest.hpp"

#include <future>

using namespace gw;
using namespace gw::test;

namespace {

HeldResolution by_operator(OperationState outcome, std::string note = "checked at the provider") {
  HeldResolution r;
  r.scope = {"tenant-a", "task-a"};
  r.operation_id = "op-a";
  r.source = EvidenceSource::operator_;
  r.outcome = outcome;
  r.actor = "alice";
  r.reference = "TICKET-7";
  r.note = std::move(note);
  return r;
}

}  // namespace

TEST_CASE("resolve succeeded: releases the task, counts the version and keeps the original record") {
  HeldFixture h;
  const auto attempt_before = h.scalar("SELECT t::text FROM operation_attempts t");
  h.f.at(30);
  auto r = h.f.resolutions.resolve_held(h.f.session, by_operator(OperationState::succeeded, "booking bk_1 exists"));
  CHECK(r.code == Code::resolved);
  CHECK(r.found_state == OperationState::unknown);
  CHECK(r.held_reason == HeldReason::outcome_unknown);
  CHECK(r.attempt == 1);
  CHECK(r.now_ms == 30);
  CHECK(r.version == 1);
  CHECK(r.committed_version == 1);
  REQUIRE(r.evidence_id > 0);

  // The operation: settled, by whom, when and by which evidence row.
  CHECK(h.scalar("SELECT state FROM operations") == "succeeded");
  CHECK(h.scalar("SELECT committed_version FROM operations") == "1");
  CHECK(h.scalar("SELECT held_reason IS NULL FROM operations") == "t");
  CHECK(h.scalar("SELECT (resolution).source || ' ' || (resolution).resolved_ms || ' ' || (resolution).evidence FROM operations") ==
        "operator 30 " + std::to_string(r.evidence_id));
  // The reply of the unknown outcome stays where it was, for operators.
  CHECK(h.scalar("SELECT response_status FROM operations") == "503");
  // The original attempt record is not rewritten.
  CHECK(h.scalar("SELECT t::text FROM operation_attempts t") == attempt_before);
  CHECK(h.scalar("SELECT outcome || ' ' || upstream_status FROM operation_attempts") == "unknown 503");
  // The evidence, beside it.
  CHECK(h.scalar("SELECT count(*) FROM operation_evidence") == "1");
  CHECK(h.scalar("SELECT id FROM operation_evidence") == std::to_string(r.evidence_id));
  CHECK(h.scalar("SELECT concat_ws(' ', attempt, source, outcome, actor, reference, recorded_ms)"
                 " FROM operation_evidence") == "1 operator succeeded alice TICKET-7 30");
  CHECK(h.scalar("SELECT detail FROM operation_evidence") ==
        "resolved succeeded from unknown (outcome_unknown): booking bk_1 exists");
  CHECK(h.scalar("SELECT upstream_status IS NULL AND response_body IS NULL FROM operation_evidence") == "t");
  // The task: released, one more confirmed operation.
  CHECK(h.scalar("SELECT version FROM task_ledger") == "1");
  CHECK(h.scalar("SELECT open_op IS NULL FROM task_ledger") == "t");
  CHECK(h.f.ledger.admit(h.f.session, h.f.admission(h.grant, {"tenant-a", "task-a", "op-b", "v", 0})).decision.code ==
        Code::version_conflict);
  CHECK(h.f.ledger.admit(h.f.session, h.f.admission(h.grant, {"tenant-a", "task-a", "op-b", "v", 1})).decision.action ==
        Admission::admit_new);
}

TEST_CASE("resolve rejected: releases the task and leaves the version alone") {
  HeldFixture h;
  h.f.at(30);
  auto r = h.f.resolutions.resolve_held(h.f.session, by_operator(OperationState::rejected));
  CHECK(r.code == Code::resolved);
  CHECK(r.version == 0);
  CHECK_FALSE(r.committed_version);
  CHECK(h.scalar("SELECT state || ' ' || (committed_version IS NULL) FROM operations") == "rejected true");
  CHECK(h.scalar("SELECT version || ' ' || (open_op IS NULL) FROM task_ledger") == "0 true");
  CHECK(h.scalar("SELECT outcome FROM operation_attempts") == "unknown");
  CHECK(h.f.ledger.admit(h.f.session, h.f.admission(h.grant, {"tenant-a", "task-a", "op-b", "v", 0})).decision.action ==
        Admission::admit_new);
}

TEST_CASE("resolve not_executed: the exact retry is re-admitted under the same upstream key, and its own reply replays") {
  HeldFixture h;
  const auto key = h.scalar("SELECT upstream_key FROM operations");
  h.f.at(30);
  auto r = h.f.resolutions.resolve_held(h.f.session, by_operator(OperationState::not_executed, "provider has no record"));
  CHECK(r.code == Code::resolved);
  CHECK(h.scalar("SELECT state FROM operations") == "not_executed");
  CHECK(h.scalar("SELECT open_op IS NULL FROM task_ledger") == "t");

  h.f.at(40);
  auto again = h.retry();
  REQUIRE(again.decision.action == Admission::readmit);
  CHECK(again.attempt == 2);
  CHECK(again.upstream_key == key);
  // The new attempt's own outcome will settle it: the resolution stays as evidence only.
  CHECK(h.scalar("SELECT state || ' ' || ((resolution).source IS NULL) || ' ' || ((resolution).evidence IS NULL) FROM operations") ==
        "in_flight true true");
  CHECK(h.scalar("SELECT count(*) FROM operation_evidence WHERE source = 'operator'") == "1");
  CHECK(h.scalar("SELECT string_agg(attempt || ':' || coalesce(outcome, '-'), ',' ORDER BY attempt)"
                 " FROM operation_attempts") == "1:unknown,2:-");

  OutcomeRecord ok{{"tenant-a", "task-a"}, "op-a", 2, OperationState::succeeded,
                   RecordedResponse{201, "[]", "created", "", 7}, "provider replied 201"};
  REQUIRE(h.f.ledger.record_outcome(h.f.session, ok, h.grant).recorded);
  auto replay = h.retry();
  CHECK(replay.decision.code == Code::historical_retry);
  REQUIRE(replay.recorded);
  REQUIRE(replay.recorded->response);
  CHECK(replay.recorded->response->body == "created");
}

TEST_CASE("resolve of an operation that is not held is refused and changes nothing") {
  HeldFixture h;
  // Another task's operation, settled by its own reply.
  auto other = h.f.claim("tenant-a", "task-b", "region-a", 20, 1'000'000);
  REQUIRE(h.f.commit(other, {"tenant-a", "task-b", "op-s", "v", 0}, 21) == Code::committed);
  // A third one in flight within its forward deadline.
  auto third = h.f.claim("tenant-a", "task-c", "region-a", 22, 1'000'000);
  h.f.at(23);
  REQUIRE(h.f.ledger.admit(h.f.session, h.f.admission(third, {"tenant-a", "task-c", "op-f", "v", 0})).decision.action ==
          Admission::admit_new);
  h.f.at(30);
  const auto before = h.all_rows();

  struct Case {
    const char* name;
    TaskScope scope;
    std::string operation;
    EvidenceSource source;
    OperationState outcome;
    Code expected;
  };
  const Case cases[] = {
      {"settled by its own reply", {"tenant-a", "task-b"}, "op-s", EvidenceSource::operator_, OperationState::rejected, Code::operation_not_held},
      {"in flight within its deadline", {"tenant-a", "task-c"}, "op-f", EvidenceSource::operator_, OperationState::succeeded, Code::operation_in_flight},
      {"no such operation", {"tenant-a", "task-a"}, "op-zz", EvidenceSource::operator_, OperationState::succeeded, Code::not_found},
      {"no such task", {"tenant-z", "task-a"}, "op-a", EvidenceSource::operator_, OperationState::succeeded, Code::not_found},
      {"the sweep is not a resolution", {"tenant-a", "task-a"}, "op-a", EvidenceSource::sweep, OperationState::succeeded, Code::invalid_request},
      {"evidence that settles nothing", {"tenant-a", "task-a"}, "op-a", EvidenceSource::lookup, OperationState::unknown, Code::invalid_request},
  };
  for (const auto& c : cases) {
    CAPTURE(c.name);
    auto rq = by_operator(c.outcome);
    rq.scope = c.scope;
    rq.operation_id = c.operation;
    rq.source = c.source;
    CHECK(h.f.resolutions.resolve_held(h.f.session, rq).code == c.expected);
    CHECK(h.all_rows() == before);
  }

  // Resolved once, the operation holds nothing: a second resolution (even a
  // contradicting one) is refused and says how it was settled.
  auto first = h.f.resolutions.resolve_held(h.f.session, by_operator(OperationState::succeeded));
  REQUIRE(first.code == Code::resolved);
  const auto resolved = h.all_rows();
  auto second = h.f.resolutions.resolve_held(h.f.session, by_operator(OperationState::rejected));
  CHECK(second.code == Code::operation_not_held);
  CHECK(second.found_state == OperationState::succeeded);
  REQUIRE(second.found_resolution);
  CHECK(second.found_resolution->source == EvidenceSource::operator_);
  CHECK(second.found_resolution->evidence_id == first.evidence_id);
  CHECK(h.all_rows() == resolved);
}

TEST_CASE("resolve: a forward abandoned before any sweep can be resolved, and its late reply is then evidence only") {
  StoreFixture f;
  auto g = f.claim("tenant-a", "task-a", "region-a", 0, 1'000'000);
  f.forward_budget_ms = 100;
  f.at(10);
  const Intent op{"tenant-a", "task-a", "op-a", "value-a", 0};
  auto a = f.ledger.admit(f.session, f.admission(g, op));
  REQUIRE(a.decision.action == Admission::admit_new);
  f.at(111);  // past the deadline, not swept
  auto r = f.resolutions.resolve_held(f.session, by_operator(OperationState::rejected, "provider refused it"));
  CHECK(r.code == Code::resolved);
  CHECK(r.found_state == OperationState::in_flight);
  CHECK(f.db.scalar("SELECT state FROM operations") == "rejected");
  CHECK(f.db.scalar("SELECT detail FROM operation_evidence") ==
        "resolved rejected from in_flight past its forward deadline: provider refused it");
  // The attempt's record stays as the forward left it: never reported.
  CHECK(f.db.scalar("SELECT outcome IS NULL FROM operation_attempts") == "t");
  CHECK(f.ledger.sweep_abandoned(f.session, 100).empty());

  f.at(120);
  OutcomeRecord late{{"tenant-a", "task-a"}, "op-a", a.attempt, OperationState::succeeded,
                     RecordedResponse{201, "[]", "created", "", 7}, "provider replied 201"};
  CHECK_FALSE(f.ledger.record_outcome(f.session, late, g).recorded);
  CHECK(f.db.scalar("SELECT state FROM operations") == "rejected");
  CHECK(f.db.scalar("SELECT version FROM task_ledger") == "0");
  CHECK(f.db.scalar("SELECT string_agg(source, ',' ORDER BY id) FROM operation_evidence") == "operator,late_reply");
}

TEST_CASE("succeeded without a reply: the exact retry is resolved_without_reply and the receipt says succeeded") {
  for (auto outcome : {OperationState::succeeded, OperationState::rejected}) {
    CAPTURE(name(outcome));
    HeldFixture h;
    h.f.at(30);
    auto r = h.f.resolutions.resolve_held(h.f.session, by_operator(outcome));
    REQUIRE(r.code == Code::resolved);
    h.f.at(31);
    auto retry = h.retry();
    CHECK(retry.decision.action == Admission::reject);
    CHECK(retry.decision.code == Code::resolved_without_reply);
    CHECK_FALSE(retry.recorded);  // nothing to replay: never the 503 kept from the unknown outcome
    CHECK(h.scalar("SELECT attempts FROM operations") == "1");  // nothing resent
    CHECK(h.scalar("SELECT code FROM rejections") == "resolved_without_reply");

    auto receipt = h.f.ledger.receipt(h.f.session, {"tenant-a", "task-a"}, h.grant, "op-a");
    REQUIRE(receipt.code == Code::ok);
    REQUIRE(receipt.operation);
    CHECK(receipt.operation->state == outcome);
    CHECK_FALSE(receipt.operation->response);
    CHECK(receipt.operation->committed_version == r.committed_version);
    REQUIRE(receipt.operation->resolution);
    CHECK(receipt.operation->resolution->source == EvidenceSource::operator_);
    CHECK(receipt.operation->resolution->resolved_ms == 30);
    CHECK(receipt.operation->resolution->evidence_id == r.evidence_id);
  }
}

TEST_CASE("resolve from a lookup keeps what the provider said as evidence and still never replays it") {
  HeldFixture h;
  h.f.at(30);
  auto rq = by_operator(OperationState::succeeded);
  rq.source = EvidenceSource::lookup;
  rq.actor = "booking";
  rq.reference = "lookup-42";
  rq.note.reset();
  const std::string body = std::string(R"({"status":"confirmed","id":"bk_1"})") + '\0' + "\xff";
  rq.reply = RecordedResponse{200, R"([["Content-Type","application/json"]])", body, sha256_hex(body),
                              static_cast<std::int64_t>(body.size())};
  auto r = h.f.resolutions.resolve_held(h.f.session, rq);
  REQUIRE(r.code == Code::resolved);
  CHECK(h.scalar("SELECT (resolution).source FROM operations") == "lookup");
  CHECK(h.scalar("SELECT concat_ws(' ', source, actor, reference, upstream_status, response_length)"
                 " FROM operation_evidence") == "lookup booking lookup-42 200 " + std::to_string(body.size()));
  CHECK(h.scalar("SELECT encode(response_sha256, 'hex') FROM operation_evidence") == sha256_hex(body));
  CHECK(h.scalar("SELECT encode(response_body, 'hex') FROM operation_evidence") == to_hex(body));
  CHECK(h.scalar("SELECT response_headers::text FROM operation_evidence") == R"([["Content-Type", "application/json"]])");
  CHECK(h.scalar("SELECT detail FROM operation_evidence") == "resolved succeeded from unknown (outcome_unknown)");
  CHECK(h.retry().decision.code == Code::resolved_without_reply);
}

TEST_CASE("resolve: concurrent resolutions of one operation, exactly one settles it") {
  HeldFixture h;
  h.f.at(30);
  constexpr int resolvers = 4;
  std::vector<std::future<Code>> results;
  for (int i = 0; i < resolvers; ++i)
    results.push_back(std::async(std::launch::async, [&h, i] {
      Session own(h.f.session_options, no_failures());
      auto rq = by_operator(i % 2 ? OperationState::succeeded : OperationState::rejected);
      rq.actor = "operator-" + std::to_string(i);
      return until_decided([&] { return h.f.resolutions.resolve_held(own, rq); }).code;
    }));
  int resolved = 0, refused = 0;
  for (auto& r : results) {
    auto code = r.get();
    if (code == Code::resolved) ++resolved;
    if (code == Code::operation_not_held) ++refused;
  }
  CHECK(resolved == 1);
  CHECK(refused == resolvers - 1);
  CHECK(h.scalar("SELECT count(*) FROM operation_evidence") == "1");
  // The winner's outcome is the one recorded, and the version agrees with it.
  CHECK(h.scalar("SELECT o.state = e.outcome FROM operations o JOIN operation_evidence e ON e.id = (o.resolution).evidence") ==
        "t");
  CHECK(h.scalar("SELECT version FROM task_ledger") ==
        (h.scalar("SELECT state FROM operations") == "succeeded" ? "1" : "0"));
}
