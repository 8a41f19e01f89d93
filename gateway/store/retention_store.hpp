// Retention (issue #7): removes old records in small batches, each batch its
// own short READ COMMITTED transaction that skips rows another transaction
// holds (FOR UPDATE SKIP LOCKED), so an admission is never made to wait for
// it and several gateways on one database share the work without removing
// anything twice. Which operations may go at all is core/retention.hpp's
// rule, which the SQL here encodes (tests/store/retention_tests.cpp holds
// the two to each other).
#pragma once

#include "core/retention.hpp"
#include "store/authority_clock.hpp"
#include "store/pool.hpp"

#include <chrono>
#include <cstdint>

namespace gw {

// What one batch removed, and the authority time it measured ages from.
struct RemovedBatch {
  std::int64_t rows = 0;      // operations, rejections or deliveries: what the batch is for
  std::int64_t attempts = 0;  // with operations: their attempts,
  std::int64_t evidence = 0;  // evidence rows (stored replies of lookups, webhooks, operators)
  std::int64_t webhooks = 0;  // and the webhook deliveries matched to them
  std::int64_t now_ms = 0;
};

class RetentionStore {
 public:
  explicit RetentionStore(AuthorityClock& clock) : clock_(clock) {}

  // Each removes at most `limit` of the oldest rows of its kind that were
  // last changed more than `age` ago; fewer than `limit` means none are left
  // for now. All throw AuthorityUnavailable when the database cannot answer.

  // Finished operations that removable_operation allows, with their stored
  // reply, attempts, evidence and matched webhook deliveries. Held ones
  // (in_flight, unknown) are never touched, whatever their age.
  RemovedBatch remove_operations(Session& s, std::chrono::milliseconds age, unsigned limit);
  // Rows of the rejection audit.
  RemovedBatch remove_rejections(Session& s, std::chrono::milliseconds age, unsigned limit);
  // Webhook deliveries that matched no operation (unmatched, unparsable, or
  // left unprocessed), by arrival.
  RemovedBatch remove_webhooks(Session& s, std::chrono::milliseconds age, unsigned limit);

 private:
  std::int64_t cutoff(pqxx::dbtransaction& tx, std::chrono::milliseconds age, RemovedBatch& batch);

  AuthorityClock& clock_;
};

}  // namespace gw
