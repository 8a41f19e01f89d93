#include "core/retention.hpp"

namespace gw {

std::int64_t retention_cutoff_ms(std::int64_t now_ms, std::chrono::milliseconds age) {
  const auto span = age.count();
  return span >= now_ms ? 0 : now_ms - span;
}

bool removable_operation(OperationState state, std::int64_t expected_version, std::int64_t task_version) {
  switch (state) {
    case OperationState::succeeded:
    case OperationState::rejected:
      return task_version > expected_version;
    case OperationState::not_executed:
      return true;
    case OperationState::in_flight:
    case OperationState::unknown:
      return false;
  }
  return false;
}

}  // namespace gw
