#include "store/held_store.hpp"

#include "store/authority_store.hpp"

#include <pqxx/pqxx>

namespace gw {

std::string why_held(const HeldOperation& op, std::int64_t now_ms) {
  if (op.state == OperationState::in_flight)
    return forward_abandoned(op.state, op.forward_deadline_ms, now_ms) ? "forward_abandoned" : "forwarding";
  return op.reason ? std::string(name(*op.reason)) : "outcome_unknown";
}

HeldPage HeldStore::list(Session& s, const HeldFilter& f) {
  const std::string sql =
      "SELECT o.tenant, o.task, o.op_id, o.state, o.held_reason, o.provider, o.method, o.target,"
      " o.upstream_key, o.attempts, o.updated_ms, o.forward_deadline_ms, now.ms"
      " FROM operations o, (SELECT " + clock_.now_sql(1) + " AS ms FROM authority a) now"
      " WHERE o.state IN ('in_flight', 'unknown')"
      " AND ($2::text IS NULL OR o.tenant = $2) AND ($3::text IS NULL OR o.task = $3)"
      " AND ($4::text IS NULL OR o.provider = $4) AND ($5::text IS NULL OR o.state = $5)"
      " AND ($6::text IS NULL OR o.held_reason = $6)"
      " AND ($7::bigint IS NULL OR o.updated_ms <= now.ms - $7)"
      " AND ($8::bigint IS NULL OR (o.updated_ms, o.tenant, o.task, o.op_id) > ($8, $9, $10, $11))"
      " ORDER BY o.updated_ms, o.tenant, o.task, o.op_id LIMIT $12";
  std::optional<std::string> state, reason;
  if (f.state) state = std::string(name(*f.state));
  if (f.reason) reason = std::string(name(*f.reason));
  std::optional<std::int64_t> after_ms;
  std::optional<std::string> after_tenant, after_task, after_op;
  if (f.after) {
    after_ms = f.after->since_ms;
    after_tenant = f.after->tenant;
    after_task = f.after->task;
    after_op = f.after->operation_id;
  }
  return read_committed(s, [&](pqxx::dbtransaction& tx) {
    // One row more than asked: whether another page follows.
    auto rows = tx.exec_params(sql, clock_.high_water(), f.tenant, f.task, f.provider, state, reason,
                               f.older_than_ms, after_ms, after_tenant, after_task, after_op,
                               static_cast<std::int64_t>(f.limit) + 1);
    HeldPage page;
    for (const auto& row : rows) {
      page.now_ms = row[12].as<std::int64_t>();
      if (page.operations.size() == f.limit) {
        page.more = true;
        break;
      }
      HeldOperation op;
      op.scope = TaskScope{row[0].as<std::string>(), row[1].as<std::string>()};
      op.operation_id = row[2].as<std::string>();
      op.state = parse_operation_state(row[3].as<std::string>()).value();
      if (!row[4].is_null()) op.reason = parse_held_reason(row[4].as<std::string>());
      op.provider = row[5].as<std::string>();
      op.method = row[6].as<std::string>();
      op.target = row[7].as<std::string>();
      op.upstream_key = row[8].as<std::string>();
      op.attempts = row[9].as<int>();
      op.since_ms = row[10].as<std::int64_t>();
      op.forward_deadline_ms = row[11].as<std::optional<std::int64_t>>();
      page.operations.push_back(std::move(op));
    }
    if (rows.empty()) {
      auto now = tx.exec_params1("SELECT " + clock_.now_sql(1) + " FROM authority a", clock_.high_water());
      page.now_ms = now[0].as<std::int64_t>();
    }
    clock_.observe(page.now_ms);
    return page;
  });
}

HeldSummary HeldStore::summary(Session& s) {
  const std::string sql =
      "SELECT o.state, count(*), min(o.updated_ms), now.ms"
      " FROM (SELECT " + clock_.now_sql(1) + " AS ms FROM authority a) now"
      " LEFT JOIN operations o ON o.state IN ('in_flight', 'unknown')"
      " GROUP BY o.state, now.ms";
  return read_committed(s, [&](pqxx::dbtransaction& tx) {
    HeldSummary summary;
    for (const auto& row : tx.exec_params(sql, clock_.high_water())) {
      summary.now_ms = row[3].as<std::int64_t>();
      if (row[0].is_null()) continue;  // the LEFT JOIN's row when nothing is held
      summary.states.push_back({parse_operation_state(row[0].as<std::string>()).value(),
                                row[1].as<std::int64_t>(), row[2].as<std::int64_t>()});
    }
    clock_.observe(summary.now_ms);
    return summary;
  });
}

}  // namespace gw
