// The PostgreSQL connections each I/O thread drives itself
// (service/db/pg_connection.hpp): up to database.direct_connections per thread,
// opened on a database worker the first time one is wanted and none is
// free, then kept. A decision that finds none free goes to the worker pool
// as before, so a shelf only ever adds a way to decide, never a wait.
#pragma once

#include "service/db/pg_connection.hpp"
#include "store/pool.hpp"

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/io_context.hpp>

#include <chrono>
#include <cstddef>
#include <memory>
#include <vector>

namespace gw {

class DirectConnections {
 public:
  // One shelf of connections per io_context in `ios`. `pool` opens the connections.
  DirectConnections(const std::vector<asio::io_context*>& ios, Pool& pool, const SessionOptions& session,
                    unsigned per_thread, std::chrono::milliseconds call_timeout);
  ~DirectConnections();
  DirectConnections(const DirectConnections&) = delete;
  DirectConnections& operator=(const DirectConnections&) = delete;

  // A connection of the shelf of the I/O thread `executor` belongs to, taken until the returned
  // handle is gone; null when that shelf has none free (it then opens one in
  // the background, if below its limit) or `executor` is not an I/O
  // thread's. Call it on that thread.
  class Shelf;
  struct Returner {
    Shelf* shelf = nullptr;
    std::shared_ptr<PgConnection> connection;  // the shelf's own, lent
    void operator()(PgConnection*);
  };
  using Taken = std::unique_ptr<PgConnection, Returner>;
  Taken take(const asio::any_io_executor& executor);

  // Connections open now, on all shelves (the thread reading may see an
  // older count).
  std::size_t open() const;

 private:
  std::vector<std::unique_ptr<Shelf>> shelves_;
};

}  // namespace gw
