#include "core/resolution.hpp"

#include "core/labels.hpp"

#include <array>

namespace gw {
namespace {
constexpr std::array<std::string_view, 5> source_names{"sweep", "late_reply", "lookup", "webhook",
                                                       "operator"};
}

std::string_view name(EvidenceSource source) {
  return source_names[static_cast<std::size_t>(source)];
}

std::optional<EvidenceSource> parse_evidence_source(std::string_view text) {
  for (std::size_t i = 0; i < source_names.size(); ++i)
    if (source_names[i] == text) return static_cast<EvidenceSource>(i);
  return std::nullopt;
}

Code decide_resolution(const ResolutionInput& in) {
  switch (in.source) {
    case EvidenceSource::lookup:
    case EvidenceSource::webhook:
    case EvidenceSource::operator_:
      break;
    case EvidenceSource::sweep:
    case EvidenceSource::late_reply:
      return Code::invalid_request;
  }
  switch (in.outcome) {
    case OperationState::succeeded:
    case OperationState::rejected:
    case OperationState::not_executed:
      break;
    case OperationState::in_flight:
    case OperationState::unknown:
      return Code::invalid_request;  // evidence that settles nothing is not a resolution
  }
  if (!in.state) return Code::not_found;
  switch (*in.state) {
    case OperationState::unknown:
      break;
    case OperationState::in_flight:
      if (!in.abandoned) return Code::operation_in_flight;
      break;
    case OperationState::succeeded:
    case OperationState::rejected:
    case OperationState::not_executed:
      return Code::operation_not_held;
  }
  if (in.outcome == OperationState::succeeded && in.version == max_integer) return Code::version_exhausted;
  return Code::ok;
}

TaskLedger apply_resolution(const TaskLedger& ledger, std::string_view operation_id,
                            OperationState outcome) {
  TaskLedger next = ledger;
  if (outcome == OperationState::succeeded) ++next.version;
  if (next.open_operation && *next.open_operation == operation_id) next.open_operation.reset();
  return next;
}

}  // namespace gw
