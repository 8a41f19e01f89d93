// The operator's detail of one operation (spec section 4): every attempt
// with the grant identity that admitted it, the request, and every piece of
// evidence in order, bodies only as digests.
#include "store/store_fixture.hpp"

#include "core/digest.hpp"

using namespace gw;
using namespace gw::test;

TEST_CASE("operation detail: every attempt with the grant that admitted it, and every piece of evidence in order") {
  StoreFixture f;
  const Intent op{"tenant-a", "task-a", "op-a", "value-a", 0};
  const TaskScope scope{"tenant-a", "task-a"};
  // Attempt 1 by region-a: nothing was sent.
  auto a = f.claim("tenant-a", "task-a", "region-a", 0, 100);
  f.at(1);
  REQUIRE(f.ledger.admit(f.session, f.admission(a, op)).attempt == 1);
  f.at(2);
  REQUIRE(f.ledger.record_outcome(f.session, {scope, "op-a", 1, OperationState::not_executed, std::nullopt,
                                              "connect refused"}, a).recorded);
  // Attempt 2 by region-b, after region-a's lease ended: the provider answered 503.
  auto b = f.claim("tenant-a", "task-a", "region-b", 100, 1'000);
  f.at(101);
  REQUIRE(f.ledger.admit(f.session, f.admission(b, op)).attempt == 2);
  f.at(102);
  REQUIRE(f.ledger.record_outcome(f.session, {scope, "op-a", 2, OperationState::unknown,
                                              RecordedResponse{503, "[]", "busy", sha256_hex("busy"), 4},
                                              "provider replied 503"}, b).recorded);
  // A second report of attempt 2 (evidence only), then the operator's resolution.
  f.at(103);
  REQUIRE_FALSE(f.ledger.record_outcome(f.session, {scope, "op-a", 2, OperationState::succeeded,
                                                    RecordedResponse{201, "[]", "made", sha256_hex("made"), 4},
                                                    "provider replied 201"}, b).recorded);
  f.at(104);
  HeldResolution rq{scope, "op-a", EvidenceSource::operator_, OperationState::succeeded, "alice", "TICKET-9",
                    "confirmed by phone", std::nullopt};
  auto resolved = f.resolutions.resolve_held(f.session, rq);
  REQUIRE(resolved.code == Code::resolved);

  f.at(110);
  auto d = f.operators.detail(f.session, scope, "op-a");
  REQUIRE(d);
  CHECK(d->scope == scope);
  CHECK(d->operation_id == "op-a");
  CHECK(d->state == OperationState::succeeded);
  CHECK_FALSE(d->held_reason);
  CHECK(d->method == "POST");
  CHECK(d->provider == "booking");
  CHECK(d->target == "/bookings");
  CHECK(d->fingerprint_hex == to_hex(f.admission(b, op).fingerprint));
  CHECK(d->expected_version == 0);
  CHECK(d->upstream_key == upstream_idempotency_key("tenant-a", "task-a", "op-a"));
  CHECK(d->attempt_count == 2);
  CHECK(d->created_ms == 1);
  CHECK(d->updated_ms == 104);
  CHECK(d->committed_version == 1);
  REQUIRE(d->reply);  // the 503 that did not settle it
  CHECK(d->reply->status == 503);
  CHECK(d->reply->sha256 == sha256_hex("busy"));
  CHECK(d->reply->length == 4);
  REQUIRE(d->resolution);
  CHECK(d->resolution->source == EvidenceSource::operator_);
  CHECK(d->resolution->resolved_ms == 104);
  CHECK(d->resolution->evidence_id == resolved.evidence_id);
  CHECK(d->task_version == 1);
  CHECK_FALSE(d->task_open_operation);
  CHECK(d->now_ms == 110);

  REQUIRE(d->attempts.size() == 2);
  const auto& first = d->attempts[0];
  CHECK(first.attempt == 1);
  CHECK(first.grant.realm == a.identity.realm);
  CHECK(first.grant.scope == scope);
  CHECK(first.grant.owner == "region-a");
  CHECK(first.grant.epoch == a.identity.epoch);
  CHECK(first.admitted_ms == 1);
  CHECK(first.outcome == OperationState::not_executed);
  CHECK(first.outcome_ms == 2);
  CHECK_FALSE(first.upstream_status);
  CHECK(first.detail == "connect refused");
  const auto& second = d->attempts[1];
  CHECK(second.attempt == 2);
  CHECK(second.grant.owner == "region-b");
  CHECK(second.grant.epoch == b.identity.epoch);
  CHECK(second.grant.epoch > first.grant.epoch);
  CHECK(second.admitted_ms == 101);
  CHECK(second.outcome == OperationState::unknown);  // as the forward saw it, never rewritten
  CHECK(second.upstream_status == 503);

  REQUIRE(d->evidence.size() == 2);
  CHECK(d->evidence[0].id < d->evidence[1].id);
  const auto& late = d->evidence[0];
  CHECK(late.source == EvidenceSource::late_reply);
  CHECK(late.attempt == 2);
  CHECK(late.outcome == OperationState::succeeded);
  CHECK(late.upstream_status == 201);
  CHECK(late.body_sha256 == sha256_hex("made"));
  CHECK(late.body_length == 4);
  CHECK(late.recorded_ms == 103);
  CHECK_FALSE(late.actor);
  const auto& op_ev = d->evidence[1];
  CHECK(op_ev.id == resolved.evidence_id);
  CHECK(op_ev.source == EvidenceSource::operator_);
  CHECK(op_ev.outcome == OperationState::succeeded);
  CHECK(op_ev.actor == "alice");
  CHECK(op_ev.reference == "TICKET-9");
  CHECK(op_ev.detail == "resolved succeeded from unknown (outcome_unknown): confirmed by phone");
  CHECK(op_ev.recorded_ms == 104);
  CHECK_FALSE(op_ev.body_sha256);
}

TEST_CASE("operation detail: an operation in flight shows its forward deadline and holds its task") {
  StoreFixture f;
  auto g = f.claim("tenant-a", "task-a", "region-a", 0, 1'000);
  f.forward_budget_ms = 50;
  f.at(5);
  REQUIRE(f.ledger.admit(f.session, f.admission(g, {"tenant-a", "task-a", "op-a", "v", 0})).decision.action ==
          Admission::admit_new);
  auto d = f.operators.detail(f.session, {"tenant-a", "task-a"}, "op-a");
  REQUIRE(d);
  CHECK(d->state == OperationState::in_flight);
  CHECK(d->forward_deadline_ms == 55);
  CHECK(d->task_open_operation == "op-a");
  CHECK_FALSE(d->reply);
  CHECK_FALSE(d->resolution);
  REQUIRE(d->attempts.size() == 1);
  CHECK_FALSE(d->attempts[0].outcome);
  CHECK(d->evidence.empty());
}

TEST_CASE("operation detail: not found for another key, task or tenant") {
  StoreFixture f;
  auto g = f.claim("tenant-a", "task-a", "region-a", 0, 1'000);
  REQUIRE(f.commit(g, {"tenant-a", "task-a", "op-a", "v", 0}, 1) == Code::committed);
  CHECK(f.operators.detail(f.session, {"tenant-a", "task-a"}, "op-a"));
  CHECK_FALSE(f.operators.detail(f.session, {"tenant-a", "task-a"}, "op-b"));
  CHECK_FALSE(f.operators.detail(f.session, {"tenant-a", "task-b"}, "op-a"));
  CHECK_FALSE(f.operators.detail(f.session, {"tenant-b", "task-a"}, "op-a"));
}
