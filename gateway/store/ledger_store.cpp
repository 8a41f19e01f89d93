#include "store/ledger_store.hpp"

#include "core/digest.hpp"
#include "core/fingerprint.hpp"
#include "core/ownership.hpp"
#include "store/authority_store.hpp"
#include "store/pg_result.hpp"
#include "store/prepared.hpp"
#include "store/rejection_store.hpp"

#include <pqxx/pqxx>

#include <functional>
#include <string_view>

namespace gw {
namespace {

constexpr Statement admit_new{"gw_admit_new", R"(
WITH op AS (INSERT INTO operations (tenant, task, op_id, fingerprint, method, provider, target,
                                    expected_version, upstream_key, state, attempts, created_ms, updated_ms,
                                    forward_deadline_ms, attempt_realm, attempt_owner, attempt_epoch,
                                    attempt_admitted_ms)
            VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, 'in_flight', 1, $10, $10, $10::bigint + $14::bigint,
                    $11, $12, $13, $10))
UPDATE task_ledger SET open_op = $3 WHERE tenant = $1 AND task = $2)"};

// How the usual admission and outcome find and write the task's ledger row
// (always there by then: the statements' conditions need it, and no ledger
// row is ever deleted). The write is `set` on the row, for each row of the
// CTE `rows`, RETURNING `returning` (the row's new address among them, for
// store/ledger_addresses.hpp).
//  - by_key: the snapshot reads the row by key and the UPDATE finds it the
//    same way, through task_ledger_pkey: the first decision on a task this
//    gateway has no address for, and one whose address missed.
//  - at_address: read at its last address and updated at the address found,
//    TID scans that lock the row alone and read no index page.
//  - at_address_pruning: read at its address, written by an upsert whose ON
//    CONFLICT finds the row through the primary key with a dirty snapshot,
//    which takes no SERIALIZABLE read lock on the index page either. It is
//    there for its visit of the row's heap page through the index, where
//    PostgreSQL prunes the page's dead versions: a TID scan never does, so
//    with addresses alone nothing but VACUUM would clear the two versions
//    each write leaves, the page would fill, and each next update would
//    move the row and insert its key again (measured: 3,800 moves in 45 s
//    at 64 agents, the ledger three times its size, 5% to 7% fewer writes
//    per second). The visit costs a lookup and a row lock, so every other
//    admission makes it, one statement in four (prunes_ledger). It prunes
//    only if no one else holds the page at that moment, its own statement
//    included: in the admission the snapshot's TID scan has let go of the
//    page by then, in the outcome it has not (measured: an outcome's visit
//    never pruned), so the outcome never makes it.
enum class LedgerPath { by_key, at_address, at_address_pruning };

std::string ledger_write_sql(LedgerPath path, const char* rows, const std::string& set, const char* returning) {
  const std::string source = std::string("EXISTS (SELECT 1 FROM ") + rows + ")";
  switch (path) {
    case LedgerPath::by_key:
      return "UPDATE task_ledger SET " + set + " WHERE tenant = $1 AND task = $2 AND " + source + " RETURNING " +
             returning;
    case LedgerPath::at_address:
      return "UPDATE task_ledger SET " + set +
             " WHERE ctid = (SELECT ledger_at FROM s) AND tenant = $1 AND task = $2 AND " + source + " RETURNING " +
             returning;
    case LedgerPath::at_address_pruning:
      break;
  }
  return std::string("INSERT INTO task_ledger (tenant, task) SELECT $1, $2 FROM ") + rows +
         " ON CONFLICT (tenant, task) DO UPDATE SET " + set + " RETURNING " + returning;
}

LedgerAt ledger_at(int param, LedgerPath path) {
  return {param, path == LedgerPath::by_key ? LedgerAt::by_key : LedgerAt::at_address};
}

// Whether this admission visits the ledger row's page through its key
// (LedgerPath::at_address_pruning): every other one, so about four updates
// of the row apart, where a page has room for a dozen more versions once
// PostgreSQL would prune it (less than a tenth free). Spread over the tasks
// by their names, so that the tasks sharing a page (all of them on a fresh
// database) do not all skip the visit together.
bool prunes_ledger(const TaskScope& scope, std::int64_t version) {
  const auto spread = std::hash<std::string_view>{}(scope.task) + static_cast<std::size_t>(version);
  return spread % 2 == 0;
}

// The whole admission of a new key in one round trip: the task is read
// (snapshot_sql, no operation) and the operation inserted in the same
// statement, only if the grant is the task's current one ($11-$13, $15 its
// secret's hash, $16 whether it names this task) and the ledger takes the
// key as new ($9). These conditions only narrow what decide_admission
// allows: the caller weighs the snapshot returned with the rules and
// refuses to commit an insert they would not have made, and anything not
// inserted here is decided as before, with the key read.
// The key is not looked up first: a SERIALIZABLE lookup of a missing key
// locks the index page where it would be, which is the page every other
// task's new key is inserted into (with keys named in sequence, always), and
// those conflicts abort unrelated admissions. ON CONFLICT's own check takes
// no such lock; two admissions of one key still exclude each other through
// the unique index (the later one waits, then fails to serialize and is
// tried again). No row inserted: the key exists, or the rules refuse.
// The ledger row is read where it was last written ($17, when the gateway
// knows: store/ledger_addresses.hpp) and written as ledger_write_sql says,
// so a decision on a task written before takes no lock on a page of the
// ledger's index; the row's address after the write is returned for its
// outcome.
std::string admit_if_new_sql(const AuthorityClock& clock, LedgerPath ledger) {
  return R"(
WITH s AS ()" + snapshot_sql(clock, OperationRead::none, ledger_at(17, ledger)) + R"(),
     op AS (INSERT INTO operations (tenant, task, op_id, fingerprint, method, provider, target,
                                    expected_version, upstream_key, state, attempts, created_ms, updated_ms,
                                    forward_deadline_ms, attempt_realm, attempt_owner, attempt_epoch,
                                    attempt_admitted_ms)
            SELECT $1, $2, $3, $5, $6, $7, $8, $9::bigint, $10, 'in_flight', 1, s.now_ms, s.now_ms,
                   s.now_ms + $14::bigint, $11::text, $12::text, $13::bigint, s.now_ms
            FROM s
            WHERE $16::boolean AND )" + std::string(serializable_guard) + R"(
              AND s.realm = $11 AND s.owner = $12 AND s.epoch = $13 AND s.secret_hash = $15
              AND s.now_ms < s.expires_at_ms AND s.open_op IS NULL AND s.version = $9
              AND s.version < 9223372036854775807
            ON CONFLICT (tenant, task, op_id) DO NOTHING
            RETURNING ctid),
     l AS ()" + ledger_write_sql(ledger, "op", "open_op = $3", "ctid") + R"()
SELECT s.*, (SELECT ctid::text FROM op), (SELECT ctid::text FROM l) FROM s)";
}

