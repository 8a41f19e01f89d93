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

// Where a statement's snapshot finds the task's ledger row, given the
// parameter that holds the row's address (store/ledger_addresses.hpp):
// by key, returning where it found it (the parameter is then NULL: no
// address is known), or at that address only, a TID scan that locks the row
// alone and reads no page of task_ledger_pkey. At an address that no longer
// holds the task's row, visible to the snapshot, the row is not found.
struct LedgerAt {
  enum Read { by_key, at_address };
  int param = 0;
  Read read = at_address;
};

// The snapshot as a query, for a statement that reads a task and acts on it
// in the same round trip: $1 tenant, $2 task, $3 key, $4 the clock's high
// water, $5 the operation's address; now_ms, version and open_op are named,
// and with `ledger` the ledger row's address, ledger_at (tid).
// Its row parses with parse_snapshot, given the same OperationRead; with
// `ledger`, ledger_at follows at snapshot_width(operation); the columns after
// that are the statement's own.
std::string snapshot_sql(const AuthorityClock& clock, OperationRead operation,
                         std::optional<LedgerAt> ledger = std::nullopt);
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
