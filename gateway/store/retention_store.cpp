#include "store/retention_store.hpp"

#include "store/authority_store.hpp"

#include <pqxx/pqxx>

namespace gw {
namespace {

// One statement, so the children and the operation go together and the
// foreign keys are checked once, at its end. The WHERE clause is
// removable_operation: finished, and succeeded/rejected only once the task's
// version is past the operation's expected version. The task's open
// operation is skipped as a guard, though a finished one never is.
constexpr const char* operations_sql = R"(
WITH doomed AS (
       SELECT o.tenant, o.task, o.op_id
       FROM operations o
       JOIN task_ledger l ON l.tenant = o.tenant AND l.task = o.task
       WHERE o.state IN ('succeeded', 'rejected', 'not_executed') AND o.updated_ms < $1
         AND (o.state = 'not_executed' OR l.version > o.expected_version)
         AND l.open_op IS DISTINCT FROM o.op_id
       ORDER BY o.updated_ms
       LIMIT $2
       FOR UPDATE OF o SKIP LOCKED),
     hooks AS (DELETE FROM webhook_deliveries d USING doomed x
               WHERE d.tenant = x.tenant AND d.task = x.task AND d.op_id = x.op_id RETURNING 1),
     evidence AS (DELETE FROM operation_evidence e USING doomed x
                  WHERE e.tenant = x.tenant AND e.task = x.task AND e.op_id = x.op_id RETURNING 1),
     attempts AS (DELETE FROM earlier_attempts a USING doomed x
                  WHERE a.tenant = x.tenant AND a.task = x.task AND a.op_id = x.op_id RETURNING 1),
     ops AS (DELETE FROM operations o USING doomed x
             WHERE o.tenant = x.tenant AND o.task = x.task AND o.op_id = x.op_id RETURNING 1)
SELECT (SELECT count(*) FROM ops), (SELECT count(*) FROM ops) + (SELECT count(*) FROM attempts),
       (SELECT count(*) FROM evidence),
       (SELECT count(*) FROM hooks))";

constexpr const char* rejections_sql = R"(
WITH doomed AS (SELECT id FROM rejections WHERE recorded_ms < $1
                ORDER BY recorded_ms, id LIMIT $2 FOR UPDATE SKIP LOCKED)
DELETE FROM rejections r USING doomed x WHERE r.id = x.id)";

constexpr const char* webhooks_sql = R"(
WITH doomed AS (SELECT id FROM webhook_deliveries WHERE status <> 'matched' AND received_ms < $1
                ORDER BY received_ms, id LIMIT $2 FOR UPDATE SKIP LOCKED)
DELETE FROM webhook_deliveries d USING doomed x WHERE d.id = x.id)";

}  // namespace

std::int64_t RetentionStore::cutoff(pqxx::dbtransaction& tx, std::chrono::milliseconds age, RemovedBatch& batch) {
  batch.now_ms = tx.exec_params1("SELECT " + clock_.now_sql(1) + " FROM authority a", clock_.high_water())[0]
                     .as<std::int64_t>();
  clock_.observe(batch.now_ms);
  return retention_cutoff_ms(batch.now_ms, age);
}

RemovedBatch RetentionStore::remove_operations(Session& s, std::chrono::milliseconds age, unsigned limit) {
  return read_committed(s, [&](pqxx::dbtransaction& tx) {
    RemovedBatch b;
    auto row = tx.exec_params1(operations_sql, cutoff(tx, age, b), static_cast<std::int64_t>(limit));
    b.rows = row[0].as<std::int64_t>();
    b.attempts = row[1].as<std::int64_t>();
    b.evidence = row[2].as<std::int64_t>();
    b.webhooks = row[3].as<std::int64_t>();
    return b;
  });
}

RemovedBatch RetentionStore::remove_rejections(Session& s, std::chrono::milliseconds age, unsigned limit) {
  return read_committed(s, [&](pqxx::dbtransaction& tx) {
    RemovedBatch b;
    b.rows = tx.exec_params(rejections_sql, cutoff(tx, age, b), static_cast<std::int64_t>(limit)).affected_rows();
    return b;
  });
}

RemovedBatch RetentionStore::remove_webhooks(Session& s, std::chrono::milliseconds age, unsigned limit) {
  return read_committed(s, [&](pqxx::dbtransaction& tx) {
    RemovedBatch b;
    b.rows = tx.exec_params(webhooks_sql, cutoff(tx, age, b), static_cast<std::int64_t>(limit)).affected_rows();
    return b;
  });
}

}  // namespace gw
