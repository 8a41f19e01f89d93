#include "store/operator_store.hpp"

#include "core/labels.hpp"
#include "core/ownership.hpp"
#include "core/utc_time.hpp"
#include "store/authority_store.hpp"
#include "store/pg_result.hpp"

#include <pqxx/pqxx>

namespace gw {
namespace {

std::string operation_sql(const AuthorityClock& clock) {
  return "SELECT now.ms, o.state, o.held_reason, o.method, o.provider, o.target, encode(o.fingerprint, 'hex'),"
         " o.expected_version, o.upstream_key, o.attempts, o.created_ms, o.updated_ms, o.committed_version,"
         " o.forward_deadline_ms, o.response_status, encode(o.response_sha256, 'hex'), o.response_length,"
         " (o.resolution).source, (o.resolution).resolved_ms, (o.resolution).evidence, l.version, l.open_op,"
         " substring(o.response_body FROM 1 FOR $5)"
         " FROM (SELECT " + clock.now_sql(1) + " AS ms FROM authority a) now"
         " LEFT JOIN operations o ON o.tenant = $2 AND o.task = $3 AND o.op_id = $4"
         " LEFT JOIN task_ledger l ON l.tenant = $2 AND l.task = $3";
}

constexpr const char* attempts_sql = R"(
SELECT attempt, realm, owner, epoch, admitted_ms, outcome, outcome_ms, upstream_status, detail
FROM operation_attempts WHERE tenant = $1 AND task = $2 AND op_id = $3 ORDER BY attempt)";

// Evidence, oldest first, with each run of identical consecutive lookups as
// one row. The reconciler looks a held operation up every few minutes and
// each answer is kept as its own row (every lookup, its headers and time stay
// in operation_evidence: the audit is never rewritten), but hundreds of
// "lookup answered 500 ..." rows bury what an operator must decide on. So
// the listing, not the table, folds a lookup into the row before it when
// that row is a lookup of the same attempt that said the same thing (outcome,
// status, detail, body digest, actor): the run is shown once, with its count,
// its first and last id and its first and last time. Any other source, or a
// lookup that said something else, starts a new row, so the order of what
// was said is kept. The body is the run's first row's, cut to body_preview
// bytes (the digest and length are of the whole body).
std::string evidence_sql() {
  const std::string same =
      "source = 'lookup' AND lag(source) OVER w = 'lookup' AND lag(attempt) OVER w = attempt"
      " AND lag(outcome) OVER w IS NOT DISTINCT FROM outcome"
      " AND lag(upstream_status) OVER w IS NOT DISTINCT FROM upstream_status"
      " AND lag(detail) OVER w = detail"
      " AND lag(response_sha256) OVER w IS NOT DISTINCT FROM response_sha256"
      " AND lag(actor) OVER w IS NOT DISTINCT FROM actor";
  return R"(
WITH e AS (SELECT id, recorded_ms, CASE WHEN )" + same + R"( THEN 0 ELSE 1 END AS starts
           FROM operation_evidence WHERE tenant = $1 AND task = $2 AND op_id = $3
           WINDOW w AS (ORDER BY id)),
     runs AS (SELECT id, recorded_ms, sum(starts) OVER (ORDER BY id) AS run FROM e),
     folded AS (SELECT min(id) AS first_id, max(id) AS last_id, count(*) AS n, max(recorded_ms) AS last_ms
                FROM runs GROUP BY run)
SELECT x.id, x.attempt, x.source, x.outcome, x.upstream_status, x.detail, encode(x.response_sha256, 'hex'),
       x.response_length, x.reference, x.actor, x.recorded_ms, f.n, f.last_id, f.last_ms,
       substring(x.response_body FROM 1 FOR $4)
FROM folded f JOIN operation_evidence x ON x.id = f.first_id ORDER BY f.first_id)";
}

// The first body_preview_bytes of a stored body, as bytes (a bytea field).
std::optional<std::string> body_or_null(const pqxx::field& f) {
  if (f.is_null()) return std::nullopt;
  return field_bytes(f);
}

