// spec section 3's admission order and outcome effects as tables.
#include "core/labels.hpp"
#include "core/ledger.hpp"

#include <doctest/doctest.h>

using namespace gw;

namespace {
AdmissionInput input() {
  AdmissionInput in;
  in.operation_id = "op-a";
  in.fingerprint = "fp-1";
  in.ledger = {3, std::nullopt};
  in.expected_version = 3;
  return in;
}
}  // namespace

TEST_CASE("decide_admission: a new operation at the current version is admitted") {
  auto d = decide_admission(input());
  CHECK(d.action == Admission::admit_new);
}

TEST_CASE("decide_admission: the grant check comes first") {
  for (auto code : {Code::stale_owner, Code::expired_owner, Code::scope_mismatch,
                    Code::authority_generation_mismatch}) {
    auto in = input();
    in.grant_check = code;
    in.existing = ExistingOperation{"fp-1", OperationState::succeeded};  // even a replay is withheld
    auto d = decide_admission(in);
    CHECK(d.action == Admission::reject);
    CHECK(d.code == code);
  }
}

TEST_CASE("decide_admission: an existing key decides by fingerprint and state") {
  struct Case {
    const char* name;
    const char* fingerprint;
    OperationState state;
    Admission action;
    Code code;
  };
  const Case cases[] = {
      {"exact retry of a success is replayed", "fp-1", OperationState::succeeded, Admission::replay, Code::historical_retry},
      {"exact retry of a rejection is replayed", "fp-1", OperationState::rejected, Admission::replay, Code::historical_retry},
      {"exact retry while in flight", "fp-1", OperationState::in_flight, Admission::reject, Code::operation_in_flight},
      {"exact retry of an unknown outcome is never resent", "fp-1", OperationState::unknown, Admission::reject, Code::unknown_outcome},
      {"exact retry of not_executed is readmitted", "fp-1", OperationState::not_executed, Admission::readmit, Code::ok},
      {"changed payload", "fp-2", OperationState::succeeded, Admission::reject, Code::operation_conflict},
      {"changed payload while in flight", "fp-2", OperationState::in_flight, Admission::reject, Code::operation_conflict},
  };
  for (const auto& c : cases) {
    CAPTURE(c.name);
    auto in = input();
    in.existing = ExistingOperation{c.fingerprint, c.state};
    if (c.state == OperationState::in_flight || c.state == OperationState::unknown)
      in.ledger.open_operation = "op-a";
    auto d = decide_admission(in);
    CHECK(d.action == c.action);
    CHECK(d.code == c.code);
  }
}

TEST_CASE("decide_admission: a replay is returned whatever the version is now") {
  auto in = input();
  in.existing = ExistingOperation{"fp-1", OperationState::succeeded};
  in.expected_version = 0;  // the version the operation was admitted at, long passed
  CHECK(decide_admission(in).code == Code::historical_retry);
}

TEST_CASE("decide_admission: another unresolved operation holds the task") {
  auto in = input();
  in.ledger.open_operation = "op-other";
  CHECK(decide_admission(in).code == Code::unresolved_operation);
  in.existing = ExistingOperation{"fp-1", OperationState::not_executed};
  CHECK(decide_admission(in).code == Code::unresolved_operation);  // recovery waits too
}

TEST_CASE("decide_admission: expected version must equal the business version") {
  auto in = input();
  in.expected_version = 2;
  CHECK(decide_admission(in).code == Code::version_conflict);
  in.expected_version = 4;
  CHECK(decide_admission(in).code == Code::version_conflict);
  in.existing = ExistingOperation{"fp-1", OperationState::not_executed};
  CHECK(decide_admission(in).code == Code::version_conflict);
}

TEST_CASE("decide_admission: version_exhausted at 2^63-1") {
  auto in = input();
  in.ledger.version = max_integer;
  in.expected_version = max_integer;
  CHECK(decide_admission(in).code == Code::version_exhausted);
}

TEST_CASE("apply_outcome: version and hold per outcome") {
  const TaskLedger held{5, "op-a"};
  CHECK(apply_outcome(held, "op-a", OperationState::succeeded).version == 6);
  CHECK_FALSE(apply_outcome(held, "op-a", OperationState::succeeded).open_operation);
  CHECK(apply_outcome(held, "op-a", OperationState::rejected).version == 5);
  CHECK_FALSE(apply_outcome(held, "op-a", OperationState::rejected).open_operation);
  CHECK(apply_outcome(held, "op-a", OperationState::not_executed).version == 5);
  CHECK_FALSE(apply_outcome(held, "op-a", OperationState::not_executed).open_operation);
  CHECK(apply_outcome(held, "op-a", OperationState::unknown).version == 5);
  CHECK(apply_outcome(held, "op-a", OperationState::unknown).open_operation == "op-a");
}

