// The operator's view of held operations (spec section 4): every operation
// that holds its task, in flight or unknown, oldest first, with filters and
// keyset pagination. A listing, not a decision: READ COMMITTED, so its scan
// of the unresolved index takes no SERIALIZABLE predicate locks.
#pragma once

#include "core/grant.hpp"
#include "core/ledger.hpp"
#include "store/authority_clock.hpp"
#include "store/pool.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace gw {

// Where the previous page ended, in the listing's order.
struct HeldCursor {
  std::int64_t since_ms = 0;
  std::string tenant, task, operation_id;
};

struct HeldFilter {
  std::optional<std::string> tenant, task, provider;
  std::optional<OperationState> state;     // in_flight or unknown
  std::optional<HeldReason> reason;
  std::optional<std::int64_t> older_than_ms;  // held at least this long
  unsigned limit = 100;
  std::optional<HeldCursor> after;
};

struct HeldOperation {
  TaskScope scope;
  std::string operation_id;
  OperationState state = OperationState::in_flight;
  std::optional<HeldReason> reason;  // null while in flight
  std::string provider, method, target, upstream_key;
  int attempts = 0;
  std::int64_t since_ms = 0;  // admitted (in flight) or became unknown
  std::optional<std::int64_t> forward_deadline_ms;
};

// Why an operation holds its task, in the words docs/operations.md explains:
// forwarding, forward_abandoned (in flight past its deadline), or the held
// reason of an unknown one.
std::string why_held(const HeldOperation& op, std::int64_t now_ms);

struct HeldPage {
  std::vector<HeldOperation> operations;
  std::int64_t now_ms = 0;  // authority time of the listing
  bool more = false;        // another page follows the last row
};

// Held operations counted by state, for GET /metrics.
struct HeldSummary {
  struct State {
    OperationState state = OperationState::in_flight;
    std::int64_t count = 0;
    std::int64_t oldest_since_ms = 0;  // the longest held one's since_ms
  };
  std::vector<State> states;  // only states with operations
  std::int64_t now_ms = 0;    // authority time of the count
};

class HeldStore {
 public:
  explicit HeldStore(AuthorityClock& clock) : clock_(clock) {}
  // Throws AuthorityUnavailable when the database cannot answer.
  HeldPage list(Session& s, const HeldFilter& filter);
  // One READ COMMITTED scan of the unresolved index: cheap enough for every scrape.
  HeldSummary summary(Session& s);

 private:
  AuthorityClock& clock_;
};

}  // namespace gw
