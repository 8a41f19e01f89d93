#include "store/resolution_store.hpp"

#include "core/digest.hpp"

#include <pqxx/pqxx>

namespace gw {
namespace {

// By primary key only, like the outcome (see outcome_sql in
// ledger_store.cpp: a condition on `state` could let the planner scan the
// partial index operations_unresolved under SERIALIZABLE predicate locks).
// The snapshot checked the state; concurrent writers of the same rows (the
// forwarder's late reply, a sweep, another resolution) make one of the two
// fail serialization, and the retry sees the other.
constexpr const char* resolve_sql = R"(
WITH ev AS (INSERT INTO operation_evidence (tenant, task, op_id, attempt, source, outcome, upstream_status, detail,
                                            response_sha256, response_length, response_headers, response_body,
                                            reference, actor, recorded_ms)
            VALUES ($1, $2, $3, $4, $5, $6, $7, $8, decode($9, 'hex'), $10, $11::jsonb, decode($12, 'hex'),
                    $13, $14, $15)
            RETURNING id),
     o AS (UPDATE operations
           SET state = $6, updated_ms = $15, committed_version = $16, held_reason = NULL,
               resolution = ROW($5, $15, (SELECT id FROM ev))::operation_resolution
           WHERE tenant = $1 AND task = $2 AND op_id = $3),
     l AS (UPDATE task_ledger SET version = $17, open_op = $18 WHERE tenant = $1 AND task = $2)
SELECT id FROM ev)";

std::string describe(const StoredOperation& op, bool abandoned, const HeldResolution& rq) {
  std::string from(name(op.state));
  if (op.held_reason) from += " (" + std::string(name(*op.held_reason)) + ")";
  else if (abandoned) from += " past its forward deadline";
  std::string text = "resolved " + std::string(name(rq.outcome)) + " from " + from;
  if (rq.note && !rq.note->empty()) text += ": " + *rq.note;
  return text;
}

}  // namespace

ResolutionResult ResolutionStore::resolve_held(Session& s, const HeldResolution& rq) {
  return serializable(s, [&](pqxx::dbtransaction& tx) {
    auto snap = read_task(tx, clock_, rq.scope, rq.operation_id);
    ResolutionResult r;
    r.now_ms = snap.now_ms;
    r.version = snap.ledger.version;
    ResolutionInput in{.source = rq.source, .outcome = rq.outcome, .version = snap.ledger.version};
    if (snap.operation) {
      const auto& op = *snap.operation;
      in.state = op.state;
      in.abandoned = forward_abandoned(op.state, op.forward_deadline_ms, snap.now_ms);
      r.found_state = op.state;
      r.held_reason = op.held_reason;
      r.found_resolution = op.resolution;
      r.attempt = op.attempts;
    }
    r.code = decide_resolution(in);
    if (r.code != Code::ok) return r;

    const auto& op = *snap.operation;
    auto next = apply_resolution(snap.ledger, rq.operation_id, rq.outcome);
    if (rq.outcome == OperationState::succeeded) r.committed_version = next.version;
    std::optional<unsigned> status;
    std::optional<std::string> headers, sha, body_hex;
    std::optional<std::int64_t> length;
    if (rq.reply) {
      status = rq.reply->status;
      headers = rq.reply->headers_json;
      if (!rq.reply->body_sha256.empty()) sha = rq.reply->body_sha256;
      length = rq.reply->body_length;
      body_hex = to_hex(rq.reply->body);
    }
    auto row = tx.exec_params1(
        resolve_sql, rq.scope.tenant, rq.scope.task, rq.operation_id, op.attempts, std::string(name(rq.source)),
        std::string(name(rq.outcome)), status,
        describe(op, in.abandoned, rq), sha, length, headers, body_hex, rq.reference, rq.actor, snap.now_ms,
        r.committed_version, next.version, next.open_operation);
    r.code = Code::resolved;
    r.evidence_id = row[0].as<std::int64_t>();
    r.version = next.version;
    return r;
  });
}

}  // namespace gw