TEST_CASE("operation states round-trip their names") {
  for (auto s : {OperationState::in_flight, OperationState::succeeded, OperationState::rejected,
                 OperationState::not_executed, OperationState::unknown})
    CHECK(parse_operation_state(name(s)) == s);
  CHECK_FALSE(parse_operation_state("done"));
}

TEST_CASE("decide_admission: the exact retry of an abandoned forward is unknown_outcome, never in flight") {
  auto in = input();
  in.ledger.open_operation = "op-a";
  in.existing = ExistingOperation{"fp-1", OperationState::in_flight, true};
  auto d = decide_admission(in);
  CHECK(d.action == Admission::reject);
  CHECK(d.code == Code::unknown_outcome);
  in.existing->fingerprint = "fp-2";  // a changed payload is still a conflict first
  CHECK(decide_admission(in).code == Code::operation_conflict);
}

TEST_CASE("forward_abandoned: only an attempt in flight, only strictly past its deadline") {
  CHECK_FALSE(forward_abandoned(OperationState::in_flight, 100, 99));
  CHECK_FALSE(forward_abandoned(OperationState::in_flight, 100, 100));
  CHECK(forward_abandoned(OperationState::in_flight, 100, 101));
  CHECK(forward_abandoned(OperationState::in_flight, std::nullopt, 0));  // admitted before deadlines
  for (auto s : {OperationState::succeeded, OperationState::rejected, OperationState::not_executed,
                 OperationState::unknown})
    CHECK_FALSE(forward_abandoned(s, 100, 1000));
}

TEST_CASE("settles_operation: the attempt in flight, or the same attempt's late reply after a sweep") {
  CHECK(settles_operation(OperationState::in_flight, std::nullopt, 2, 2));
  CHECK_FALSE(settles_operation(OperationState::in_flight, std::nullopt, 2, 1));  // an older attempt
  CHECK(settles_operation(OperationState::unknown, HeldReason::forward_abandoned, 2, 2));
  CHECK_FALSE(settles_operation(OperationState::unknown, HeldReason::forward_abandoned, 2, 1));
  // Unknown from the provider's own answer: only evidence can resolve it.
  CHECK_FALSE(settles_operation(OperationState::unknown, HeldReason::outcome_unknown, 2, 2));
  for (auto s : {OperationState::succeeded, OperationState::rejected, OperationState::not_executed})
    CHECK_FALSE(settles_operation(s, std::nullopt, 1, 1));
}

TEST_CASE("held reasons round-trip their names") {
  for (auto r : {HeldReason::outcome_unknown, HeldReason::forward_abandoned}) CHECK(parse_held_reason(name(r)) == r);
  CHECK_FALSE(parse_held_reason("swept"));
}

TEST_CASE("decide_admission: the exact retry of an operation settled by evidence is resolved_without_reply") {
  // Settled by a lookup, a webhook or an operator: no reply of the provider
  // to this request is stored, so nothing is replayed and nothing resent.
  for (auto state : {OperationState::succeeded, OperationState::rejected}) {
    CAPTURE(name(state));
    auto in = input();
    in.existing = ExistingOperation{"fp-1", state, false, false};
    auto d = decide_admission(in);
    CHECK(d.action == Admission::reject);
    CHECK(d.code == Code::resolved_without_reply);
    in.existing->fingerprint = "fp-2";  // a changed payload is still a conflict first
    CHECK(decide_admission(in).code == Code::operation_conflict);
  }
  // Whatever the version is now, as for a replay.
  auto in = input();
  in.expected_version = 0;
  in.existing = ExistingOperation{"fp-1", OperationState::succeeded, false, false};
  CHECK(decide_admission(in).code == Code::resolved_without_reply);
  // The grant check still comes first: a stale owner learns nothing.
  in.grant_check = Code::stale_owner;
  CHECK(decide_admission(in).code == Code::stale_owner);
}

TEST_CASE("decide_admission: an operation resolved not_executed is re-admitted like any not_executed one") {
  auto in = input();
  in.existing = ExistingOperation{"fp-1", OperationState::not_executed, false, false};
  CHECK(decide_admission(in).action == Admission::readmit);
}
