#include "store/transaction.hpp"

#include <algorithm>

namespace gw {

FailureKind classify_sqlstate(const std::string& s) {
  if (s == "40001" || s == "40P01") return FailureKind::conflict;  // serialization, deadlock
  // Two admissions inserting one key: the loser retries and then sees the row.
  if (s == "23505") return FailureKind::conflict;
  if (s == "57014" || s == "55P03") return FailureKind::unavailable;  // statement/lock timeout
  if (s.rfind("08", 0) == 0 || s.rfind("57P", 0) == 0 || s.rfind("53", 0) == 0 ||
      s.rfind("58", 0) == 0 || s == "25P03")
    return FailureKind::unavailable;  // connection, shutdown, resources, system, idle timeout
  return FailureKind::bug;
}

FailureKind classify_failure(const std::exception& e) {
  // Order matters: in libpqxx 6.4 these are siblings under pqxx::failure.
  if (dynamic_cast<const pqxx::in_doubt_error*>(&e)) return FailureKind::in_doubt;
  if (dynamic_cast<const pqxx::statement_completion_unknown*>(&e)) return FailureKind::in_doubt;
  if (dynamic_cast<const pqxx::serialization_failure*>(&e)) return FailureKind::conflict;
  if (dynamic_cast<const pqxx::deadlock_detected*>(&e)) return FailureKind::conflict;
  if (dynamic_cast<const pqxx::transaction_rollback*>(&e)) return FailureKind::conflict;
  // Broken before commit: nothing was committed, a new connection may answer.
  if (dynamic_cast<const pqxx::broken_connection*>(&e)) return FailureKind::retry_on_new_connection;
  if (auto sql = dynamic_cast<const pqxx::sql_error*>(&e)) return classify_sqlstate(sql->sqlstate());
  if (dynamic_cast<const pqxx::failure*>(&e)) return FailureKind::unavailable;
  return FailureKind::bug;
}

void rethrow_failure(Session& session, const std::exception& e, FailureKind kind) {
  switch (kind) {
    case FailureKind::conflict:
      throw Conflict(e.what());
    case FailureKind::in_doubt:
      session.discard();
      throw AuthorityUnavailable(std::string("commit outcome in doubt: ") + e.what());
    case FailureKind::retry_on_new_connection:
    case FailureKind::unavailable:
      session.discard();
      throw AuthorityUnavailable(e.what());
    case FailureKind::bug:
      break;
  }
  throw;
}

std::chrono::milliseconds backoff_delay(const RetryPolicy& policy, unsigned attempt, std::uint64_t random) {
  const std::int64_t ceiling =
      std::max<std::int64_t>(0, std::min<std::int64_t>(policy.cap.count(), policy.base.count() << std::min(attempt, 20u)));
  return std::chrono::milliseconds(static_cast<std::int64_t>(random % (static_cast<std::uint64_t>(ceiling) + 1)));
}

}  // namespace gw
