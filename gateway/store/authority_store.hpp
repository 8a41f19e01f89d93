// Claim, renew, release and the task view: each decision one SERIALIZABLE
// transaction that reads the task snapshot, asks the pure rules in
// core/ownership.hpp, and writes what they decided.
#pragma once

#include "core/codes.hpp"
#include "core/grant.hpp"
#include "store/authority_clock.hpp"
#include "store/pool.hpp"
#include "store/transaction.hpp"

#include <optional>
#include <string>

namespace gw {

struct ClaimResult {
  Code code = Code::ok;
  GrantIdentity grant;
  std::int64_t expires_at_ms = 0;
  std::string token;  // grant token; the secret inside it is not stored
  std::int64_t version = 0;
};

struct LeaseResult {
  Code code = Code::ok;
  std::int64_t expires_at_ms = 0;
};

struct TaskView {
  std::string realm;
  std::int64_t now_ms = 0;
  std::string owner;
  std::int64_t epoch = 0;
  std::int64_t expires_at_ms = 0;
  std::int64_t version = 0;
  std::optional<std::string> unresolved_operation;
  std::optional<std::string> unresolved_state;
};

class AuthorityStore {
 public:
  explicit AuthorityStore(AuthorityClock& clock) : clock_(clock) {}

  // All of these throw AuthorityUnavailable when the database cannot answer.
  ClaimResult claim(Session& s, const TaskScope& scope, const std::string& owner,
                    std::int64_t lease_ms);
  // The same claim inside a transaction the caller opened and commits.
  ClaimResult claim(pqxx::dbtransaction& tx, const TaskScope& scope, const std::string& owner,
                    std::int64_t lease_ms);
  LeaseResult renew(Session& s, const TaskScope& scope, const GrantToken& token,
                    std::int64_t lease_ms);
  LeaseResult release(Session& s, const TaskScope& scope, const GrantToken& token);
  // Diagnostic only: read at READ COMMITTED, never used for a decision.
  std::optional<TaskView> view(Session& s, const TaskScope& scope);

  // Manual clock only: ok, or authority_clock_rollback for a value below now.
  Code set_manual_clock(Session& s, std::int64_t now_ms);
  // Advances the durable clock floor to the database clock (real clock only).
  void advance_floor(Session& s);
  // Cheap reachability probe for /readyz.
  void ping(Session& s);

  AuthorityClock& clock() { return clock_; }

 private:
  // The first claim of a task, inserted without reading it first; nullopt
  // when the task exists (or its lease would end past the largest time).
  // In a transaction, or alone (autocommit).
  std::optional<ClaimResult> claim_fresh(pqxx::transaction_base& t, const TaskScope& scope, const std::string& owner,
                                         std::int64_t lease_ms);
  AuthorityClock& clock_;
};

// Runs a short READ COMMITTED statement batch with the same failure
// mapping as decisions (AuthorityUnavailable, never a raw libpqxx error).
template <class Fn>
auto read_committed(Session& session, Fn&& fn) -> decltype(fn(std::declval<pqxx::dbtransaction&>()));

}  // namespace gw

#include "store/read_committed.ipp"
