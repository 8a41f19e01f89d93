#include "store/reconcile_store.hpp"

#include "core/digest.hpp"
#include "store/authority_store.hpp"

#include <nlohmann/json.hpp>
#include <pqxx/pqxx>

namespace gw {
namespace {

// When an operation is due for lookup: its schedule's next time if the
// schedule is for the attempt now held, else at once (never looked up, or
// looked up under an earlier attempt). The held ones are found through
// operations_unresolved and sorted by it (schema/012).
constexpr const char* due_ms_sql =
    "(CASE WHEN o.lookup_attempt = o.attempts THEN coalesce(o.next_lookup_ms, 0) ELSE 0 END)";

// READ COMMITTED on purpose, like the sweep (ledger_store.cpp): FOR UPDATE
// SKIP LOCKED hands each due row to one gateway, a row another gateway
// leased meanwhile is re-checked on its new version and is no longer due,
// and the lease moves next_lookup_ms forward so later scans skip it too.
// The UPDATE re-checks the state on the locked row: an operation settled
// meanwhile is left alone.
std::string due_sql(const AuthorityClock& clock) {
  const std::string due_ms = due_ms_sql;
  return R"(
WITH now AS (SELECT )" + clock.now_sql(1) + R"( AS ms FROM authority a),
     due AS (SELECT o.tenant, o.task, o.op_id FROM operations o, now
             WHERE o.state = 'unknown' AND )" + due_ms + R"( <= now.ms
               AND o.provider IN (SELECT jsonb_array_elements_text($2::jsonb))
             ORDER BY )" + due_ms + R"(, o.tenant, o.task, o.op_id LIMIT $3
             FOR UPDATE OF o SKIP LOCKED),
     leased AS (UPDATE operations o
                SET lookups = CASE WHEN o.lookup_attempt = o.attempts THEN o.lookups ELSE 0 END,
                    last_lookup_ms = CASE WHEN o.lookup_attempt = o.attempts THEN o.last_lookup_ms END,
                    lookup_attempt = o.attempts,
                    next_lookup_ms = now.ms + $4::bigint
                FROM due, now
                WHERE o.tenant = due.tenant AND o.task = due.task AND o.op_id = due.op_id AND o.state = 'unknown'
                RETURNING o.tenant, o.task, o.op_id, o.attempts, o.provider, o.upstream_key,
                          o.forward_deadline_ms, o.lookups, o.last_lookup_ms, now.ms AS now_ms)
SELECT * FROM leased ORDER BY tenant, task, op_id)";
}

// The evidence is kept whatever became of the operation; the schedule moves
// only while the operation is still held unknown under the looked-up attempt.
std::string record_sql(const AuthorityClock& clock) {
  return R"(
WITH now AS (SELECT )" + clock.now_sql(1) + R"( AS ms FROM authority a),
     ev AS (INSERT INTO operation_evidence (tenant, task, op_id, attempt, source, outcome, upstream_status, detail,
                                            response_headers, response_body, response_sha256, response_length,
                                            actor, recorded_ms)
            VALUES ($2, $3, $4, $5, 'lookup', $6, $7, $8, $9::jsonb, decode($10, 'hex'), decode($11, 'hex'), $12,
                    $13, (SELECT ms FROM now))
            RETURNING id, recorded_ms),
     sched AS (UPDATE operations o
               SET lookups = CASE WHEN o.lookup_attempt = o.attempts THEN o.lookups + 1 ELSE 1 END,
                   lookup_attempt = o.attempts, last_lookup_ms = now.ms, next_lookup_ms = now.ms + $14::bigint
               FROM now
               WHERE o.tenant = $2 AND o.task = $3 AND o.op_id = $4 AND o.state = 'unknown' AND o.attempts = $5
               RETURNING o.next_lookup_ms)
SELECT ev.id, ev.recorded_ms, (SELECT next_lookup_ms FROM sched) FROM ev)";
}

// Due now, unless a lookup is in progress under a lease: then the button
// asks for one more, right after (the schedule's time moves to now).
std::string lookup_now_sql(const AuthorityClock& clock) {
  return R"(
WITH now AS (SELECT )" + clock.now_sql(1) + R"( AS ms FROM authority a),
     op AS (SELECT o.state FROM operations o WHERE o.tenant = $2 AND o.task = $3 AND o.op_id = $4),
     due AS (UPDATE operations o SET next_lookup_ms = now.ms
             FROM now
             WHERE o.tenant = $2 AND o.task = $3 AND o.op_id = $4 AND o.state = 'unknown'
             RETURNING o.state)
SELECT coalesce((SELECT state FROM due), (SELECT state FROM op)), now.ms FROM now)";
}

}  // namespace

std::vector<DueLookup> ReconcileStore::due_for_lookup(Session& s, const std::vector<std::string>& providers,
                                                      unsigned limit, std::int64_t lease_ms) {
  if (providers.empty() || limit == 0) return {};
  const std::string names = nlohmann::json(providers).dump();
  return read_committed(s, [&](pqxx::dbtransaction& tx) {
    std::vector<DueLookup> due;
    for (const auto& row : tx.exec_params(due_sql(clock_), clock_.high_water(), names,
                                          static_cast<std::int64_t>(limit), lease_ms)) {
      DueLookup d;
      d.scope = TaskScope{row[0].as<std::string>(), row[1].as<std::string>()};
      d.operation_id = row[2].as<std::string>();
      d.attempt = row[3].as<int>();
      d.provider = row[4].as<std::string>();
      d.upstream_key = row[5].as<std::string>();
      d.forward_deadline_ms = row[6].as<std::optional<std::int64_t>>();
      d.lookups = row[7].as<int>();
      d.last_lookup_ms = row[8].as<std::optional<std::int64_t>>();
      d.handed_out_ms = row[9].as<std::int64_t>();
      clock_.observe(d.handed_out_ms);
      due.push_back(std::move(d));
    }
    return due;
  });
}

RecordedLookup ReconcileStore::record_lookup(Session& s, const LookupRecord& l) {
  std::optional<std::string> headers, body_hex, sha;
  std::optional<std::int64_t> length;
  if (l.status) {
    headers = l.headers_json;
    body_hex = to_hex(l.body);
    sha = sha256_hex(l.body);
    length = static_cast<std::int64_t>(l.body.size());
  }
  return read_committed(s, [&](pqxx::dbtransaction& tx) {
    auto row = tx.exec_params1(record_sql(clock_), clock_.high_water(), l.scope.tenant, l.scope.task,
                               l.operation_id, l.attempt, std::string(name(l.outcome)), l.status, l.detail,
                               headers, body_hex, sha, length, l.provider, l.next_lookup_delay_ms);
    RecordedLookup r;
    r.evidence_id = row[0].as<std::int64_t>();
    r.recorded_ms = row[1].as<std::int64_t>();
    r.next_lookup_ms = row[2].as<std::optional<std::int64_t>>();
    clock_.observe(r.recorded_ms);
    return r;
  });
}

LookupNow ReconcileStore::lookup_now(Session& s, const TaskScope& scope, const std::string& operation_id) {
  return read_committed(s, [&](pqxx::dbtransaction& tx) {
    auto row = tx.exec_params1(lookup_now_sql(clock_), clock_.high_water(), scope.tenant, scope.task, operation_id);
    LookupNow r;
    if (!row[0].is_null()) r.state = parse_operation_state(row[0].as<std::string>());
    r.now_ms = row[1].as<std::int64_t>();
    clock_.observe(r.now_ms);
    return r;
  });
}

}  // namespace gw
