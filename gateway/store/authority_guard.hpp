// The authority regression guard (spec section 8; docs/deployment.md): every
// new database connection is checked, before any statement of a decision,
// against what this gateway already acted on (core/authority_guard.hpp), and a
// primary that does not hold it is refused: no grant, no admission, no
// outcome is written there. The watermark is read again on a timer, on a
// connection already in use (never inside a decision: no round trip is
// added to one), and kept in a state file so that it survives a restart.
#pragma once

#include "core/authority_guard.hpp"
#include "store/transaction.hpp"

#include <libpq-fe.h>
#include <nlohmann/json.hpp>
#include <pqxx/pqxx>

#include <atomic>
#include <chrono>
#include <functional>
#include <mutex>
#include <optional>
#include <string>

namespace gw {

// This connection's server was refused by the guard. A kind of
// AuthorityUnavailable: requests get 503 authority_unavailable, outcome
// records wait and are tried again, and the reply names the reason.
struct AuthorityRefused : AuthorityUnavailable {
  AuthorityRefused(GuardVerdict v, const std::string& detail) : AuthorityUnavailable(detail), verdict(v) {}
  GuardVerdict verdict;
};

// The one statement that reads a server's state (core ServerState), but
// for the timeline history, which takes one more when it may be read.
extern const char* const server_state_sql;
// Its row, as text values in column order (NULL: nullopt); history unset.
ServerState server_state_from(const std::vector<std::optional<std::string>>& row);

class AuthorityGuard {
 public:
  // event name and fields, for the log and the metrics (runtime wires them).
  using Reporter = std::function<void(const std::string& event, const nlohmann::json& fields)>;

  // `state_file` empty: the watermark is kept in memory only. A file that
  // exists but does not parse throws std::runtime_error naming it.
  AuthorityGuard(std::string state_file, Reporter report);

  // Checks a connection just opened (session set up, no statement of a
  // decision yet) and returns the generation it was admitted under.
  // Throws AuthorityRefused, or what the connection threw.
  std::uint64_t admit(pqxx::connection& c);
  std::uint64_t admit(PGconn* c);
  // Whether a connection admitted under `generation` may still be used:
  // false once the gateway has moved to another primary (an old primary that
  // has not noticed its demotion is left at once) and for an override's.
  bool current(std::uint64_t generation) const {
    return generation != 0 && generation == generation_.load(std::memory_order_acquire);
  }
  // The refusal in force, if the last connection opened was refused: a
  // session that fails fast (reconnect backoff) reports it instead.
  std::optional<AuthorityRefused> refusal() const;

  // On the timer, on an admitted connection: the watermark read again.
  void observe(pqxx::connection& c);
  // The database could not be reached (the pool's sessions say so): time
  // without authority starts.
  void lost();
  // How long the gateway has been without authority (0 while it has it):
  // the gauge gateway_without_authority_seconds.
  double seconds_without_authority() const;

  Watermark watermark() const;

  // While one is alive on a thread, connections that thread opens are
  // admitted whatever the guard's verdict (never remembered, never current
  // after): how an operator's rotate-realm reaches a refused primary, the
  // documented way out once what was in flight is reconciled.
  class Override {
   public:
    static bool active();
    Override();
    ~Override();
    Override(const Override&) = delete;
    Override& operator=(const Override&) = delete;
  };

 private:
  std::uint64_t decide(const ServerState& s);
  void persist();  // under mutex_
  void regained(const ServerIdentity& id);  // under mutex_

  std::string state_file_;
  Reporter report_;
  mutable std::mutex mutex_;
  GuardMemory memory_;
  std::optional<ServerIdentity> accepted_;
  std::optional<AuthorityRefused> refusal_;
  std::string accepted_address_;  // where accepted_ was reached, for the primary-change event
  AuthorityOutage outage_;
  std::atomic<std::uint64_t> generation_{0};
};

}  // namespace gw