std::optional<OperationState> state_or_null(const pqxx::field& f) {
  if (f.is_null()) return std::nullopt;
  return parse_operation_state(f.as<std::string>());
}

// The owner row by primary key, as release does, and the action beside it.
constexpr const char* revoke_sql = R"(
WITH t AS (UPDATE tasks SET expires_at_ms = $3 WHERE tenant = $1 AND task = $2 AND epoch = $4
           RETURNING owner, epoch)
INSERT INTO operator_actions (action, actor, tenant, task, realm, owner, epoch, detail, recorded_ms)
SELECT 'revoke', $5, $1, $2, $6, t.owner, t.epoch, $7, $3 FROM t
RETURNING id)";

}  // namespace

std::optional<OperationDetail> OperatorStore::detail(Session& s, const TaskScope& scope,
                                                     const std::string& operation_id) {
  return read_committed(s, [&](pqxx::dbtransaction& tx) -> std::optional<OperationDetail> {
    auto row = tx.exec_params1(operation_sql(clock_), clock_.high_water(), scope.tenant, scope.task, operation_id,
                               body_preview_bytes);
    clock_.observe(row[0].as<std::int64_t>());
    if (row[1].is_null()) return std::nullopt;
    OperationDetail d;
    d.scope = scope;
    d.operation_id = operation_id;
    d.now_ms = row[0].as<std::int64_t>();
    d.state = parse_operation_state(row[1].as<std::string>()).value();
    if (!row[2].is_null()) d.held_reason = parse_held_reason(row[2].as<std::string>());
    d.method = row[3].as<std::string>();
    d.provider = row[4].as<std::string>();
    d.target = row[5].as<std::string>();
    d.fingerprint_hex = row[6].as<std::string>();
    d.expected_version = row[7].as<std::int64_t>();
    d.upstream_key = row[8].as<std::string>();
    d.attempt_count = row[9].as<int>();
    d.created_ms = row[10].as<std::int64_t>();
    d.updated_ms = row[11].as<std::int64_t>();
    d.committed_version = row[12].as<std::optional<std::int64_t>>();
    d.forward_deadline_ms = row[13].as<std::optional<std::int64_t>>();
    if (!row[14].is_null())
      d.reply = ReplyDigest{row[14].as<unsigned>(), row[15].as<std::optional<std::string>>(),
                            row[16].as<std::optional<std::int64_t>>(), body_or_null(row[22])};
    if (!row[17].is_null())
      d.resolution = OperationResolution{parse_evidence_source(row[17].as<std::string>()).value(),
                                         row[18].as<std::int64_t>(), row[19].as<std::int64_t>()};
    d.task_version = row[20].as<std::int64_t>(0);
    d.task_open_operation = row[21].as<std::optional<std::string>>();

    for (const auto& a : tx.exec_params(attempts_sql, scope.tenant, scope.task, operation_id)) {
      AttemptDetail at;
      at.attempt = a[0].as<int>();
      at.grant = GrantIdentity{a[1].as<std::string>(), scope, a[2].as<std::string>(), a[3].as<std::int64_t>()};
      at.admitted_ms = a[4].as<std::int64_t>();
      at.outcome = state_or_null(a[5]);
      at.outcome_ms = a[6].as<std::optional<std::int64_t>>();
      at.upstream_status = a[7].as<std::optional<unsigned>>();
      at.detail = a[8].as<std::optional<std::string>>();
      d.attempts.push_back(std::move(at));
    }
    for (const auto& e : tx.exec_params(evidence_sql(), scope.tenant, scope.task, operation_id, body_preview_bytes)) {
      EvidenceDetail ev;
      ev.id = e[0].as<std::int64_t>();
      ev.attempt = e[1].as<int>();
      ev.source = parse_evidence_source(e[2].as<std::string>()).value();
      ev.outcome = state_or_null(e[3]);
      ev.upstream_status = e[4].as<std::optional<unsigned>>();
      ev.detail = e[5].as<std::string>();
      ev.body_sha256 = e[6].as<std::optional<std::string>>();
      ev.body_length = e[7].as<std::optional<std::int64_t>>();
      ev.reference = e[8].as<std::optional<std::string>>();
      ev.actor = e[9].as<std::optional<std::string>>();
      ev.recorded_ms = e[10].as<std::int64_t>();
      ev.count = e[11].as<std::int64_t>();
      ev.last_id = e[12].as<std::int64_t>();
      ev.last_recorded_ms = e[13].as<std::int64_t>();
      ev.body = body_or_null(e[14]);
      d.evidence.push_back(std::move(ev));
    }
    return d;
  });
}

