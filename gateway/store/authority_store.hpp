// Claim, renew, release and the task view: each decision one SERIALIZABLE
// transaction that reads the task snapshot, asks the pure rules in
// core/ownership.hpp, and writes what they decided.
#pragma once

#include "core/codes.hpp"
#include "core/grant.hpp"
#include "store/authority_clock.hpp"
#include "store/pool.hpp"
#include "store/prepared.hpp"
#include "store/transaction.hpp"

#include <optional>
#include <string>
#include <tuple>

namespace gw {

struct ClaimResult {
  Code code = Code::ok;
  GrantIdentity grant{};
  std::int64_t expires_at_ms = 0;
  std::string token{};  // grant token; the secret inside it is not stored
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

// The first claim of a task, as one statement sent alone (autocommit): the
// grant is inserted without the task being read first. Its answer is
// nullopt when the task exists (or its lease would end past the largest
// time), and the full claim follows in a transaction.
struct FreshClaim {
  Statement statement;
  std::int64_t lease_ms = 0;
  std::int64_t high_water = 0;
  // Scope, owner and a new secret; realm and epoch come with the answer.
  GrantToken token{};
  pqxx::binarystring secret_hash;
  AuthorityClock* clock = nullptr;  // observes the authority time the answer carries
  auto args() const {
    const auto& id = token.identity;
    return std::tie(id.scope.tenant, id.scope.task, id.owner, secret_hash, lease_ms, high_water);
  }
  // What its one row (libpqxx's or store/pg_result.hpp's) means, and what
  // a failure with `sqlstate` answers instead (the epoch sequence ran out).
  // Defined for both row types in authority_store.cpp.
  template <class Row>
  std::optional<ClaimResult> answer(const Row& row);
  static std::optional<ClaimResult> refused(const std::string& sqlstate);
};
static_assert(OneStatementDecision<FreshClaim, pqxx::row>);

class AuthorityStore {
 public:
  explicit AuthorityStore(AuthorityClock& clock) : clock_(clock) {}

  // All of these throw AuthorityUnavailable when the database cannot answer.
  // `fresh_tried`: the fresh claim was already sent alone and answered
  // nullopt (service/db/database.hpp, decide_direct), so only the full claim is left.
  ClaimResult claim(Session& s, const TaskScope& scope, const std::string& owner,
                    std::int64_t lease_ms, bool fresh_tried = false);
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

  // The fresh claim as a statement to send alone.
  FreshClaim fresh_claim(const TaskScope& scope, const std::string& owner, std::int64_t lease_ms);

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
