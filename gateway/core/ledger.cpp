#include "core/ledger.hpp"

#include "core/labels.hpp"

#include <array>

namespace gw {
namespace {
constexpr std::array<std::string_view, 5> state_names{"in_flight", "succeeded", "rejected",
                                                      "not_executed", "unknown"};
}

std::string_view name(OperationState state) {
  return state_names[static_cast<std::size_t>(state)];
}

std::optional<OperationState> parse_operation_state(std::string_view text) {
  for (std::size_t i = 0; i < state_names.size(); ++i)
    if (state_names[i] == text) return static_cast<OperationState>(i);
  return std::nullopt;
}

std::string_view name(HeldReason reason) {
  return reason == HeldReason::outcome_unknown ? "outcome_unknown" : "forward_abandoned";
}

std::optional<HeldReason> parse_held_reason(std::string_view text) {
  if (text == "outcome_unknown") return HeldReason::outcome_unknown;
  if (text == "forward_abandoned") return HeldReason::forward_abandoned;
  return std::nullopt;
}

bool forward_abandoned(OperationState state, std::optional<std::int64_t> deadline_ms, std::int64_t now_ms) {
  return state == OperationState::in_flight && (!deadline_ms || now_ms > *deadline_ms);
}

bool settles_operation(OperationState state, std::optional<HeldReason> held, int current_attempt, int attempt) {
  if (attempt != current_attempt) return false;
  return state == OperationState::in_flight ||
         (state == OperationState::unknown && held == HeldReason::forward_abandoned);
}

AdmissionDecision decide_admission(const AdmissionInput& in) {
  if (in.grant_check != Code::ok) return {Admission::reject, in.grant_check};
  if (in.existing) {
    if (in.existing->fingerprint != in.fingerprint)
      return {Admission::reject, Code::operation_conflict};
    switch (in.existing->state) {
      case OperationState::succeeded:
      case OperationState::rejected:
        if (!in.existing->reply_recorded) return {Admission::reject, Code::resolved_without_reply};
        return {Admission::replay, Code::historical_retry};
      case OperationState::in_flight:
        // Never "being forwarded now" when nobody is forwarding it any more.
        if (in.existing->abandoned) return {Admission::reject, Code::unknown_outcome};
        return {Admission::reject, Code::operation_in_flight};
      case OperationState::unknown:
        // Never resent: only evidence can resolve it.
        return {Admission::reject, Code::unknown_outcome};
      case OperationState::not_executed:
        break;  // recovery: the remaining checks decide, as for a new operation
    }
  }
  if (in.ledger.open_operation && *in.ledger.open_operation != in.operation_id)
    return {Admission::reject, Code::unresolved_operation};
  if (in.expected_version != in.ledger.version) return {Admission::reject, Code::version_conflict};
  if (in.ledger.version == max_integer) return {Admission::reject, Code::version_exhausted};
  return {in.existing ? Admission::readmit : Admission::admit_new, Code::ok};
}

TaskLedger apply_outcome(const TaskLedger& ledger, std::string_view operation_id,
                         OperationState outcome) {
  TaskLedger next = ledger;
  if (outcome == OperationState::succeeded) ++next.version;
  // An unknown outcome keeps holding the task; any other ends the hold.
  if (outcome == OperationState::unknown)
    next.open_operation = std::string(operation_id);
  else if (outcome != OperationState::in_flight)
    next.open_operation.reset();
  return next;
}

}  // namespace gw
