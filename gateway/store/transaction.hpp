// One decision = one SERIALIZABLE transaction, retried (bounded, jittered
// backoff) on serialization failure, deadlock and a connection that broke
// before commit; never retried after a commit whose outcome is in doubt.
// Anything the database cannot answer becomes AuthorityUnavailable, which the
// gateway reports as 503 authority_unavailable: nothing forwarded, nothing
// disclosed.
#pragma once

#include "store/pool.hpp"

#include <pqxx/pqxx>

#include <chrono>
#include <optional>
#include <stdexcept>
#include <string>

namespace gw {

struct AuthorityUnavailable : std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct RetryPolicy {
  unsigned max_attempts = 8;
  std::chrono::milliseconds base{2};
  std::chrono::milliseconds cap{100};
};

enum class FailureKind { retry, retry_on_new_connection, in_doubt, unavailable, bug };

// Sorts a libpqxx exception (or a SQLSTATE) into what the retry loop does.
FailureKind classify_failure(const std::exception& e);
FailureKind classify_sqlstate(const std::string& sqlstate);

// Sleeps a full-jitter exponential backoff for `attempt` (1-based).
void backoff(const RetryPolicy& policy, unsigned attempt);

template <class Fn>
auto serializable(Session& session, const RetryPolicy& policy, Fn&& fn)
    -> decltype(fn(std::declval<pqxx::dbtransaction&>())) {
  bool reconnected = false;
  for (unsigned attempt = 1;; ++attempt) {
    try {
      pqxx::transaction<pqxx::serializable> tx(session.connection());
      auto result = fn(static_cast<pqxx::dbtransaction&>(tx));
      tx.commit();
      return result;
    } catch (const AuthorityUnavailable&) {
      throw;
    } catch (const std::exception& e) {
      switch (classify_failure(e)) {
        case FailureKind::retry_on_new_connection:
          session.discard();
          // One fresh connection may answer; a second break means the database is away.
          if (reconnected) throw AuthorityUnavailable(e.what());
          reconnected = true;
          continue;
        case FailureKind::retry:
          if (attempt >= policy.max_attempts)
            throw AuthorityUnavailable(std::string("gave up after retries: ") + e.what());
          backoff(policy, attempt);
          continue;
        case FailureKind::in_doubt:
          session.discard();
          throw AuthorityUnavailable(std::string("commit outcome in doubt: ") + e.what());
        case FailureKind::unavailable:
          session.discard();
          throw AuthorityUnavailable(e.what());
        case FailureKind::bug:
          throw;
      }
    }
  }
}

}  // namespace gw