// Recovery of a not_executed operation: same key, same fingerprint, next
// attempt. The state was checked in the snapshot: the row is found by its
// primary key alone (see outcome_sql). The attempt it supersedes moves to
// earlier_attempts: both parts of the statement see the row as it was. A
// resolution that made it not_executed belongs to the attempts before this
// one (it stays in operation_evidence): the new attempt's own outcome will
// settle it.
constexpr Statement readmit{"gw_readmit", R"(
WITH was AS (INSERT INTO earlier_attempts (tenant, task, op_id, attempt, realm, owner, epoch, admitted_ms, outcome,
                                           outcome_ms, upstream_status, detail)
             SELECT tenant, task, op_id, attempts, attempt_realm, attempt_owner, attempt_epoch,
                    attempt_admitted_ms, attempt_outcome, attempt_outcome_ms, attempt_upstream_status,
                    attempt_detail
             FROM operations WHERE tenant = $1 AND task = $2 AND op_id = $3),
     op AS (UPDATE operations SET state = 'in_flight', attempts = attempts + 1, updated_ms = $4,
                                  forward_deadline_ms = $4::bigint + $8::bigint,
                                  resolution = NULL,
                                  attempt_realm = $5, attempt_owner = $6, attempt_epoch = $7,
                                  attempt_admitted_ms = $4, attempt_outcome = NULL, attempt_outcome_ms = NULL,
                                  attempt_upstream_status = NULL, attempt_detail = NULL
            WHERE tenant = $1 AND task = $2 AND op_id = $3
            RETURNING attempts),
     l AS (UPDATE task_ledger SET open_op = $3 WHERE tenant = $1 AND task = $2 AND EXISTS (SELECT 1 FROM op))
SELECT attempts FROM op)"};

