// The per-endpoint pool (see pool.hpp).
#include "upstream/pool.hpp"

#include "upstream/connection.hpp"
#include "upstream/exchange.hpp"
#include "upstream/request_rules.hpp"
#include "upstream/tls_context.hpp"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/ssl/context.hpp>

#include <algorithm>
#include <exception>
#include <optional>

namespace gw::upstream::detail {

struct ConnectionPool::Call {
  net::io_context* on = nullptr;
  Endpoint endpoint;
  Request request;
  std::string partition;  // request.partition, kept once the request has gone to its exchange
  std::function<void(Result)> done;
  // Only for a call that waits: its queue deadline, on `on`, where a freed
  // slot starts it too.
  std::optional<Timer> queue_timer;
  bool queued = false;  // guarded by the pool's mutex
};

Result unsent(Failure failure, std::string detail) {
  Result result;
  result.failure = failure;
  result.detail = std::move(detail);
  return result;
}

void deliver(net::io_context& io, std::function<void(Result)> done, Result result) {
  if (!done) return;
  net::post(io, [done = std::move(done), result = std::move(result)]() mutable { done(std::move(result)); });
}

ConnectionPool::ConnectionPool(net::io_context& home, const Endpoint& endpoint)
    : home_(home),
      generation_(endpoint.generation),
      // 0 would queue every request until its queue deadline.
      max_connections_(std::max<std::size_t>(1, endpoint.max_connections)),
      max_queued_(endpoint.max_queued),
      idle_retire_(endpoint.idle_retire),
      sweep_timer_(home.get_executor()) {
  if (endpoint.tls) tls_context_ = make_tls_context(endpoint.ca_file, tls_context_error_);
}

ConnectionPool::~ConnectionPool() = default;

void ConnectionPool::submit(net::io_context& on, const Endpoint& endpoint, Request request,
                  std::function<void(Result)> done) {
  auto c = std::make_shared<Call>();
  c->on = &on;
  c->endpoint = endpoint;
  c->request = std::move(request);
  c->partition = c->request.partition;
  c->done = std::move(done);
  auto refuse = [&](Failure failure, std::string detail) {
    deliver(on, std::move(c->done), unsent(failure, std::move(detail)));
  };
  if (auto problem = request_problem(c->request); !problem.empty())
    return refuse(Failure::write_failed_unsent, "request not sent: " + problem);
  if (endpoint.tls && !tls_context_) return refuse(Failure::tls_failed, tls_context_error_);
  std::vector<std::shared_ptr<Call>> started;
  std::optional<Result> refusal;
  bool run_now = false;
  {
    std::lock_guard lock(mutex_);
    if (take_limits_locked(endpoint)) started = take_waiters_locked();  // room a raised limit made
    if (stopped_) {
      refusal = unsent(Failure::queue_timeout, "upstream client is shut down");
    } else if (busy_ < max_connections_ && waiters_.empty()) {
      ++busy_;
      run_now = true;
    } else if (waiters_.size() >= max_queued_) {
      // Bounded: past it a burst is refused at once, unsent, instead of
      // holding memory and agents' connections until each one's deadline.
      refusal = unsent(Failure::queue_timeout,
                       "upstream queue full (max_queued " + std::to_string(max_queued_) + "); nothing was sent");
    } else {
      c->queued = true;
      c->queue_timer.emplace(on.get_executor());
      c->queue_timer->expires_after(c->endpoint.queue_timeout);
      c->queue_timer->async_wait([self = shared_from_this(), c](error_code) { self->on_queue_deadline(c); });
      waiters_.push_back(c);
    }
  }
  start_elsewhere(std::move(started));
  if (refusal) return deliver(on, std::move(c->done), std::move(*refusal));
  if (!run_now) return;
  if (on.get_executor().running_in_this_thread()) return start(c);
  net::post(on, [self = shared_from_this(), c] { self->start(c); });
}

void ConnectionPool::update(const Endpoint& endpoint) {
  std::vector<std::shared_ptr<Call>> started;
  {
    std::lock_guard lock(mutex_);
    if (stopped_) return;
    if (take_limits_locked(endpoint)) started = take_waiters_locked();  // raised: room for waiters
  }
  start_elsewhere(std::move(started));
}

bool ConnectionPool::take_limits_locked(const Endpoint& endpoint) {
  if (endpoint.generation <= generation_) return false;  // the same settings, or older ones
  generation_ = endpoint.generation;
  max_connections_ = std::max<std::size_t>(1, endpoint.max_connections);
  max_queued_ = endpoint.max_queued;
  idle_retire_ = endpoint.idle_retire;
  // Exchanges over a lowered limit finish as they are: nothing is closed.
  return true;
}

void ConnectionPool::shutdown() {
  net::post(home_, [self = shared_from_this()] { self->stop(); });
}

void ConnectionPool::on_queue_deadline(const std::shared_ptr<Call>& c) {
  // Whoever takes a waiter off the queue clears `queued` first, under the
  // lock, so a timer that fired in the same instant finds nothing to do.
  std::size_t busy = 0;
  {
    std::lock_guard lock(mutex_);
    if (!c->queued) return;
    c->queued = false;
    waiters_.erase(std::find(waiters_.begin(), waiters_.end(), c));
    busy = busy_;
  }
  complete(*c, unsent(Failure::queue_timeout,
                      "no connection slot within queue_timeout (" + std::to_string(busy) + " exchanges in flight)"));
}

void ConnectionPool::start(const std::shared_ptr<Call>& c) {
  // Every reuse is checked, a read that may be resent too: the resend covers
  // a close, but bytes waiting on the connection would be read as its reply.
  if (auto conn = take_idle(*c->on, c->partition)) return run(c, std::move(conn), ConnectionUse::reused);
  if (auto oldest = take_oldest_idle_over_limit(c->partition)) oldest->close();
  auto conn = std::make_shared<Connection>(c->on->get_executor(), tls_context_);
  conn->connect(c->endpoint, [self = shared_from_this(), c, conn](Failure failure, std::string detail) {
    if (failure != Failure::none) return self->finish(c, unsent(failure, std::move(detail)), nullptr);
    self->run(c, conn, ConnectionUse::fresh);
  });
}

void ConnectionPool::run(const std::shared_ptr<Call>& c, std::shared_ptr<Connection> conn, ConnectionUse use) {
  net::co_spawn(*c->on, exchange(std::move(conn), std::move(c->request), c->endpoint, use),
                [self = shared_from_this(), c](std::exception_ptr error, Exchanged done) {
                  if (error) done = out_of_memory();  // the exchange throws nothing else
                  self->finish(c, std::move(done.result), std::move(done.reusable));
                });
}

// On the connection's io_context, after its exchange (or its connect) ended.
void ConnectionPool::finish(const std::shared_ptr<Call>& c, Result result, std::shared_ptr<Connection> reusable) {
  release(*c->on, c->partition, std::move(reusable));
  complete(*c, std::move(result));
}

void ConnectionPool::release(net::io_context& io, const std::string& partition, std::shared_ptr<Connection> reusable) {
  std::vector<std::shared_ptr<Call>> started;
  bool sweep = false;
  {
    std::lock_guard lock(mutex_);
    --busy_;
    if (reusable && !stopped_) {
      idle_locked(io, partition).push_back({std::move(reusable), std::chrono::steady_clock::now()});
      sweep = !sweep_armed_;
      sweep_armed_ = true;
    }
    started = take_waiters_locked();
  }
  if (reusable) reusable->close();  // only left set when the pool has stopped
  if (sweep) net::post(home_, [self = shared_from_this()] { self->schedule_sweep(); });
  start_elsewhere(std::move(started));
}

std::shared_ptr<Connection> ConnectionPool::take_now(net::io_context& io, const Endpoint& endpoint,
                                                     const std::string& partition) {
  if (endpoint.tls && !tls_context_) return nullptr;
  std::vector<std::shared_ptr<Call>> started;
  std::optional<IdleConnection> entry;
  std::chrono::milliseconds retire{};
  {
    std::lock_guard lock(mutex_);
    if (take_limits_locked(endpoint)) started = take_waiters_locked();  // room a raised limit made
    // Never ahead of a waiter: the queue is first come, first served.
    auto& idle = idle_locked(io, partition);
    if (!stopped_ && busy_ < max_connections_ && waiters_.empty() && !idle.empty()) {
      ++busy_;
      entry.emplace(std::move(idle.back()));  // newest first, as take_idle()
      idle.pop_back();
      retire = idle_retire_;
    }
  }
  start_elsewhere(std::move(started));
  if (!entry) return nullptr;
  if (reusable(*entry, retire)) return std::move(entry->conn);
  entry->conn->close();
  if (auto conn = take_idle(io, partition)) return conn;
  // Every idle one was stale: the slot goes back, and submit() opens one.
  release(io, partition, nullptr);
  return nullptr;
}

void ConnectionPool::complete(Call& c, Result result) {
  auto done = std::move(c.done);
  c.done = nullptr;  // exactly once, even if some path came back here
  if (done) done(std::move(result));
}

std::vector<std::shared_ptr<ConnectionPool::Call>> ConnectionPool::take_waiters_locked() {
  std::vector<std::shared_ptr<Call>> taken;
  while (busy_ < max_connections_ && !waiters_.empty()) {
    auto c = std::move(waiters_.front());
    waiters_.pop_front();
    c->queued = false;
    ++busy_;
    taken.push_back(std::move(c));
  }
  return taken;
}

void ConnectionPool::start_elsewhere(std::vector<std::shared_ptr<Call>> calls) {
  // Each on its own io_context, where its queue timer lives.
  for (auto& c : calls)
    net::post(*c->on, [self = shared_from_this(), c] {
      c->queue_timer->cancel();
      self->start(c);
    });
}

std::deque<ConnectionPool::IdleConnection>& ConnectionPool::idle_locked(net::io_context& io, const std::string& partition) {
  for (auto& list : idle_)
    if (list.io == &io && list.partition == partition) return list.entries;
  idle_.push_back({&io, partition, {}});
  return idle_.back().entries;
}

bool ConnectionPool::reusable(IdleConnection& entry, std::chrono::milliseconds retire) {
  // Retiring well before the provider's keep-alive timeout makes the race
  // "peer closes just as we write" (an unknown outcome) rare.
  return std::chrono::steady_clock::now() - entry.since < retire && !entry.conn->peer_closed();
}

std::shared_ptr<Connection> ConnectionPool::take_idle(net::io_context& io, const std::string& partition) {
  // Newest first: it is the least likely to have been closed by the peer.
  // The check for a peer's close is a system call, so it is made outside
  // the lock, on a connection nobody else can take any more.
  for (;;) {
    std::optional<IdleConnection> entry;
    std::chrono::milliseconds retire{};
    {
      std::lock_guard lock(mutex_);
      retire = idle_retire_;
      auto& idle = idle_locked(io, partition);
      if (idle.empty()) return nullptr;
      entry.emplace(std::move(idle.back()));
      idle.pop_back();
    }
    if (!reusable(*entry, retire)) {
      entry->conn->close();
      continue;
    }
    return std::move(entry->conn);
  }
}

std::shared_ptr<Connection> ConnectionPool::take_oldest_idle_over_limit(const std::string& partition) {
  // max_connections bounds the provider's sockets, other tenants' idle ones
  // included: with idle connections kept per tenant, each tenant's would
  // otherwise add up to the limit again. The oldest idle one of another
  // tenant makes room; closing an idle socket from this thread is safe, as
  // in sweep(). The caller's own tenant's idle connections on other
  // io_contexts are not closed for it: under a queue every freed slot would
  // then close one and open one (they are at most one per io_context and
  // slot, and the sweep retires them). Runs once per new connection, never
  // per reuse.
  std::lock_guard lock(mutex_);
  std::size_t others_idle = 0;
  IdleList* from = nullptr;
  for (auto& list : idle_) {
    if (list.partition == partition) continue;
    others_idle += list.entries.size();
    if (!list.entries.empty() && (!from || list.entries.front().since < from->entries.front().since)) from = &list;
  }
  if (busy_ + others_idle <= max_connections_ || !from) return nullptr;  // busy_ counts this call
  auto conn = std::move(from->entries.front().conn);
  from->entries.pop_front();
  return conn;
}

void ConnectionPool::schedule_sweep() {
  std::chrono::steady_clock::time_point oldest = std::chrono::steady_clock::time_point::max();
  std::chrono::milliseconds retire{};
  {
    std::lock_guard lock(mutex_);
    retire = idle_retire_;
    for (const auto& list : idle_)
      if (!list.entries.empty()) oldest = std::min(oldest, list.entries.front().since);
    if (stopped_ || oldest == std::chrono::steady_clock::time_point::max()) {
      sweep_armed_ = false;
      return;
    }
    sweep_armed_ = true;
  }
  sweep_timer_.expires_at(oldest + retire);
  sweep_timer_.async_wait([self = shared_from_this()](error_code ec) {
    if (ec) {
      std::lock_guard lock(self->mutex_);
      self->sweep_armed_ = false;
      return;
    }
    self->sweep();
  });
}

void ConnectionPool::sweep() {
  // Closes idle connections nobody will reuse, so they do not hold the
  // provider's sockets open; take_idle() would refuse them anyway. A socket
  // that sits idle has no operation in progress, so it may be closed from
  // here whichever io_context it was opened on.
  std::vector<std::shared_ptr<Connection>> retired;
  {
    std::lock_guard lock(mutex_);
    const auto now = std::chrono::steady_clock::now();
    for (auto& list : idle_)
      while (!list.entries.empty() && now - list.entries.front().since >= idle_retire_) {
        retired.push_back(std::move(list.entries.front().conn));
        list.entries.pop_front();
      }
  }
  for (auto& conn : retired) conn->close();
  schedule_sweep();
}

void ConnectionPool::stop() {
  std::vector<std::shared_ptr<Connection>> idle;
  std::deque<std::shared_ptr<Call>> waiters;
  {
    std::lock_guard lock(mutex_);
    stopped_ = true;
    for (auto& list : idle_)
      for (auto& entry : list.entries) idle.push_back(std::move(entry.conn));
    idle_.clear();
    waiters.swap(waiters_);
    for (auto& c : waiters) c->queued = false;
  }
  for (auto& conn : idle) conn->close();
  sweep_timer_.cancel();
  for (auto& c : waiters)
    net::post(*c->on, [c] {
      c->queue_timer->cancel();
      complete(*c, unsent(Failure::queue_timeout, "upstream client shut down while the request was queued"));
    });
}

}  // namespace gw::upstream::detail
