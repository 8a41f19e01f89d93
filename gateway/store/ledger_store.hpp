// The operation ledger's two transactions (spec section 3): admission, the
// linearization point after which a request may be forwarded, and outcome,
// which records what the provider did. Both SERIALIZABLE; the outcome never
// writes the owner row, so it does not turn admissions into conflicts.
#pragma once

#include "core/grant.hpp"
#include "core/ledger.hpp"
#include "store/authority_clock.hpp"
#include "store/pool.hpp"
#include "store/prepared.hpp"
#include "store/ledger_addresses.hpp"
#include "store/task_snapshot.hpp"
#include "store/transaction.hpp"

#include <optional>
#include <string>
#include <tuple>
#include <vector>

namespace gw {

struct AdmissionRequest {
  TaskScope scope;
  GrantToken token;
  std::string operation_id;
  std::string fingerprint;  // raw 32 bytes, core/fingerprint.hpp
  std::string method;
  std::string provider;
  std::string target;
  std::int64_t expected_version = 0;
  // How long the forward may take (the provider's timeouts plus a margin):
  // past admission time plus this, an attempt still in flight is abandoned.
  std::int64_t forward_budget_ms = 0;
  // The request's X-Request-Id, kept with a refusal in the rejection audit.
  std::optional<std::string> request_id = std::nullopt;
};

// Where an admission wrote its operation row (PostgreSQL row address,
// ctid), so that the outcome reads and updates exactly that row without a
// lookup in an index other tasks insert into. An address is only a hint: a
// row that moved since is found by its key instead.
struct AdmittedRows {
  std::string operation;
  // The task's version the admission saw: while its operation is open
  // nothing else moves it, so its outcome is written expecting it.
  std::int64_t version = 0;
  // Where the admission left the task's ledger row (store/ledger_addresses.hpp):
  // the outcome reads and writes it there.
  std::optional<std::string> ledger = std::nullopt;
};

struct AdmissionResult {
  AdmissionDecision decision;
  int attempt = 0;             // admitted: the attempt number now in flight
  std::string upstream_key;    // admitted: Idempotency-Key to send upstream
  std::string realm;
  std::int64_t version = 0;    // the task's business version as read
  std::optional<StoredOperation> recorded;  // replay: what to send back
  std::optional<AdmittedRows> rows;         // admitted by admit_if_new_sql
};

struct OutcomeRecord {
  TaskScope scope;
  std::string operation_id;
  int attempt = 0;
  OperationState state = OperationState::unknown;
  std::optional<RecordedResponse> response;  // the provider's reply, if one arrived
  std::string detail;                        // why, for operators
  std::optional<AdmittedRows> rows = std::nullopt;
};

struct OutcomeResult {
  bool recorded = false;       // false: the attempt was no longer in flight
  std::int64_t version = 0;    // the task's business version after the outcome
  // Whether the admitting grant is still current: only then may its bearer
  // see the result (rules 2-6 at reply time); otherwise the code to answer.
  Code reply_gate = Code::ok;
};

// An operation the sweep found in flight past its forward deadline and
// declared unknown (held, reason forward_abandoned).
struct SweptOperation {
  TaskScope scope;
  std::string operation_id;
  int attempt = 0;
  std::string provider;
  std::optional<std::int64_t> forward_deadline_ms;
  std::int64_t swept_at_ms = 0;
};

// An operation's receipt, for its task's current owner only.
struct ReceiptResult {
  Code code = Code::ok;  // the grant check, or not_found
  std::optional<StoredOperation> operation;
};

// An outcome's reply as the statements' parameters, built once per
// outcome: the reply's body is copied into it once.
struct OutcomeColumns {
  std::string state;
  std::optional<unsigned> status;
  std::optional<std::string> headers, sha;
  std::optional<std::int64_t> length;
  pqxx::binarystring body{std::string()};
  std::optional<std::string> held;
  explicit OutcomeColumns(const OutcomeRecord& out) : state(name(out.state)) {
    if (out.response) {
      status = out.response->status;
      headers = out.response->headers_json;
      sha = out.response->body_sha256;
      length = out.response->body_length;
      body = pqxx::binarystring(out.response->body);
    }
    if (out.state == OperationState::unknown) held = std::string(name(HeldReason::outcome_unknown));
  }
};

// The usual admission, a new key under the task's current grant, as one
// statement sent alone (autocommit) that reads the task and inserts the
// operation. Its answer is nullopt when it inserted nothing (the key
// exists, or the rules refuse): the full admission follows in a transaction.
struct NewAdmission {
  Statement statement;
  const AdmissionRequest& request;
  std::string upstream_key;
  std::int64_t high_water = 0;
  pqxx::binarystring fingerprint, secret_hash;
  bool names_task = false;  // the grant names this task
  AuthorityClock* clock = nullptr;  // observes the authority time the answer carries
  std::optional<std::string> ledger_at;  // where the ledger row was last written
  LedgerAddresses* addresses = nullptr;  // told where the answer left it
  auto args() const {
    const auto& id = request.token.identity;
    return std::tie(request.scope.tenant, request.scope.task, request.operation_id, high_water, fingerprint,
                    request.method, request.provider, request.target, request.expected_version, upstream_key,
                    id.realm, id.owner, id.epoch, request.forward_budget_ms, secret_hash, names_task, ledger_at);
  }
  // What its one row (libpqxx's or store/pg_result.hpp's) means, with the
  // task as read kept in `snap` for the full decision that may follow.
  // Defined for both row types in ledger_store.cpp.
  template <class Row>
  std::optional<AdmissionResult> answer(const Row& row, TaskSnapshot& snap) const;
  template <class Row>
  std::optional<AdmissionResult> answer(const Row& row) const {
    TaskSnapshot snap;
    return answer(row, snap);
  }
  static std::optional<AdmissionResult> refused(const std::string&) { return std::nullopt; }
};
static_assert(OneStatementDecision<NewAdmission, pqxx::row>);

// The usual outcome, of the attempt in flight at the rows its admission
// wrote, as one statement sent alone (autocommit) that reads the task and
// writes the outcome only if that attempt is still the one in flight. Its
// answer is nullopt when it wrote nothing: the outcome is then recorded in
// a transaction, from a fresh read.
struct OutcomeAtRows {
  Statement statement;
  const OutcomeRecord& outcome;
  const GrantToken& admitted_by;
  OutcomeColumns columns;
  TaskLedger next;  // the ledger once recorded
  std::optional<std::int64_t> committed;
  std::int64_t high_water = 0;
  AuthorityClock* clock = nullptr;     // observes the authority time the answer carries
  LedgerAddresses* addresses = nullptr;  // told where the answer left the ledger row
  // Set by answer(): the ledger row was at the admission's address. When it
  // was not, the snapshot's ledger is empty and must not be written from.
  bool ledger_found = false;
  auto args() const {
    const auto& rows = *outcome.rows;
    const auto& c = columns;
    return std::tie(outcome.scope.tenant, outcome.scope.task, outcome.operation_id, high_water, rows.operation,
                    c.state, committed, c.status, c.headers, c.body, c.sha, c.length, outcome.attempt,
                    outcome.detail, next.version, next.open_operation, c.held, rows.version, rows.ledger);
  }
  // Defined for both row types in ledger_store.cpp.
  template <class Row>
  std::optional<OutcomeResult> answer(const Row& row, TaskSnapshot& snap);
  template <class Row>
  std::optional<OutcomeResult> answer(const Row& row) {
    TaskSnapshot snap;
    return answer(row, snap);
  }
  static std::optional<OutcomeResult> refused(const std::string&) { return std::nullopt; }
};
static_assert(OneStatementDecision<OutcomeAtRows, pqxx::row>);

class LedgerStore {
 public:
  explicit LedgerStore(AuthorityClock& clock) : clock_(clock) {}