// The columns every statement that records an outcome sets, from its own
// parameter numbers: the operation's `state` and `held` reason, its reply
// from `reply` on (committed_version, response_status, _headers, _body,
// _sha256 as hex, _length: six in a row), and its current attempt's outcome
// (the same state, the provider's status, the forwarder's `detail`); `now`
// is the time expression the statement writes at.
std::string param(int n) {
  std::string p(1, '$');  // not "$" + to_string(n): GCC 12 warns of a false overlap (-Wrestrict)
  p += std::to_string(n);
  return p;
}

std::string outcome_columns(int state, std::string_view now, int reply, int held, int detail) {
  // The state is text: it goes to two domains, and one parameter cannot be deduced as both.
  const auto at = std::string(now), named = param(state) + "::text";
  return "state = " + named + ", updated_ms = " + at + ", committed_version = " + param(reply) +
         ", response_status = " + param(reply + 1) + ", response_headers = " + param(reply + 2) +
         "::jsonb, response_body = " + param(reply + 3) + ", response_sha256 = decode(" + param(reply + 4) +
         ", 'hex'), response_length = " + param(reply + 5) + ", held_reason = " + param(held) +
         ", attempt_outcome = " + named + ", attempt_outcome_ms = " + at +
         ", attempt_upstream_status = " + param(reply + 1) + ", attempt_detail = " + param(detail);
}

// Where an outcome write finds its operation row: by primary key, or at the
// address (ctid) its admission returned (AdmittedRows), a TID scan that
// reads no index page.
enum class RowsAt { key, address };

// The outcome of an operation (its current attempt's with it) and the
// ledger, once the caller has decided it from a snapshot. Only ever by
// primary key or address: a condition on `state` here lets the planner pick
// the partial index operations_unresolved once statistics exist, and a scan
// of it takes SERIALIZABLE predicate locks on every page that every
// admission inserts into (measured: most admissions of other tasks then
// failed to serialize, bench/results.md). The snapshot checks the state;
// the attempt number ($12) is a guard. Returns the version written, and
// no row when the operation was not written.
std::string outcome_write_sql(RowsAt at) {
  const bool by_address = at == RowsAt::address;
  return R"(
WITH o AS (UPDATE operations SET )" + outcome_columns(4, "$5", 6, 16, 13) + R"(
           WHERE )" + (by_address ? "ctid = $17::tid AND " : "") + R"(tenant = $1 AND task = $2 AND op_id = $3
             AND attempts = $12
           RETURNING 1)
UPDATE task_ledger SET version = $14, open_op = $15
FROM o
WHERE tenant = $1 AND task = $2
RETURNING version)";
}

// outcome_write_sql's statement and its arguments, by name.
struct OutcomeWrite {
  const OutcomeRecord& outcome;
  const OutcomeColumns& columns;
  std::int64_t now_ms = 0;
  std::optional<std::int64_t> committed;  // the version a success committed
  TaskLedger next;                        // the ledger once recorded

