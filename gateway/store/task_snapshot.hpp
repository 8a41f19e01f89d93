// One round trip that reads everything a decision about a task needs: the
// realm, authority time, the owner row, the task's ledger row and (for the
// ledger) the operation under the request's key. Point reads by primary key
// keep SERIALIZABLE predicate locks narrow.
#pragma once

#include "core/grant.hpp"
#include "core/ledger.hpp"
#include "core/ownership.hpp"
#include "core/resolution.hpp"
#include "store/authority_clock.hpp"

#include <pqxx/pqxx>

#include <optional>
#include <string>

namespace gw {

struct RecordedResponse {
  unsigned status = 0;
  std::string headers_json;  // [[name, value], ...]
  std::string body;
  std::string body_sha256;   // of the whole provider body, hex
  std::int64_t body_length = 0;
};

// How a held operation was settled from evidence instead of its own
// forward's reply (core/resolution.hpp).
struct OperationResolution {
  EvidenceSource source = EvidenceSource::operator_;
  std::int64_t resolved_ms = 0;
  std::int64_t evidence_id = 0;  // the operation_evidence row that settled it
};

struct StoredOperation {
  std::string fingerprint;  // raw 32 bytes
  OperationState state = OperationState::in_flight;
  int attempts = 0;
  std::string upstream_key;
  std::string method, provider, target;
  std::int64_t expected_version = 0;
  std::optional<std::int64_t> committed_version;
  // The provider's reply that settled the operation, to replay. Never set
  // for an operation settled by evidence: a reply kept from its unknown
  // outcome did not settle it (the operator detail still shows it).
  std::optional<RecordedResponse> response;
  std::optional<std::int64_t> forward_deadline_ms;  // of the current attempt
  std::optional<HeldReason> held_reason;            // when unknown
  std::optional<OperationResolution> resolution = std::nullopt;  // settled by evidence
};

struct TaskSnapshot {
  std::string realm;
  std::int64_t now_ms = 0;
  std::optional<OwnerRow> owner;
  TaskLedger ledger;
  std::optional<StoredOperation> operation;
};

// How the snapshot reads the operation: not at all, by its key ($3; none
// when NULL), or at its row address ($5), a TID scan that locks that row
// only, not an index page. At its address it reads only what settling the
// attempt there weighs (state, attempts, held reason): the outcome's fast
// path, whose fallback reads the rest by key when the row has moved. The
// snapshot's other operation fields are then left empty.
enum class OperationRead { none, by_key, at_location };

// Where the snapshot finds the task's owner and ledger rows: by key, or
// first at the addresses its statement's parameters `task` and `ledger`
// name (store/task_addresses.hpp), by key only when the row there is not
// the task's or not visible. Found at its address, a row is read by a TID
// scan, which locks that row alone; the key's B-tree is then not read, and
// no page of it is locked.
struct AddressParams {
  int task = 0, ledger = 0;
};

// The snapshot as a query, for a statement that reads a task and acts on it
// in the same round trip: $1 tenant, $2 task, $3 key, $4 the clock's high
// water, $5 the operation's address; now_ms, version, open_op, and with
// `at` task_at and ledger_at (where each row was found, tid) are named.
// Its row parses with parse_snapshot, given the same OperationRead; with
// `at`, the two addresses follow at snapshot_width(operation) and the next
// one; the columns after those are the statement's own.
std::string snapshot_sql(const AuthorityClock& clock, OperationRead operation,
                         std::optional<AddressParams> at = std::nullopt);
// The task's eight columns (realm to open_op), then the operation's: none,
// all 19, or the three settling weighs. No column a statement's caller
// does not read: PostgreSQL carries each through every node of the plan,
// and describes and sends it, on every execution.
constexpr int snapshot_width(OperationRead operation) {
  switch (operation) {
    case OperationRead::none: return 8;
    case OperationRead::by_key: return 27;
    case OperationRead::at_location: return 11;
  }
  return 27;
}
// `Row`: libpqxx's, or store/pg_result.hpp's.
template <class Row>
TaskSnapshot parse_snapshot(const Row& row, AuthorityClock& clock, OperationRead operation);

TaskSnapshot read_task(pqxx::transaction_base& tx, AuthorityClock& clock, const TaskScope& scope,
                       const std::optional<std::string>& operation_id);

}  // namespace gw
