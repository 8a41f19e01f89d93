#include "store/rejection_store.hpp"

#include "store/authority_store.hpp"
#include "store/prepared.hpp"

#include <pqxx/pqxx>

#include <algorithm>

namespace gw {
namespace {

constexpr Statement insert{"gw_insert_rejection", R"(
INSERT INTO rejections (tenant, task, op_id, realm, grant_tenant, grant_task, owner, epoch, fingerprint,
                        method, provider, target, expected_version, code, request_id, recorded_ms)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16))"};

}  // namespace

void insert_rejection(pqxx::transaction_base& tx, const RejectionRecord& r, std::int64_t now_ms) {
  std::optional<std::string> realm, grant_tenant, grant_task, owner;
  std::optional<std::int64_t> epoch;
  if (r.presented) {
    realm = r.presented->realm;
    grant_tenant = r.presented->scope.tenant;
    grant_task = r.presented->scope.task;
    owner = r.presented->owner;
    epoch = r.presented->epoch;
  }
  // libpqxx 6.4 sends a binarystring only by itself, not inside an
  // optional: a missing fingerprint is a NULL of another type.
  if (r.fingerprint)
    exec_prepared(tx, insert, r.scope.tenant, r.scope.task, r.operation_id, realm, grant_tenant, grant_task,
                    owner, epoch, pqxx::binarystring(*r.fingerprint), r.method, r.provider, r.target,
                    r.expected_version, std::string(name(r.code)), r.request_id, now_ms);
  else
    exec_prepared(tx, insert, r.scope.tenant, r.scope.task, r.operation_id, realm, grant_tenant, grant_task,
                    owner, epoch, nullptr, r.method, r.provider, r.target,
                    r.expected_version, std::string(name(r.code)), r.request_id, now_ms);
}

void RejectionStore::record(Session& s, const RejectionRecord& rejection) {
  read_committed(s, [&](pqxx::dbtransaction& tx) {
    auto now = tx.exec_params1("SELECT " + clock_.now_sql(1) + " FROM authority a", clock_.high_water());
    const auto now_ms = now[0].as<std::int64_t>();
    clock_.observe(now_ms);
    insert_rejection(tx, rejection, now_ms);
    return 0;
  });
}

RejectionPage RejectionStore::list(Session& s, const RejectionFilter& f) {
  static constexpr const char* sql =
      "SELECT id, recorded_ms, tenant, task, op_id, realm, grant_tenant, grant_task, owner, epoch, fingerprint,"
      " method, provider, target, expected_version, code, request_id"
      " FROM rejections"
      " WHERE ($1::text IS NULL OR tenant = $1) AND ($2::text IS NULL OR task = $2)"
      " AND ($3::text IS NULL OR code = $3) AND ($4::bigint IS NULL OR recorded_ms >= $4)"
      " AND ($5::bigint IS NULL OR (recorded_ms, id) < ($5, $6))"
      // Newest first: the operator on call wants what just happened, not page 40.
      " ORDER BY recorded_ms DESC, id DESC LIMIT $7";
  std::optional<std::string> code;
  if (f.code) code = std::string(name(*f.code));
  std::optional<std::int64_t> after_ms, after_id;
  if (f.after) {
    after_ms = f.after->recorded_ms;
    after_id = f.after->id;
  }
  return read_committed(s, [&](pqxx::dbtransaction& tx) {
    RejectionPage page;
    page.now_ms = tx.exec_params1("SELECT " + clock_.now_sql(1) + " FROM authority a", clock_.high_water())[0]
                      .as<std::int64_t>();
    clock_.observe(page.now_ms);
    // Both bounds may be given: the later one counts.
    auto since_ms = f.since_ms;
    if (f.newer_than_ms) since_ms = std::max(since_ms.value_or(0), page.now_ms - *f.newer_than_ms);
    // One row more than asked: whether another page follows.
    auto rows = tx.exec_params(sql, f.tenant, f.task, code, since_ms, after_ms, after_id,
                               static_cast<std::int64_t>(f.limit) + 1);
    for (const auto& row : rows) {
      if (page.rejections.size() == f.limit) {
        page.more = true;
        break;
      }
      RecordedRejection r;
      r.id = row[0].as<std::int64_t>();
      r.recorded_ms = row[1].as<std::int64_t>();
      auto& rj = r.rejection;
      rj.scope = TaskScope{row[2].as<std::string>(), row[3].as<std::string>()};
      rj.operation_id = row[4].as<std::optional<std::string>>();
      if (!row[5].is_null())
        rj.presented = GrantIdentity{row[5].as<std::string>(),
                                     TaskScope{row[6].as<std::string>(""), row[7].as<std::string>("")},
                                     row[8].as<std::string>(""), row[9].as<std::int64_t>(0)};
      if (!row[10].is_null()) rj.fingerprint = pqxx::binarystring(row[10]).str();
      rj.method = row[11].as<std::string>();
      rj.provider = row[12].as<std::string>();
      rj.target = row[13].as<std::string>();
      rj.expected_version = row[14].as<std::optional<std::int64_t>>();
      r.code_name = row[15].as<std::string>();
      rj.code = parse_code(r.code_name).value_or(Code::internal_error);
      rj.request_id = row[16].as<std::optional<std::string>>();
      page.rejections.push_back(std::move(r));
    }
    return page;
  });
}

}  // namespace gw