  // Both throw AuthorityUnavailable when the database cannot answer.
  // A refusal (Admission::reject) is also recorded in the rejection audit
  // (store/rejection_store.hpp), in the same transaction.
  // Each decision alone (its own SERIALIZABLE transaction), or inside one
  // the caller opened and commits (a shared transaction, database.group_max).
  // `new_tried`: NewAdmission was already sent alone and answered nullopt
  // (service/db/database.hpp, decide_direct), so only the full admission is left.
  AdmissionResult admit(Session& s, const AdmissionRequest& request, bool new_tried = false);
  AdmissionResult admit(pqxx::dbtransaction& tx, const AdmissionRequest& request);
  // `at_rows_tried`: OutcomeAtRows was already sent alone and answered
  // nullopt (decide_direct), so only the full record is left.
  OutcomeResult record_outcome(Session& s, const OutcomeRecord& outcome, const GrantToken& admitted_by,
                               bool at_rows_tried = false);
  OutcomeResult record_outcome(pqxx::dbtransaction& tx, const OutcomeRecord& outcome, const GrantToken& admitted_by);
  ReceiptResult receipt(Session& s, const TaskScope& scope, const GrantToken& token,
                        const std::string& operation_id);
  // Declares up to `limit` abandoned forwards unknown, each exactly once
  // even with several gateways sweeping one database (row locks, SKIP
  // LOCKED). READ COMMITTED: it never takes SERIALIZABLE predicate locks.
  std::vector<SweptOperation> sweep_abandoned(Session& s, unsigned limit);

  // The usual admission, and the usual outcome, as statements to send alone.
  NewAdmission new_admission(const AdmissionRequest& request);
  OutcomeAtRows outcome_at_rows(const OutcomeRecord& outcome, const GrantToken& admitted_by);

 private:
  // Writes what `decision` (made on `snap`) says: the rejection row, the
  // operation and its attempt, or nothing for a replay.
  AdmissionResult apply_admission(pqxx::dbtransaction& tx, const AdmissionRequest& request, TaskSnapshot snap,
                                  const AdmissionDecision& decision);
  // A new key admitted under the task's current grant, in the one statement
  // that reads the task; nullopt (with the snapshot read) when it inserted
  // nothing. In a transaction, or alone (autocommit).
  std::optional<AdmissionResult> admit_if_new(pqxx::transaction_base& t, const AdmissionRequest& request,
                                              TaskSnapshot& snap);
  AuthorityClock& clock_;
  // Shared by every thread that decides: where the usual admission reads
  // each task's ledger row.
  LedgerAddresses addresses_;
};

}  // namespace gw