  static Statement statement_for(RowsAt at) {
    static const std::string by_key = outcome_write_sql(RowsAt::key), by_address = outcome_write_sql(RowsAt::address);
    return at == RowsAt::key ? Statement{"gw_outcome", by_key.c_str()} : Statement{"gw_outcome_at", by_address.c_str()};
  }
  auto by_key() const {
    const auto& c = columns;
    return std::tie(outcome.scope.tenant, outcome.scope.task, outcome.operation_id, c.state, now_ms, committed,
                    c.status, c.headers, c.body, c.sha, c.length, outcome.attempt, outcome.detail, next.version,
                    next.open_operation, c.held);
  }
  // At the admitted operation row's address when `at` is given, else by key.
  pqxx::result exec(pqxx::transaction_base& tx, const AdmittedRows* at) const {
    const auto run = [&](RowsAt where, const auto& args) {
      const auto statement = statement_for(where);
      return std::apply([&](const auto&... a) { return exec_prepared(tx, statement, a...); }, args);
    };
    if (!at) return run(RowsAt::key, by_key());
    return run(RowsAt::address, std::tuple_cat(by_key(), std::tie(at->operation)));
  }
};

// The forwarder's outcome for the row its admission wrote, in one round
// trip: the task is read with the operation at its address (snapshot_sql)
// and the outcome written in the same statement, only if that attempt is
// still the one in flight ($13) and the ledger is as the admission left it
// ($18, and the key open). These conditions only narrow what the rules
// allow: the caller checks the snapshot returned against them and refuses
// to commit a write they would not have made, and anything not written
// here is recorded as before, from the same snapshot. The ledger row is
// read where the admission left it ($19), as admit_if_new_sql does.
// Returns the version written and the ledger row's new address.
std::string outcome_if_in_flight_sql(const AuthorityClock& clock, LedgerPath ledger) {
  return R"(
WITH s AS ()" + snapshot_sql(clock, OperationRead::at_location, ledger_at(19, ledger)) + R"(),
     o AS (UPDATE operations SET )" + outcome_columns(6, "s.now_ms", 7, 17, 14) + R"(
           FROM s
           WHERE operations.ctid = $5::tid AND operations.tenant = $1 AND operations.task = $2
             AND operations.op_id = $3 AND s.state = 'in_flight' AND s.attempts = $13 AND s.version = $18
             AND s.open_op = $3 AND )" + std::string(serializable_guard) + R"(
           RETURNING 1),
     l AS ()" + ledger_write_sql(ledger, "o", "version = $15, open_op = $16", "version, ctid") + R"()
SELECT s.*, (SELECT version FROM l), (SELECT ctid::text FROM l) FROM s)";
}

// What else became known about an operation, beside the record that settled it.
constexpr Statement evidence{"gw_late_evidence", R"(
INSERT INTO operation_evidence (tenant, task, op_id, attempt, source, outcome, upstream_status, detail,
                                response_sha256, response_length, recorded_ms)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, decode($9, 'hex'), $10, $11))"};

// READ COMMITTED on purpose: FOR UPDATE SKIP LOCKED hands each due row to
// one sweeper, the UPDATE re-checks the state on the locked row (a record
// that won the race is left alone), and a SERIALIZABLE outcome transaction
// that loses it fails on the concurrent update and retries, seeing the
// sweep. The in-flight ones are found through operations_unresolved
// (schema/012), which no predicate lock covers at READ COMMITTED.
std::string sweep_sql(const AuthorityClock& clock) {
  return R"(
WITH now AS (SELECT )" + clock.now_sql(1) + R"( AS ms FROM authority a),
     due AS (SELECT o.tenant, o.task, o.op_id FROM operations o, now
             WHERE o.state = 'in_flight' AND (o.forward_deadline_ms IS NULL OR o.forward_deadline_ms < now.ms)
             ORDER BY o.forward_deadline_ms NULLS FIRST LIMIT $2
             FOR UPDATE OF o SKIP LOCKED),
     swept AS (UPDATE operations o SET state = 'unknown', held_reason = 'forward_abandoned', updated_ms = now.ms,
                                       attempt_outcome = 'unknown', attempt_outcome_ms = now.ms,
                                       attempt_detail = 'forward abandoned: still in flight past its deadline'
               FROM due, now
               WHERE o.tenant = due.tenant AND o.task = due.task AND o.op_id = due.op_id AND o.state = 'in_flight'
               RETURNING o.tenant, o.task, o.op_id, o.attempts, o.provider, o.forward_deadline_ms, now.ms AS now_ms),
     ev AS (INSERT INTO operation_evidence (tenant, task, op_id, attempt, source, outcome, detail, recorded_ms)
            SELECT tenant, task, op_id, attempts, 'sweep', 'unknown',
                   'in flight past its forward deadline (' || coalesce(forward_deadline_ms::text, 'none') ||
                   '): the forwarding process stopped or lost the database', now_ms
            FROM swept)
SELECT tenant, task, op_id, attempts, provider, forward_deadline_ms, now_ms FROM swept)";
}

