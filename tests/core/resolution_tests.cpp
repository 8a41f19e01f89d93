// Resolving a held operation from evidence (spec section 4) as tables: which
// sources may settle which stored states, in which order the refusals come,
// and what a resolution does to the task ledger.
#include "core/labels.hpp"
#include "core/resolution.hpp"

#include <doctest/doctest.h>

using namespace gw;

namespace {
ResolutionInput held(OperationState state, bool abandoned = false) {
  ResolutionInput in;
  in.source = EvidenceSource::operator_;
  in.outcome = OperationState::succeeded;
  in.state = state;
  in.abandoned = abandoned;
  in.version = 3;
  return in;
}
}  // namespace

TEST_CASE("decide_resolution: only a held operation may be resolved") {
  struct Case {
    const char* name;
    std::optional<OperationState> state;
    bool abandoned;
    Code expected;
  };
  const Case cases[] = {
      {"unknown is held", OperationState::unknown, false, Code::ok},
      {"in flight past its forward deadline is held (abandoned, before any sweep)", OperationState::in_flight, true, Code::ok},
      {"in flight within its deadline: its forwarder will settle it", OperationState::in_flight, false, Code::operation_in_flight},
      {"succeeded is settled", OperationState::succeeded, false, Code::operation_not_held},
      {"rejected is settled", OperationState::rejected, false, Code::operation_not_held},
      {"not_executed is settled (it may be re-admitted, not resolved)", OperationState::not_executed, false, Code::operation_not_held},
      {"no such operation", std::nullopt, false, Code::not_found},
  };
  for (const auto& c : cases) {
    CAPTURE(c.name);
    auto in = held(OperationState::unknown);
    in.state = c.state;
    in.abandoned = c.abandoned;
    CHECK(decide_resolution(in) == c.expected);
  }
}

TEST_CASE("decide_resolution: lookups, webhooks and operators resolve, and the ledger's own sources do not") {
  for (auto source : {EvidenceSource::lookup, EvidenceSource::webhook, EvidenceSource::operator_}) {
    auto in = held(OperationState::unknown);
    in.source = source;
    CAPTURE(name(source));
    CHECK(decide_resolution(in) == Code::ok);
  }
  for (auto source : {EvidenceSource::sweep, EvidenceSource::late_reply}) {
    auto in = held(OperationState::unknown);
    in.source = source;
    CAPTURE(name(source));
    CHECK(decide_resolution(in) == Code::invalid_request);
  }
}

TEST_CASE("decide_resolution: evidence must settle the outcome: succeeded, rejected or not_executed") {
  for (auto outcome : {OperationState::succeeded, OperationState::rejected, OperationState::not_executed}) {
    auto in = held(OperationState::unknown);
    in.outcome = outcome;
    CHECK(decide_resolution(in) == Code::ok);
  }
  for (auto outcome : {OperationState::unknown, OperationState::in_flight}) {
    auto in = held(OperationState::unknown);
    in.outcome = outcome;
    CHECK(decide_resolution(in) == Code::invalid_request);
  }
}

TEST_CASE("decide_resolution: bad evidence is refused before the operation is looked at") {
  auto in = held(OperationState::succeeded);
  in.state = std::nullopt;
  in.source = EvidenceSource::sweep;
  CHECK(decide_resolution(in) == Code::invalid_request);
  in.source = EvidenceSource::operator_;
  CHECK(decide_resolution(in) == Code::not_found);
}

TEST_CASE("decide_resolution: a success cannot pass the business version 2^63-1") {
  auto in = held(OperationState::unknown);
  in.version = max_integer;
  CHECK(decide_resolution(in) == Code::version_exhausted);
  in.outcome = OperationState::rejected;  // changes no version
  CHECK(decide_resolution(in) == Code::ok);
}

TEST_CASE("apply_resolution: succeeded counts like an outcome, and the hold ends only for the holding operation") {
  const TaskLedger ledger{5, "op-a"};
  CHECK(apply_resolution(ledger, "op-a", OperationState::succeeded).version == 6);
  CHECK_FALSE(apply_resolution(ledger, "op-a", OperationState::succeeded).open_operation);
  for (auto outcome : {OperationState::rejected, OperationState::not_executed}) {
    CHECK(apply_resolution(ledger, "op-a", outcome).version == 5);
    CHECK_FALSE(apply_resolution(ledger, "op-a", outcome).open_operation);
  }
  // Never release another operation's hold.
  CHECK(apply_resolution(ledger, "op-b", OperationState::rejected).open_operation == "op-a");
}

TEST_CASE("evidence sources round-trip their names") {
  for (auto s : {EvidenceSource::sweep, EvidenceSource::late_reply, EvidenceSource::lookup, EvidenceSource::webhook,
                 EvidenceSource::operator_})
    CHECK(parse_evidence_source(name(s)) == s);
  CHECK(name(EvidenceSource::operator_) == "operator");
  CHECK_FALSE(parse_evidence_source("agent"));
}
