// Resolving a held operation from evidence (spec section 4): which sources
// may settle what, and what a resolution does to the task. The one rule the
// operator's resolve, the provider lookup and signed webhooks all apply.
// Pure: the store reads the rows, calls these, writes what they decide.
#pragma once

#include "core/codes.hpp"
#include "core/ledger.hpp"

#include <cstdint>
#include <optional>
#include <string_view>

namespace gw {

// Where a piece of evidence about an operation came from
// (operation_evidence.source). `sweep` and `late_reply` are written by the
// ledger itself; only the last three can resolve a held operation.
enum class EvidenceSource { sweep, late_reply, lookup, webhook, operator_ };

std::string_view name(EvidenceSource source);
std::optional<EvidenceSource> parse_evidence_source(std::string_view text);

struct ResolutionInput {
  EvidenceSource source = EvidenceSource::operator_;
  OperationState outcome = OperationState::unknown;  // what the evidence says happened
  std::optional<OperationState> state{};             // as stored; nullopt: no such operation
  // In flight past its forward deadline (forward_abandoned()): nobody is
  // forwarding it any more, so it is held even before a sweep says so.
  bool abandoned = false;
  std::int64_t version = 0;  // the task's business version
};

// May this evidence resolve this operation now? In order:
//   invalid_request     the source is not lookup/webhook/operator, or the
//                       outcome is not succeeded/rejected/not_executed
//   not_found           no such operation
//   operation_in_flight in flight within its forward deadline: its own
//                       forwarder will settle it
//   operation_not_held  already succeeded, rejected or not_executed
//   version_exhausted   succeeded with the version at 2^63-1
//   ok                  unknown, or in flight past its forward deadline
Code decide_resolution(const ResolutionInput& in);

// What a resolution does to the task ledger: succeeded counts (+1, as an
// outcome would), and the hold ends only if this operation is the one
// holding the task.
TaskLedger apply_resolution(const TaskLedger& ledger, std::string_view operation_id,
                            OperationState outcome);

}  // namespace gw
