// The audit trail of refused protected attempts (spec section 4,
// GET /v1/admin/rejections): each refusal with the grant identity exactly as
// presented, never rewritten to the task's current epoch. The admission
// transaction's reject branch inserts its own row (insert_rejection); a
// refusal decided before any admission (a Fence-Grant that does not decode)
// can be recorded with RejectionStore::record. The listing is READ
// COMMITTED: nobody reads the table SERIALIZABLE, so its inserts add no
// serialization conflicts to admissions.
#pragma once

#include "core/codes.hpp"
#include "core/grant.hpp"
#include "store/authority_clock.hpp"
#include "store/pool.hpp"

#include <pqxx/pqxx>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace gw {

struct RejectionRecord {
  TaskScope scope;                          // the request's path
  std::optional<std::string> operation_id;  // Idempotency-Key, when it was read
  // The grant as presented (its realm, own tenant/task, owner and epoch).
  std::optional<GrantIdentity> presented;
  std::optional<std::string> fingerprint;   // raw 32 bytes, when computed
  std::string method, provider, target;
  std::optional<std::int64_t> expected_version;
  Code code = Code::ok;                     // the refusal
  std::optional<std::string> request_id;    // X-Request-Id, when the caller has one
};

// Inserts one row inside the caller's transaction, at authority time now_ms.
void insert_rejection(pqxx::transaction_base& tx, const RejectionRecord& rejection, std::int64_t now_ms);

struct RecordedRejection {
  std::int64_t id = 0;
  std::int64_t recorded_ms = 0;
  RejectionRecord rejection;
  std::string code_name;  // as stored (a code this build no longer knows stays readable)
};

// Where the previous page ended, in the listing's order (recorded_ms, id).
struct RejectionCursor {
  std::int64_t recorded_ms = 0;
  std::int64_t id = 0;
};

struct RejectionFilter {
  std::optional<std::string> tenant, task;
  std::optional<Code> code;
  std::optional<std::int64_t> since_ms;       // recorded at or after
  std::optional<std::int64_t> newer_than_ms;  // recorded at most this long ago (authority time)
  unsigned limit = 100;
  std::optional<RejectionCursor> after;
};

struct RejectionPage {
  std::vector<RecordedRejection> rejections;  // newest first
  std::int64_t now_ms = 0;                    // authority time of the listing
  bool more = false;                          // another page follows the last row
};

class RejectionStore {
 public:
  explicit RejectionStore(AuthorityClock& clock) : clock_(clock) {}

  // Both throw AuthorityUnavailable when the database cannot answer.
  void record(Session& s, const RejectionRecord& rejection);
  RejectionPage list(Session& s, const RejectionFilter& filter);

 private:
  AuthorityClock& clock_;
};

}  // namespace gw
