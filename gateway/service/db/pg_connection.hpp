// A PostgreSQL connection that an I/O thread drives itself with libpq's
// non-blocking calls: a statement is sent and its answer awaited on the
// socket, in the thread's own epoll, like an upstream reply. A decision made
// here skips the two thread hand-offs of the worker pool (the worker woken
// with the job, the I/O thread woken with its result), which at one agent
// cost as much as the statement itself (docs/performance.md).
//
// Only for a decision that is one statement sent alone (autocommit: the
// session's default makes it a SERIALIZABLE transaction of its own), so no
// transaction is ever open across an await.
#pragma once

#include "store/pg_params.hpp"
#include "store/pg_result.hpp"
#include "store/pool.hpp"
#include "store/prepared.hpp"

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/posix/stream_descriptor.hpp>
#include <boost/asio/steady_timer.hpp>

#include <libpq-fe.h>

#include <chrono>
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
  // pqxx::sql_error, with its SQLSTATE, for any other error. One call at a time.
  asio::awaitable<PgResult> run(const Statement& statement, const PgParams& params);

  // Broken or closed: never used again.
  bool broken() const { return broken_; }
  // The authority guard's generation it was admitted under (store/authority_guard.hpp).
  std::uint64_t admitted = 0;

 private:
  // The server closed the connection, or sent something unasked (its
  // goodbye before closing): looked at without a round trip.
  bool closed_by_server() const;
  // Writes what libpq holds; then reads until the statement's results are
  // all in: the first error among them, else the first. Throws
  // std::runtime_error when the connection broke.
  asio::awaitable<void> flush();
  asio::awaitable<PgResultPtr> results();
  // What a wait on the socket is for.
  enum class Ready { to_read, to_write };
  asio::awaitable<void> wait(Ready ready);
  // Whether the statement may have reached the server when it failed.
  enum class Sent { no, maybe };
  [[noreturn]] void fail(const PGresult* result, const Statement& statement, Sent sent);

  PgConnPtr connection_;
  asio::posix::stream_descriptor socket_;
  asio::steady_timer deadline_;
  std::chrono::milliseconds call_timeout_;
  std::set<std::string, std::less<>> prepared_;
  bool broken_ = false;
  bool timed_out_ = false;
  unsigned call_ = 0;  // which call the deadline belongs to
};

}  // namespace gw
