// One endpoint's connection pool: at most max_connections exchanges at a
// time, a FIFO queue of at most max_queued with a deadline for the rest, idle keep-alive
// connections checked before reuse and retired after idle_retire. The limits
// follow the newest settings generation seen (client.hpp, Endpoint). All
// state lives on the pool's strand; submit(), update() and shutdown() may be
// called from any thread.
#pragma once

#include "upstream/asio_types.hpp"
#include "upstream/client.hpp"

#include <deque>
#include <functional>
#include <memory>
#include <string>

namespace boost::asio::ssl {
class context;
}

namespace gw::upstream::detail {

class connection;

// A result for a request that never reached the socket.
Result unsent(Failure failure, std::string detail);

// Posts done(result) to the io_context, so callers' code never runs on a
// pool's strand nor inside send().
void deliver(net::io_context& io, std::function<void(Result)> done, Result result);

class pool : public std::enable_shared_from_this<pool> {
 public:
  // Pool-wide settings (max_connections, max_queued, idle_retire, ca_file)
  // come from `endpoint`, the limits until a newer generation comes;
  // per-request limits come from each submit().
  pool(net::io_context& io, const Endpoint& endpoint);
  ~pool();
  pool(const pool&) = delete;
  pool& operator=(const pool&) = delete;

  void submit(const Endpoint& endpoint, Request request, std::function<void(Result)> done);
  void update(const Endpoint& endpoint);
  void shutdown();

 private:
  struct call;
  struct idle_connection {
    std::shared_ptr<connection> conn;
    std::chrono::steady_clock::time_point since;
  };

  void take_limits(const Endpoint& endpoint);
  void admit(const std::shared_ptr<call>& c);
  void on_queue_deadline(const std::shared_ptr<call>& c);
  void start(const std::shared_ptr<call>& c);
  void run(const std::shared_ptr<call>& c, std::shared_ptr<connection> conn);
  void finish(const std::shared_ptr<call>& c, Result result, std::shared_ptr<connection> reusable);
  void complete(call& c, Result result);
  void start_waiters();
  std::shared_ptr<connection> take_idle();
  void schedule_sweep();
  void sweep();
  void stop();

  net::io_context& io_;
  strand_type strand_;
  std::shared_ptr<net::ssl::context> tls_context_;  // null for plain TCP or when loading failed
  std::string tls_context_error_;

  // Strand-only state.
  std::uint64_t generation_;  // of the limits below
  std::size_t max_connections_;
  std::size_t max_queued_;
  std::chrono::milliseconds idle_retire_;
  std::size_t busy_ = 0;                      // exchanges holding a slot, connecting ones included
  std::deque<idle_connection> idle_;          // oldest first
  std::deque<std::shared_ptr<call>> waiters_;  // FIFO
  timer_type sweep_timer_;
  bool sweep_armed_ = false;
  bool stopped_ = false;
};

}  // namespace gw::upstream::detail