// What decide_admission weighs, from the request and the task as read.
AdmissionInput admission_input(const AdmissionRequest& rq, const TaskSnapshot& snap) {
  AdmissionInput in;
  in.grant_check = check_grant(rq.token, snap.realm, rq.scope, snap.owner, snap.now_ms);
  if (snap.operation)
    in.existing = ExistingOperation{
        snap.operation->fingerprint, snap.operation->state,
        forward_abandoned(snap.operation->state, snap.operation->forward_deadline_ms, snap.now_ms),
        snap.operation->response.has_value()};
  in.operation_id = rq.operation_id;
  in.fingerprint = rq.fingerprint;
  in.ledger = snap.ledger;
  in.expected_version = rq.expected_version;
  return in;
}

}  // namespace

AdmissionResult LedgerStore::admit(Session& s, const AdmissionRequest& rq, bool new_tried) {
  // The usual admission, a new key under the task's current grant, commits
  // as its one statement answers (autocommit); anything else is decided in
  // a transaction, from a fresh read.
  TaskSnapshot snap;
  if (!new_tried)
    if (auto admitted = autocommit(s, [&](pqxx::transaction_base& t) { return admit_if_new(t, rq, snap); }))
      return std::move(*admitted);
  return serializable(s, [&](pqxx::dbtransaction& tx) { return admit(tx, rq); });
}

AdmissionResult LedgerStore::admit(pqxx::dbtransaction& tx, const AdmissionRequest& rq) {
  // Decided first as if the key were new, without reading it, in the same
  // statement that reads the task (admit_if_new_sql). The operation is read
  // only when the key turns out to exist, or when the ledger refuses and an
  // operation under the key would change the answer (decide_admission weighs
  // it before the ledger); a grant refusal comes before both.
  TaskSnapshot snap;
  if (auto admitted = admit_if_new(tx, rq, snap)) return std::move(*admitted);
  const auto in = admission_input(rq, snap);
  const auto first = decide_admission(in);
  if (first.action != Admission::admit_new && in.grant_check != Code::ok)
    return apply_admission(tx, rq, std::move(snap), first);
  snap = read_task(tx, clock_, rq.scope, rq.operation_id);
  const auto decision = decide_admission(admission_input(rq, snap));
  return apply_admission(tx, rq, std::move(snap), decision);
}

NewAdmission LedgerStore::new_admission(const AdmissionRequest& rq) {
  using enum LedgerPath;
  static const AuthorityClock wall(ClockSource::database), manual(ClockSource::manual);
  static const std::string statements[2][3] = {
      {admit_if_new_sql(wall, by_key), admit_if_new_sql(wall, at_address),
       admit_if_new_sql(wall, at_address_pruning)},
      {admit_if_new_sql(manual, by_key), admit_if_new_sql(manual, at_address),
       admit_if_new_sql(manual, at_address_pruning)}};
  static constexpr const char* names[2][3] = {
      {"gw_admit_if_new", "gw_admit_if_new_at", "gw_admit_if_new_pruning"},
      {"gw_admit_if_new_manual", "gw_admit_if_new_manual_at", "gw_admit_if_new_manual_pruning"}};
  auto ledger = addresses_.find(rq.scope);
  const auto path = !ledger ? by_key : prunes_ledger(rq.scope, rq.expected_version) ? at_address_pruning : at_address;
  const int clock = clock_.manual() ? 1 : 0, variant = static_cast<int>(path);
  const auto& id = rq.token.identity;
  return NewAdmission{.statement = Statement{names[clock][variant], statements[clock][variant].c_str()},
                      .request = rq,
                      .upstream_key = upstream_idempotency_key(rq.scope.tenant, rq.scope.task, rq.operation_id),
                      .high_water = clock_.high_water(),
                      .fingerprint = pqxx::binarystring(rq.fingerprint),
                      .secret_hash = pqxx::binarystring(sha256(rq.token.secret)),
                      .names_task = id.scope == rq.scope,
                      .clock = &clock_,
                      .ledger_at = std::move(ledger),
                      .addresses = &addresses_};
}

