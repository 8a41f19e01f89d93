// The PostgreSQL connections each I/O thread drives itself
// (service/db/pg_connection.hpp): database.direct_connections times the
// threads in all, a budget the threads' shelves share, so a thread serving
// most agents may hold most of them. Each is opened on a database worker the
// first time one is wanted and none is free, then kept, unless a shelf left
// below its share (direct_connections) finds the budget spent: a shelf
// holding more then closes the next one given back to it. A decision that
// finds none free goes to the worker pool while the budget has room. Once
// it is spent, its statement is sent behind those already on their way on
// one of its shelf's connections, up to database.direct_pipeline at once per
// connection; past that it may wait its turn (take_in_turn).
#pragma once

#include "service/db/pg_connection.hpp"
#include "store/pool.hpp"

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/io_context.hpp>

#include <chrono>
#include <cstddef>
#include <memory>
#include <vector>

namespace gw {

class DirectConnections {
 public:
  // One shelf of connections per io_context in `ios`, `per_thread` each, each
  // lent to up to `pipeline` decisions at once. `pool` opens the connections.
  DirectConnections(const std::vector<asio::io_context*>& ios, Pool& pool, const SessionOptions& session,
                    unsigned per_thread, unsigned pipeline, std::chrono::milliseconds call_timeout);
  ~DirectConnections();
  DirectConnections(const DirectConnections&) = delete;
  DirectConnections& operator=(const DirectConnections&) = delete;

  // A connection of the shelf of the I/O thread `executor` belongs to, taken until the returned
  // handle is gone: a free one, or, when all are open and lent, one with room
  // in its pipeline; null when there is none (the shelf then opens one in the
  // background, if below its limit) or `executor` is not an I/O thread's.
  // Call it on that thread.
  class Shelf;
  struct Returner {
    Shelf* shelf = nullptr;
    std::shared_ptr<PgConnection> connection;  // the shelf's own, lent
    void operator()(PgConnection*);
  };
  using Taken = std::unique_ptr<PgConnection, Returner>;
  Taken take(const asio::any_io_executor& executor);

  // take(), except that when every connection of the shelf is open and lent
  // and none can take one more, it waits its turn for the next one given
  // back, at most `wait`: a decision then stays on its I/O thread and on the
  // shelf's few backends instead of handing off to a worker. Turns are the pool's lanes: an
  // outcome record is served before any new request, each lane first come
  // first served. Null as take(), or when the wait ran out or the shelf
  // lost a connection meanwhile (the pool decides then). Await it on an
  // I/O thread.
  asio::awaitable<Taken> take_in_turn(std::chrono::milliseconds wait, Lane lane);

  // Connections open now, decisions waiting their turn, and decisions
  // holding a connection, on all shelves (the thread reading may see older counts).
  std::size_t open() const;
  std::size_t waiting() const;
  std::size_t lent() const;

 private:
  // The shelf of the I/O thread `executor` belongs to; null for any other executor.
  Shelf* shelf_of(const asio::any_io_executor& executor) const;

  struct Budget;
  std::unique_ptr<Budget> budget_;
  std::vector<std::unique_ptr<Shelf>> shelves_;  // after budget_: they hold it
};

}  // namespace gw
