// One endpoint's connection pool: at most max_connections exchanges at a
// time (and sockets: a new one closes the oldest idle one of another partition
// past it), a FIFO queue of at most max_queued with a deadline for the rest, idle
// keep-alive connections checked before reuse (any unread byte, even for a
// read that may be resent, retires one) and retired after idle_retire.
//
// Threads: the gateway runs one io_context per I/O thread, and a request's
// exchange runs on the io_context of the thread that asked for it, so a
// pass-through never hands work to another thread. Each io_context is run by
// one thread: that is what keeps a connection's completions, its timers and
// its queued call's timer from running concurrently, without strands. The
// counters, the queue and the idle lists are shared by every thread and
// guarded by one mutex held only for a few instructions; idle connections
// are kept per io_context and partition (the tenant), so a connection is only
// ever reused on the io_context its socket was opened on, for its tenant.
//
// The limits follow the newest settings generation seen (client.hpp,
// Endpoint), from a submit() or an update().
#pragma once

#include "upstream/asio_types.hpp"
#include "upstream/client.hpp"
#include "upstream/exchange.hpp"

#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

namespace boost::asio::ssl {
class context;
}

namespace gw::upstream::detail {

class Connection;

// A result for a request that never reached the socket.
Result unsent(Failure failure, std::string detail);

// Posts done(result) to `io`, for answers given before any I/O started: the
// caller's code never runs inside send().
void deliver(net::io_context& io, std::function<void(Result)> done, Result result);

class ConnectionPool : public std::enable_shared_from_this<ConnectionPool> {
 public:
  // Pool-wide settings (max_connections, max_queued, idle_retire, ca_file)
  // come from `endpoint`, the limits until a newer generation comes;
  // per-request limits come from each submit(). `home` runs the idle sweep.
  ConnectionPool(net::io_context& home, const Endpoint& endpoint);
  ~ConnectionPool();
  ConnectionPool(const ConnectionPool&) = delete;
  ConnectionPool& operator=(const ConnectionPool&) = delete;

  // Any thread. The exchange runs on `on`: its connection is one opened on
  // `on` (idle or new), and `done` is called there. Called from `on`'s own
  // thread (the gateway's case) it starts at once; from any other, it is
  // posted there, so a connection is only ever touched on its thread.
  void submit(net::io_context& on, const Endpoint& endpoint, Request request, std::function<void(Result)> done);
  // On `on`'s own thread, for a caller that runs the exchange itself
  // (Client::exchange): a slot and an idle connection of `partition` opened
  // on `on`, checked as start() checks one, when both are free now and no
  // request waits; else null, and nothing taken. A connection returned holds
  // a slot until release().
  std::shared_ptr<Connection> take_now(net::io_context& io, const Endpoint& endpoint, const std::string& partition);
  // After an exchange on a connection from take_now() (or from start()):
  // gives its slot back, and keeps `reusable` idle for `partition` on `io`.
  void release(net::io_context& io, const std::string& partition, std::shared_ptr<Connection> reusable);
  // Any thread: newer limits (a lower max_connections closes nothing and
  // admits new exchanges only under it; a higher one starts waiters).
  void update(const Endpoint& endpoint);
  void shutdown();

 private:
  struct Call;
  struct IdleConnection {
    std::shared_ptr<Connection> conn;
    std::chrono::steady_clock::time_point since;
  };
  // The idle connections opened on one io_context for one partition
  // (Request::partition: a tenant), oldest first. A connection is reused
  // only by the partition that used it last, so a provider that confuses a
  // connection's replies cannot hand one tenant's reply to another.
  struct IdleList {
    net::io_context* io;
    std::string partition;
    std::deque<IdleConnection> entries;
  };

  // Under mutex_: takes the endpoint's limits if its generation is newer
  // (then true).
  bool take_limits_locked(const Endpoint& endpoint);
  // Holding a slot: reuse an idle connection of c's io_context or open one.
  void start(const std::shared_ptr<Call>& c);
  void run(const std::shared_ptr<Call>& c, std::shared_ptr<Connection> conn, ConnectionUse use);
  void finish(const std::shared_ptr<Call>& c, Result result, std::shared_ptr<Connection> reusable);
  void on_queue_deadline(const std::shared_ptr<Call>& c);
  static void complete(Call& c, Result result);
  // Under mutex_: hands free slots to the first waiters, returned to be
  // started on their own io_contexts once the lock is released.
  std::vector<std::shared_ptr<Call>> take_waiters_locked();
  void start_elsewhere(std::vector<std::shared_ptr<Call>> calls);
  std::shared_ptr<Connection> take_idle(net::io_context& io, const std::string& partition);
  // Whether an idle connection may serve another exchange: younger than
  // `retire` and not closed or written to by the peer (a system call: made
  // outside the lock, on a connection nobody else can take any more).
  static bool reusable(IdleConnection& entry, std::chrono::milliseconds retire);
  // Before opening a connection for `partition`: another partition's idle one
  // to close when busy + their idle ones would pass max_connections, else null.
  std::shared_ptr<Connection> take_oldest_idle_over_limit(const std::string& partition);
  std::deque<IdleConnection>& idle_locked(net::io_context& io, const std::string& partition);
  void schedule_sweep();  // on home_
  void sweep();
  void stop();

  net::io_context& home_;
  std::shared_ptr<net::ssl::context> tls_context_;  // null for plain TCP or when loading failed
  std::string tls_context_error_;

  std::mutex mutex_;
  // Guarded by mutex_.
  std::uint64_t generation_;  // of the limits below
  std::size_t max_connections_;
  std::size_t max_queued_;
  std::chrono::milliseconds idle_retire_;
  std::size_t busy_ = 0;                       // exchanges holding a slot, connecting ones included
  std::vector<IdleList> idle_;                // one per io_context that has had a connection
  std::deque<std::shared_ptr<Call>> waiters_;  // FIFO
  bool sweep_armed_ = false;
  bool stopped_ = false;

  // The idle sweep's timer, armed and fired on home_.
  Timer sweep_timer_;
};

}  // namespace gw::upstream::detail
