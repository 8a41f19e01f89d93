// A PostgreSQL connection that an I/O thread drives itself with libpq's
// non-blocking calls, in pipeline mode: a statement is sent and its answer
// awaited on the socket, in the thread's own epoll, like an upstream reply.
// A decision made here skips the two thread hand-offs of the worker pool
// (the worker woken with the job, the I/O thread woken with its result),
// which at one agent cost as much as the statement itself
// (docs/performance.md).
//
// Only for a decision that is one statement sent alone (each is followed by
// a Sync, which ends it as a transaction of its own: the session's default
// makes it SERIALIZABLE), so no transaction is ever open across an await.
// Several may be on their way at once (pipelined): the server runs them one
// after the other, each committed before the next starts, and the next one
// is already there when the last commits, instead of a round trip later
// through a busy I/O thread.
#pragma once

#include "store/pg_params.hpp"
#include "store/pg_result.hpp"
#include "store/pool.hpp"
#include "store/prepared.hpp"

#include "deadline.hpp"

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/posix/stream_descriptor.hpp>
#include <boost/asio/steady_timer.hpp>

#include <libpq-fe.h>

#include <chrono>
#include <deque>
#include <memory>
#include <set>
#include <stdexcept>
#include <string>

namespace gw {

namespace asio = boost::asio;

struct PgConnFree {
  void operator()(PGconn* c) const { PQfinish(c); }
};
using PgConnPtr = std::unique_ptr<PGconn, PgConnFree>;

// Connects and sets the session up as the pool's sessions are
// (session_setup_sql), then switches to non-blocking. Blocking (a host
// name may be resolved): call it on a database worker, never an I/O
// thread. Throws pqxx::broken_connection when the database cannot be reached,
// AuthorityRefused when options.guard refuses its server; `admitted` gets
// the guard's generation it was admitted under.
PgConnPtr open_pg_connection(const SessionOptions& options, std::uint64_t* admitted = nullptr);

// Nothing was sent: the connection was found closed, or broke before the
// statement left. The decision may be made elsewhere as it is.
struct PgNotSent : std::runtime_error {
  using std::runtime_error::runtime_error;
};

class PgConnection : public std::enable_shared_from_this<PgConnection> {
 public:
  // `call_timeout`: how long an answer may take before the connection is
  // given up (the server's statement_timeout normally ends it first).
  PgConnection(asio::any_io_executor executor, PgConnPtr connection, std::chrono::milliseconds call_timeout);
  ~PgConnection();
  PgConnection(const PgConnection&) = delete;
  PgConnection& operator=(const PgConnection&) = delete;

  // Sends `statement` (prepared on this connection at its first use) with
  // `params` outside a transaction block and awaits its rows. Throws
  // PgNotSent (see above); Conflict (nothing committed); AuthorityUnavailable
  // (the database refused or timed out; "in doubt" when the connection broke
  // after sending: it may have committed, and it is never sent again);
  // pqxx::sql_error, with its SQLSTATE, for any other error. Calls may
  // overlap: each is answered in the order sent, and a break leaves every
  // call still waiting for its answer in doubt.
  asio::awaitable<PgResult> run(const Statement& statement, const PgParams& params);

  // Broken or closed: never lent again (calls already sent may still be answered).
  bool broken() const { return broken_; }
  // Calls sent and not yet answered, and when the oldest of them was sent
  // (the clock's epoch when none is: a connection lent with nothing on its
  // way is never counted as within the shelf's pipelining window).
  std::size_t in_flight() const { return calls_.size(); }
  std::chrono::steady_clock::time_point oldest_sent() const;
  // The authority guard's generation it was admitted under (store/authority_guard.hpp).
  std::uint64_t admitted = 0;

 private:
  // A call sent and not yet answered, on its coroutine's frame: waits on
  // `turn` until it is the oldest one, then reads its own answer.
  struct Call {
    asio::steady_timer turn;
    std::chrono::steady_clock::time_point sent;
  };

  // The server closed the connection, or sent something unasked (its
  // goodbye before closing): looked at without a round trip.
  bool closed_by_server() const;
  // Writes what libpq holds. Throws std::runtime_error when the connection broke.
  asio::awaitable<void> flush();
  // Reads the oldest call's answer, up to its Sync: the first error among
  // its results, else its statement's rows; `prepare_failed` set when it
  // began with a Prepare that failed. Throws std::runtime_error when the
  // connection broke.
  asio::awaitable<PgResultPtr> results(bool prepare, bool* prepare_failed);
  // Waits until `call` is the oldest (throws std::runtime_error when the
  // connection broke first), then arms the deadline for its answer.
  asio::awaitable<void> await_turn(Call& call);
  // `call` answered (or given up): the next one's turn.
  void done(Call& call);
  // What a wait on the socket is for.
  enum class Ready { to_read, to_write };
  asio::awaitable<void> wait(Ready ready);
  // Whether the statement may have reached the server when it failed.
  enum class Sent { no, maybe };
  [[noreturn]] void fail(const PGresult* result, const Statement& statement, Sent sent);

  PgConnPtr connection_;
  asio::posix::stream_descriptor socket_;
  Deadline deadline_;  // for the oldest call's answer; stopped before socket_ goes
  std::chrono::milliseconds call_timeout_;
  std::set<std::string, std::less<>> prepared_;
  std::deque<Call*> calls_;  // sent and not yet answered, oldest first
  bool broken_ = false;      // never lent again
  bool lost_ = false;        // nothing more can be read: every call still waiting is in doubt
  bool timed_out_ = false;
};

}  // namespace gw