template <class Row>
std::optional<AdmissionResult> NewAdmission::answer(const Row& row, TaskSnapshot& snap) const {
  const auto& ask = *this;
  const auto& rq = ask.request;
  // Where the ledger row was found, then the new operation row's address and
  // the ledger row's after its write.
  constexpr int found = snapshot_width(OperationRead::none), inserted = found + 1, ledger_now = found + 2;
  snap = parse_snapshot(row, *clock, OperationRead::none);
  if (row[inserted].is_null()) {
    // Not inserted: the address is kept only where the row was found (an
    // address that missed is forgotten, and the next decision reads by key).
    if (ask.addresses) ask.addresses->remember(rq.scope, row[found].template as<std::optional<std::string>>());
    return std::nullopt;
  }
  // Inserted: the statement's conditions held, and the rules must agree.
  // Sent alone it is committed already: the exception means it is never
  // forwarded, and the sweep holds its operation for an operator.
  const auto decision = decide_admission(admission_input(rq, snap));
  if (decision.action != Admission::admit_new) throw std::logic_error("an admission the rules refuse");
  AdmissionResult r;
  r.decision = decision;
  r.realm = snap.realm;
  r.version = snap.ledger.version;
  r.attempt = 1;
  r.upstream_key = ask.upstream_key;
  auto ledger = row[ledger_now].template as<std::optional<std::string>>();
  if (ask.addresses) ask.addresses->remember(rq.scope, ledger);
  r.rows = AdmittedRows{row[inserted].template as<std::string>(), snap.ledger.version, std::move(ledger)};
  return r;
}
template std::optional<AdmissionResult> NewAdmission::answer(const pqxx::row&, TaskSnapshot&) const;
template std::optional<AdmissionResult> NewAdmission::answer(const PgRow&, TaskSnapshot&) const;

std::optional<AdmissionResult> LedgerStore::admit_if_new(pqxx::transaction_base& t, const AdmissionRequest& rq,
                                                         TaskSnapshot& snap) {
  const auto ask = new_admission(rq);
  return ask.answer(exec_ask(t, ask).at(0), snap);
}

AdmissionResult LedgerStore::apply_admission(pqxx::dbtransaction& tx, const AdmissionRequest& rq, TaskSnapshot snap,
                                             const AdmissionDecision& decision) {
  AdmissionResult r;
  r.decision = decision;
  r.realm = snap.realm;
  r.version = snap.ledger.version;
  const auto& id = rq.token.identity;
  switch (r.decision.action) {
    case Admission::reject:
      // The grant exactly as presented, whatever the task's epoch is now.
      insert_rejection(tx,
                       RejectionRecord{.scope = rq.scope,
                                       .operation_id = rq.operation_id,
                                       .presented = id,
                                       .fingerprint = rq.fingerprint,
                                       .method = rq.method,
                                       .provider = rq.provider,
                                       .target = rq.target,
                                       .expected_version = rq.expected_version,
                                       .code = r.decision.code,
                                       .request_id = rq.request_id},
                       snap.now_ms);
      break;
    case Admission::replay:
      r.recorded = std::move(snap.operation);
      break;
    case Admission::admit_new:
      r.attempt = 1;
      r.upstream_key = upstream_idempotency_key(rq.scope.tenant, rq.scope.task, rq.operation_id);
      exec_prepared(tx, admit_new, rq.scope.tenant, rq.scope.task, rq.operation_id,
                    pqxx::binarystring(rq.fingerprint), rq.method, rq.provider, rq.target, rq.expected_version,
                    r.upstream_key, snap.now_ms, snap.realm, id.owner, id.epoch, rq.forward_budget_ms);
      break;
    case Admission::readmit: {
      auto rows = exec_prepared(tx, readmit, rq.scope.tenant, rq.scope.task, rq.operation_id, snap.now_ms,
                                snap.realm, id.owner, id.epoch, rq.forward_budget_ms);
      r.attempt = rows.at(0)[0].as<int>();
      r.upstream_key = snap.operation->upstream_key;
      break;
    }
  }
  return r;
}

