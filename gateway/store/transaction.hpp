// One decision = one SERIALIZABLE transaction, tried once here. A conflict
// (serialization failure, deadlock, a concurrent insert of the same key)
// committed nothing and is thrown as Conflict for the caller to retry after a
// pause on a timer (service/db/database.hpp): a database worker never sleeps.
// A connection that broke before commit is replaced once, at once. Anything
// the database cannot answer becomes AuthorityUnavailable, which the gateway
// reports as 503 authority_unavailable: nothing forwarded, nothing disclosed.
// A commit whose outcome is in doubt is never retried.
#pragma once

#include "store/pool.hpp"

#include <pqxx/pqxx>

#include <chrono>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>

namespace gw {

struct AuthorityUnavailable : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// The decision committed nothing and may be tried again as it is.
struct Conflict : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// How often, and how far apart, a conflicting decision is tried again.
struct RetryPolicy {
  unsigned max_attempts = 8;
  std::chrono::milliseconds base{2};
  std::chrono::milliseconds cap{100};
};

enum class FailureKind { conflict, retry_on_new_connection, in_doubt, unavailable, bug };

// Sorts a libpqxx exception (or a SQLSTATE) into what happens next.
FailureKind classify_failure(const std::exception& e);
FailureKind classify_sqlstate(const std::string& sqlstate);

// What a failed try of kind `kind` is thrown as: Conflict; AuthorityUnavailable,
// the session's connection discarded; or, for a bug, `e` itself (call it from
// the catch block). retry_on_new_connection is the caller's to decide first.
[[noreturn]] void rethrow_failure(Session& session, const std::exception& e, FailureKind kind);

// The pause before try `attempt` + 1 (1-based): full jitter over an
// exponential ceiling, base << attempt capped at cap. `random` is any
// uniformly distributed value, so the rule is testable without a clock.
std::chrono::milliseconds backoff_delay(const RetryPolicy& policy, unsigned attempt, std::uint64_t random);

template <class Fn>
auto serializable(Session& session, Fn&& fn) -> decltype(fn(std::declval<pqxx::dbtransaction&>())) {
  for (bool reconnected = false;;) {
    try {
      pqxx::transaction<pqxx::serializable> tx(session.connection());
      auto result = fn(static_cast<pqxx::dbtransaction&>(tx));
      tx.commit();
      return result;
    } catch (const AuthorityUnavailable&) {
      throw;
    } catch (const Conflict&) {
      throw;
    } catch (const std::exception& e) {
      const auto kind = classify_failure(e);
      if (kind != FailureKind::retry_on_new_connection) rethrow_failure(session, e, kind);
      // Broken before commit: nothing committed. One fresh connection may
      // answer; a second break means the database is away.
      session.discard();
      if (reconnected) throw AuthorityUnavailable(e.what());
      reconnected = true;
    }
  }
}

// A condition every statement run by autocommit() writes under: a session
// that lost its SERIALIZABLE default (a pooler in front of PostgreSQL that
// hands out server connections per transaction) writes nothing that way,
// and the decision is made in a SERIALIZABLE transaction block instead.
inline constexpr std::string_view serializable_guard = "current_setting('transaction_isolation') = 'serializable'";

// One decision as one statement sent outside a transaction block: the
// session's default (store/pool.cpp) makes it a SERIALIZABLE transaction of
// its own, committed as it answers, in one round trip instead of three
// (BEGIN, the statement, COMMIT). Only for a statement that writes nothing
// the rules would refuse: it re-checks in SQL every fact they read, and its
// caller still weighs what it returns with them (store/ledger_store.cpp).
// A conflict committed nothing: Conflict, to be tried again. Once sent, a
// statement whose connection breaks may have committed: in doubt, never
// retried (AuthorityUnavailable). So a kept connection the server already
// closed is replaced before anything is sent.
template <class Fn>
auto autocommit(Session& session, Fn&& fn) -> decltype(fn(std::declval<pqxx::transaction_base&>())) {
  session.drop_if_closed();
  pqxx::connection* connection = nullptr;
  try {
    connection = &session.connection();
  } catch (const std::exception& e) {
    if (classify_failure(e) == FailureKind::bug) throw;
    throw AuthorityUnavailable(e.what());
  }
  try {
    pqxx::nontransaction tx(*connection);
    return fn(static_cast<pqxx::transaction_base&>(tx));
  } catch (const AuthorityUnavailable&) {
    throw;
  } catch (const std::exception& e) {
    const auto kind = classify_failure(e);
    // Sent, then broken: it may have committed.
    rethrow_failure(session, e, kind == FailureKind::retry_on_new_connection ? FailureKind::in_doubt : kind);
  }
}

}  // namespace gw
