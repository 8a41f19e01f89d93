#include "store/task_snapshot.hpp"

#include "store/pg_result.hpp"
#include "store/prepared.hpp"

#include <pqxx/pqxx>

namespace gw {

std::string snapshot_sql(const AuthorityClock& clock, OperationRead operation, std::optional<LedgerAt> ledger) {
  std::string sql = "SELECT a.realm, ";
  sql += clock.now_sql(4);
  sql += " AS now_ms, t.owner, t.epoch, t.secret_hash, t.expires_at_ms, l.version, l.open_op";
  // No operation: no join either, one plan node fewer to start and run in
  // every admission of a new key.
  if (operation == OperationRead::at_location) sql += ", o.state, o.attempts, o.held_reason";
  if (operation == OperationRead::by_key) {
    sql +=
        ", o.fingerprint, o.state, o.attempts, o.upstream_key, o.committed_version,"
        " o.response_status, o.response_headers::text, o.response_body,"
        " encode(o.response_sha256, 'hex'), o.response_length,"
        " o.method, o.provider, o.target, o.expected_version, o.forward_deadline_ms, o.held_reason,"
        " (o.resolution).source, (o.resolution).resolved_ms, (o.resolution).evidence";
  }
  if (ledger) sql += ", l.ctid AS ledger_at";
  sql +=
      " FROM authority a"
      " LEFT JOIN tasks t ON t.tenant = $1 AND t.task = $2"
      " LEFT JOIN task_ledger l ON ";
  if (ledger) {
    // By key, the parameter still has its type and its place: it is NULL.
    // (Appended piece by piece: GCC 12 warns of a false overlap, -Wrestrict.)
    if (ledger->read == LedgerAt::at_address) sql += "l.ctid = ";
    sql += '$';
    sql += std::to_string(ledger->param);
    sql += ledger->read == LedgerAt::at_address ? "::tid AND " : "::tid IS NULL AND ";
  }
  sql += "l.tenant = $1 AND l.task = $2";
  switch (operation) {
    case OperationRead::none:
      break;
    case OperationRead::at_location:
      sql += " LEFT JOIN operations o ON o.ctid = $5::tid AND o.tenant = $1 AND o.task = $2 AND o.op_id = $3";
      break;
    case OperationRead::by_key:
      sql += " LEFT JOIN operations o ON o.tenant = $1 AND o.task = $2 AND o.op_id = $3";
      break;
  }
  return sql;
}

TaskSnapshot read_task(pqxx::transaction_base& tx, AuthorityClock& clock, const TaskScope& scope,
                       const std::optional<std::string>& operation_id) {
  // One text per clock kind, so each has its own name on a connection.
  static const std::string wall = snapshot_sql(AuthorityClock(ClockSource::database), OperationRead::by_key),
                           manual = snapshot_sql(AuthorityClock(ClockSource::manual), OperationRead::by_key);
  const Statement statement = clock.manual() ? Statement{"gw_snapshot_manual", manual.c_str()}
                                             : Statement{"gw_snapshot", wall.c_str()};
  return parse_snapshot(
      exec_prepared(tx, statement, scope.tenant, scope.task, operation_id, clock.high_water()).at(0), clock,
      OperationRead::by_key);
}

template <class Row>
TaskSnapshot parse_snapshot(const Row& row, AuthorityClock& clock, OperationRead operation) {
  TaskSnapshot s;
  s.realm = row[0].template as<std::string>();
  s.now_ms = row[1].template as<std::int64_t>();
  clock.observe(s.now_ms);
  if (!row[2].is_null()) {
    s.owner = OwnerRow{row[2].template as<std::string>(), row[3].template as<std::int64_t>(),
                       field_bytes(row[4]), row[5].template as<std::int64_t>()};
  }
  if (!row[6].is_null()) {
    s.ledger.version = row[6].template as<std::int64_t>();
    s.ledger.open_operation = row[7].template as<std::optional<std::string>>();
  }
  if (operation == OperationRead::at_location && !row[8].is_null()) {
    StoredOperation op;
    op.state = parse_operation_state(row[8].template as<std::string>()).value();
    op.attempts = row[9].template as<int>();
    if (!row[10].is_null()) op.held_reason = parse_held_reason(row[10].template as<std::string>());
    s.operation = std::move(op);
  }
  if (operation == OperationRead::by_key && !row[8].is_null()) {
    StoredOperation op;
    op.fingerprint = field_bytes(row[8]);
    op.state = parse_operation_state(row[9].template as<std::string>()).value();
    op.attempts = row[10].template as<int>();
    op.upstream_key = row[11].template as<std::string>();
    op.committed_version = row[12].template as<std::optional<std::int64_t>>();
    op.method = row[18].template as<std::string>();
    op.provider = row[19].template as<std::string>();
    op.target = row[20].template as<std::string>();
    op.expected_version = row[21].template as<std::int64_t>();
    op.forward_deadline_ms = row[22].template as<std::optional<std::int64_t>>();
    if (!row[23].is_null()) op.held_reason = parse_held_reason(row[23].template as<std::string>());
    if (!row[24].is_null())
      op.resolution = OperationResolution{parse_evidence_source(row[24].template as<std::string>()).value(),
                                          row[25].template as<std::int64_t>(), row[26].template as<std::int64_t>()};
    if (!row[13].is_null() && !op.resolution) {
      RecordedResponse r;
      r.status = row[13].template as<unsigned>();
      r.headers_json = row[14].template as<std::string>("[]");
      if (!row[15].is_null()) r.body = field_bytes(row[15]);
      r.body_sha256 = row[16].template as<std::string>("");
      r.body_length = row[17].template as<std::int64_t>(0);
      op.response = std::move(r);
    }
    s.operation = std::move(op);
  }
  return s;
}
template TaskSnapshot parse_snapshot(const pqxx::row&, AuthorityClock&, OperationRead);
template TaskSnapshot parse_snapshot(const PgRow&, AuthorityClock&, OperationRead);

}  // namespace gw