OutcomeResult LedgerStore::record_outcome(Session& s, const OutcomeRecord& out, const GrantToken& admitted_by,
                                          bool at_rows_tried) {
  // The usual outcome, of the attempt in flight at the rows its admission
  // wrote, commits as its one statement answers (autocommit); anything else
  // is recorded in a transaction, from a fresh read.
  if (out.rows && !at_rows_tried) {
    auto ask = outcome_at_rows(out, admitted_by);
    if (auto recorded =
            autocommit(s, [&](pqxx::transaction_base& t) { return ask.answer(exec_ask(t, ask).at(0)); }))
      return *recorded;
  }
  return serializable(s, [&](pqxx::dbtransaction& tx) { return record_outcome(tx, out, admitted_by); });
}

OutcomeAtRows LedgerStore::outcome_at_rows(const OutcomeRecord& out, const GrantToken& admitted_by) {
  // Its admission left the ledger row's address: at_address (a row moved
  // since by a sweep or a resolution is then not found, nothing is written,
  // and the outcome is recorded by key, in a transaction).
  using enum LedgerPath;
  static const std::string wall = outcome_if_in_flight_sql(AuthorityClock(ClockSource::database), at_address),
                           manual = outcome_if_in_flight_sql(AuthorityClock(ClockSource::manual), at_address);
  OutcomeAtRows ask{.statement = clock_.manual() ? Statement{"gw_outcome_if_in_flight_manual", manual.c_str()}
                                                : Statement{"gw_outcome_if_in_flight", wall.c_str()},
                    .outcome = out,
                    .admitted_by = admitted_by,
                    .columns = OutcomeColumns(out),
                    .next = apply_outcome(TaskLedger{out.rows->version, out.operation_id}, out.operation_id, out.state),
                    .committed = std::nullopt,
                    .high_water = clock_.high_water(),
                    .clock = &clock_,
                    .addresses = &addresses_};
  if (out.state == OperationState::succeeded) ask.committed = ask.next.version;
  return ask;
}

template <class Row>
std::optional<OutcomeResult> OutcomeAtRows::answer(const Row& row, TaskSnapshot& snap) {
  auto& ask = *this;
  const auto& out = ask.outcome;
  // Where the ledger row was found, then its new version and address.
  constexpr int found = snapshot_width(OperationRead::at_location), written = found + 1, ledger_now = found + 2;
  snap = parse_snapshot(row, *clock, OperationRead::at_location);
  ask.ledger_found = !row[found].is_null();
  if (row[written].is_null()) {
    if (ask.addresses) ask.addresses->remember(out.scope, row[found].template as<std::optional<std::string>>());
    return std::nullopt;
  }
  // Written: the statement's conditions held, and the rules must agree
  // (sent alone it is committed already, as a provider's reply it is true).
  const auto& op = snap.operation;
  if (!op || op->state != OperationState::in_flight ||
      !settles_operation(op->state, op->held_reason, op->attempts, out.attempt) ||
      !(apply_outcome(snap.ledger, out.operation_id, out.state) == ask.next))
    throw std::logic_error("an outcome the rules would not record");
  OutcomeResult r;
  r.reply_gate = check_grant(ask.admitted_by, snap.realm, out.scope, snap.owner, snap.now_ms);
  r.recorded = true;
  r.version = row[written].template as<std::int64_t>();
  if (ask.addresses) ask.addresses->remember(out.scope, row[ledger_now].template as<std::optional<std::string>>());
  return r;
}
template std::optional<OutcomeResult> OutcomeAtRows::answer(const pqxx::row&, TaskSnapshot&);
template std::optional<OutcomeResult> OutcomeAtRows::answer(const PgRow&, TaskSnapshot&);