RevokeResult OperatorStore::revoke(Session& s, const TaskScope& scope, const std::string& actor) {
  return serializable(s, [&](pqxx::dbtransaction& tx) {
    auto snap = read_task(tx, clock_, scope, std::nullopt);
    auto decision = decide_revoke(snap.owner, snap.now_ms);
    RevokeResult r;
    r.code = decision.code;
    r.now_ms = snap.now_ms;
    if (snap.owner) {
      r.grant = GrantIdentity{snap.realm, scope, snap.owner->owner, snap.owner->epoch};
      r.expires_at_ms = r.previous_expires_at_ms = snap.owner->expires_at_ms;
    }
    if (decision.code != Code::revoked) return r;
    tx.exec_params1(revoke_sql, scope.tenant, scope.task, decision.expires_at_ms, snap.owner->epoch, actor,
                    snap.realm,
                    "lease ended by an operator; it would have ended at " +
                        utc_text(snap.owner->expires_at_ms));
    r.expires_at_ms = decision.expires_at_ms;
    return r;
  });
}

RealmRotation OperatorStore::rotate_realm(Session& s, const std::string& actor, const RotationOptions& options) {
  return serializable(s, [&](pqxx::dbtransaction& tx) {
    // Before the snapshot: claims (the only callers of nextval, with the
    // tasks upsert in the same statement) wait until this commits, and
    // those in progress finish first. So no epoch is drawn between reading
    // the sequence and moving it, and no lease changes under the rotation.
    tx.exec("LOCK TABLE tasks IN EXCLUSIVE MODE");
    auto a = tx.exec_params1("SELECT a.realm, " + clock_.now_sql(1) + " FROM authority a", clock_.high_water());
    RealmRotation r;
    r.previous_realm = a[0].as<std::string>();
    r.rotated_ms = a[1].as<std::int64_t>();
    clock_.observe(r.rotated_ms);
    if (options.expected_realm && *options.expected_realm != r.previous_realm) {
      r.code = Code::authority_generation_mismatch;
      r.realm = r.previous_realm;
      return r;
    }

    auto seq = tx.exec1("SELECT last_value, is_called FROM epoch_seq");
    const auto last = seq[0].as<std::int64_t>();
    const auto next = !seq[1].as<bool>() ? last : last == max_integer ? max_integer : last + 1;
    r.next_epoch = rotation_next_epoch(next, r.rotated_ms, options.at_least);
    // setval is not undone by a rollback: a retried or failed rotation
    // leaves the sequence higher, which only leaves a gap.
    if (r.next_epoch > next) tx.exec_params1("SELECT setval('epoch_seq', $1, false)", r.next_epoch);

    r.realm = tx.exec1("UPDATE authority SET realm = gen_random_uuid()::text, realm_since = clock_timestamp()"
                       " RETURNING realm")[0]
                  .as<std::string>();
    r.leases_ended = tx.exec_params0("UPDATE tasks SET expires_at_ms = $1 WHERE expires_at_ms > $1", r.rotated_ms)
                         .affected_rows();
    tx.exec_params0(
        "INSERT INTO operator_actions (action, actor, realm, detail, recorded_ms)"
        " VALUES ('rotate_realm', $1, $2, $3, $4)",
        actor, r.realm,
        "previous realm " + r.previous_realm + "; epochs from " + std::to_string(r.next_epoch) + "; " +
            std::to_string(r.leases_ended) + " unexpired leases ended",
        r.rotated_ms);
    r.code = Code::realm_rotated;
    return r;
  });
}

}  // namespace gw
