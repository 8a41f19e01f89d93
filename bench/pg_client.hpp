// gateway-load's PostgreSQL session for the "client" mode: what an agent that makes the
// ownership decisions itself (a careful client library, bench/minimal_protected.sql's SQL)
// sends, one statement per round trip, each awaited on the socket in the agent's event loop
// as its HTTP replies are. No pipelining and no batching: that is what pgbench -M prepared
// does for the minimal SQL, and what a client library gives its caller.
#pragma once

#include <boost/asio/awaitable.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/posix/stream_descriptor.hpp>

#include <libpq-fe.h>

#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace bench {

// A prepared statement: its name and text.
struct PgStatement {
  const char* name;
  const char* sql;
};

// What one statement came back with.
struct PgAnswer {
  std::string sqlstate;           // empty when it succeeded
  std::string error;              // the server's (or libpq's) message when it failed
  std::vector<std::string> row;   // the first row's values, as text (NULL as empty)
  bool has_row = false;
  bool ok() const { return sqlstate.empty() && error.empty(); }
  // 40001 (serialization failure) and 40P01 (deadlock): the transaction may run again.
  bool retryable() const { return sqlstate == "40001" || sqlstate == "40P01"; }
};

class PgClient {
 public:
  // Connects and prepares `statements` (blocking: called before the clock starts), then turns
  // the connection non-blocking. Throws std::runtime_error with libpq's message.
  PgClient(boost::asio::io_context& io, const std::string& conninfo, const std::vector<PgStatement>& statements);
  ~PgClient();
  PgClient(const PgClient&) = delete;
  PgClient& operator=(const PgClient&) = delete;

  // Runs prepared statement `name` with text parameters and awaits its answer. A broken
  // connection is an answer with `error` set (and no SQLSTATE).
  boost::asio::awaitable<PgAnswer> run(const char* name, const std::vector<const char*>& params);

 private:
  PGconn* connection_ = nullptr;
  boost::asio::posix::stream_descriptor socket_;  // a duplicate of libpq's socket, for readiness
};

}  // namespace bench
