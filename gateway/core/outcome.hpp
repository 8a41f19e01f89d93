// How an upstream result becomes an operation outcome (spec section 3):
// 2xx succeeded; a status the provider documents as a definite rejection is
// rejected; one it documents as "not executed" is not_executed; a failure
// before any request byte was sent is not_executed; everything else unknown.
#pragma once

#include "core/ledger.hpp"

#include <optional>
#include <vector>

namespace gw {

struct StatusRange {
  unsigned first = 0;
  unsigned last = 0;
  bool contains(unsigned status) const { return status >= first && status <= last; }
};

struct OutcomeRules {
  std::vector<StatusRange> rejected;      // definite rejections: recorded and replayed
  std::vector<StatusRange> not_executed;  // provider says it did nothing: retryable

  // 4xx are rejections except 408 and 429, which say the request was not
  // processed and may be retried; 5xx stay unknown.
  static OutcomeRules defaults();
};

// `status` is the provider's reply status when a complete reply arrived;
// `request_sent` is whether any request byte reached the socket.
OperationState classify_outcome(const OutcomeRules& rules, bool request_sent,
                                std::optional<unsigned> status);

}  // namespace gw