OutcomeResult LedgerStore::record_outcome(pqxx::dbtransaction& tx, const OutcomeRecord& out,
                                          const GrantToken& admitted_by) {
  // The reply's columns are built once: the ask's, or here without one.
  std::optional<OutcomeAtRows> ask;
  std::optional<OutcomeColumns> own;
  TaskSnapshot snap;
  if (out.rows) {
    ask.emplace(outcome_at_rows(out, admitted_by));
    if (auto recorded = ask->answer(exec_ask(tx, *ask).at(0), snap)) return *recorded;
  }
  const OutcomeColumns& c = ask ? ask->columns : own.emplace(out);
  // Not at its address any more (a sweep or a resolution changed the
  // operation or the ledger row): by key.
  const bool at_rows = out.rows && snap.operation && ask->ledger_found;
  if (!at_rows) snap = read_task(tx, clock_, out.scope, out.operation_id);
  OutcomeResult r;
  r.reply_gate = check_grant(admitted_by, snap.realm, out.scope, snap.owner, snap.now_ms);
  r.version = snap.ledger.version;
  if (!snap.operation) return r;
  const auto& op = *snap.operation;
  auto keep_evidence = [&](const std::string& detail) {
    exec_prepared(tx, evidence, out.scope.tenant, out.scope.task, out.operation_id, out.attempt,
                  std::string(name(EvidenceSource::late_reply)), c.state, c.status, detail, c.sha, c.length,
                  snap.now_ms);
  };
  // Only the attempt in flight (or its own late reply after a sweep) is
  // settled here, and only once; anything else is kept as evidence.
  if (!settles_operation(op.state, op.held_reason, op.attempts, out.attempt)) {
    keep_evidence("arrived after the operation was " + std::string(name(op.state)) + ": " + out.detail);
    return r;
  }
  if (op.state == OperationState::unknown)
    keep_evidence("the forwarder's own reply, after the sweep: " + out.detail);
  const auto next = apply_outcome(snap.ledger, out.operation_id, out.state);
  const OutcomeWrite write{
      .outcome = out,
      .columns = c,
      .now_ms = snap.now_ms,
      .committed = out.state == OperationState::succeeded ? std::optional<std::int64_t>(next.version) : std::nullopt,
      .next = next};
  const auto rows = write.exec(tx, at_rows ? &*out.rows : nullptr);
  r.recorded = rows.size() == 1;
  if (r.recorded) r.version = rows[0][0].as<std::int64_t>();
  return r;
}

ReceiptResult LedgerStore::receipt(Session& s, const TaskScope& scope, const GrantToken& token,
                                   const std::string& operation_id) {
  return serializable(s, [&](pqxx::dbtransaction& tx) {
    auto snap = read_task(tx, clock_, scope, operation_id);
    ReceiptResult r;
    // Ownership first: a stale or expired owner learns nothing, not even
    // whether the operation exists.
    r.code = check_grant(token, snap.realm, scope, snap.owner, snap.now_ms);
    if (r.code != Code::ok) return r;
    if (!snap.operation) {
      r.code = Code::not_found;
      return r;
    }
    r.operation = std::move(snap.operation);
    return r;
  });
}

std::vector<SweptOperation> LedgerStore::sweep_abandoned(Session& s, unsigned limit) {
  return read_committed(s, [&](pqxx::dbtransaction& tx) {
    std::vector<SweptOperation> swept;
    for (const auto& row : tx.exec_params(sweep_sql(clock_), clock_.high_water(), static_cast<std::int64_t>(limit))) {
      SweptOperation op;
      op.scope = TaskScope{row[0].as<std::string>(), row[1].as<std::string>()};
      op.operation_id = row[2].as<std::string>();
      op.attempt = row[3].as<int>();
      op.provider = row[4].as<std::string>();
      op.forward_deadline_ms = row[5].as<std::optional<std::int64_t>>();
      op.swept_at_ms = row[6].as<std::int64_t>();
      swept.push_back(std::move(op));
    }
    return swept;
  });
}

}  // namespace gw
