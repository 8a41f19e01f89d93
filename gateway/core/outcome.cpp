#include "core/outcome.hpp"

#include <algorithm>

namespace gw {

OutcomeRules OutcomeRules::defaults() {
  return {{{400, 407}, {409, 428}, {430, 499}}, {{408, 408}, {429, 429}}};
}

OperationState classify_outcome(const OutcomeRules& rules, bool request_sent,
                                std::optional<unsigned> status) {
  auto in = [](const std::vector<StatusRange>& ranges, unsigned s) {
    return std::any_of(ranges.begin(), ranges.end(), [s](auto r) { return r.contains(s); });
  };
  if (status) {
    if (*status >= 200 && *status <= 299) return OperationState::succeeded;
    if (in(rules.rejected, *status)) return OperationState::rejected;
    if (in(rules.not_executed, *status)) return OperationState::not_executed;
    return OperationState::unknown;
  }
  // Without a reply only the socket knows: a byte sent may have been executed.
  return request_sent ? OperationState::unknown : OperationState::not_executed;
}

}  // namespace gw
