// Reconciliation by the provider's status lookup (spec section 4), as pure
// rules: where to ask, what an answer proves, and when to ask again. The
// store hands out due operations and records what was asked and answered;
// the loop does the I/O; resolve_held changes the operation's state.
#pragma once

#include "core/ledger.hpp"
#include "core/outcome.hpp"

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gw {

// A provider's status lookup by idempotency key (config: providers[].lookup).
struct LookupConfig {
  std::string method = "GET";  // GET or HEAD (HEAD only without pointers: it has no body)
  std::string path;            // e.g. "/bookings/by-key/{key}": exactly one {key}
  std::vector<StatusRange> found{{200, 200}};      // the provider executed the operation
  std::vector<StatusRange> not_found{{404, 404}};  // the provider has no record of the key
  // How long after the attempt's last possible send a "not found" is still
  // not trusted: bytes in flight, the provider's queues and its lookup index
  // lagging its writes.
  std::chrono::milliseconds settle_window{60000};
  std::optional<std::string> status_pointer;  // JSON pointer to the original status in a found body
  std::optional<std::string> body_pointer;    // JSON pointer to the original body in a found body
};

// Why a lookup path template is unusable, or nullopt when it is fine: it
// starts with '/', holds exactly one {key} and no other brace, and only
// printable ASCII without '#'.
std::optional<std::string> lookup_path_problem(std::string_view path_template);

// RFC 3986 percent-encoding of everything but unreserved characters
// (ALPHA DIGIT - . _ ~), upper-case hex: safe in a path segment and a query.
std::string percent_encode(std::string_view bytes);

// The request target of the lookup for `key`: the provider's base path
// joined before the template (as forwarded requests are joined, see
// service/proxy/forwarding.hpp upstream_target), {key} replaced by the
// percent-encoded key. The template must have passed lookup_path_problem.
std::string lookup_target(std::string_view base_path, std::string_view path_template, std::string_view key);

// When a "not found" starts to count as not executed: the attempt's last
// possible send plus the settle window. nullopt when there is no known last
// send (an attempt admitted before forward deadlines existed): never.
std::optional<std::int64_t> not_found_trusted_from(const LookupConfig& lookup,
                                                   std::optional<std::int64_t> last_possible_send_ms);

// What the lookup brought back, and when it was asked.
struct LookupInput {
  std::optional<unsigned> status;  // the lookup reply's status; nullopt: no complete reply
  std::string_view body;           // the lookup reply's body
  std::string_view failure;        // why there is no reply (transport), for the detail
  // The attempt's forward deadline: the latest moment the admitting process
  // could have written a byte of the request (see docs/operations.md).
  std::optional<std::int64_t> last_possible_send_ms;
  // Authority time before the lookup was sent (DueLookup::handed_out_ms):
  // the provider answered at or after it, so comparing it with the settle
  // window can only err towards holding.
  std::int64_t asked_at_ms = 0;
};

struct LookupDecision {
  // succeeded, rejected or not_executed: the evidence settles the operation.
  // unknown: it stays held (and is looked up again later).
  OperationState outcome = OperationState::unknown;
  // Found with a status_pointer / body_pointer: what the provider says it
  // originally answered. A body_pointer value that is a JSON string is the
  // body's bytes; any other JSON value is its compact serialization.
  std::optional<unsigned> original_status;
  std::optional<std::string> original_body;
  std::string detail;  // why, for operators and the evidence row

  bool settles() const { return outcome != OperationState::unknown; }
};

// found -> the provider executed it: with a status_pointer, the provider's
// outcome rules applied to the original status (2xx succeeded, a definite
// rejection rejected, anything else stays held); without one, succeeded.
// not_found -> not_executed only once asked_at_ms >= last possible send +
// settle window; before that (or with no known last send) it stays held.
// Any other status, no reply, or a found body the pointers cannot read:
// stays held.
LookupDecision decide_lookup(const LookupConfig& lookup, const OutcomeRules& outcomes, const LookupInput& in);

// How lookups of one operation back off.
struct LookupBackoff {
  std::chrono::milliseconds base{1000};
  std::chrono::milliseconds cap{300000};
  // 100: full jitter, the delay is uniform in [0, ceiling]; 0: no jitter,
  // the delay is the ceiling; p: uniform in [ceiling * (100 - p) / 100, ceiling].
  unsigned jitter_percent = 100;
};

// The delay before the next lookup, after `lookups` lookups of the attempt
// (the one just made included): ceiling = min(cap, base * 2^(lookups - 1)),
// then jittered by `draw`, a uniformly random 64-bit value the caller
// supplies (tests pass fixed ones).
std::int64_t next_lookup_delay_ms(const LookupBackoff& backoff, int lookups, std::uint64_t draw);

}  // namespace gw
