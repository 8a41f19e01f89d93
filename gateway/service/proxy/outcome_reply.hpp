// What an agent is told about its own forwarded attempt (spec section 3's
// outcome table, behind the reply gate). Pure: the proxy hands in what the
// provider sent and what the outcome transaction said, and sends back the
// result; the table is tested without sockets or a database.
#pragma once

#include "core/codes.hpp"
#include "core/ledger.hpp"
#include "http/message.hpp"

#include <cstdint>
#include <optional>
#include <string>

namespace gw {

// The provider's reply as the agent may see it (gateway-owned headers
// already removed).
struct ProviderReply {
  unsigned status = 0;
  http::Fields headers;
  std::string body;
};

// What the outcome transaction reported for this attempt.
struct RecordedAttempt {
  bool recorded = false;      // false: the attempt had been settled by another path
  Code reply_gate = Code::ok;  // ok, or why this grant may no longer see the result
  std::int64_t version = 0;   // the task's business version after the outcome
};

http::Response outcome_reply(OperationState state, std::optional<ProviderReply> reply,
                             const RecordedAttempt& attempt);

// The request was forwarded but its outcome could not be written down: 504
// unknown_outcome (never 503: something may have happened upstream).
http::Response unrecorded_outcome_reply();

}  // namespace gw
