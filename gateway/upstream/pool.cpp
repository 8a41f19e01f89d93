// The per-endpoint pool (see pool.hpp).
#include "upstream/pool.hpp"

#include "upstream/connection.hpp"
#include "upstream/exchange.hpp"
#include "upstream/request_rules.hpp"
#include "upstream/tls_context.hpp"

#include <boost/asio/post.hpp>
#include <boost/asio/ssl/context.hpp>

#include <algorithm>
#include <optional>

namespace gw::upstream::detail {

struct pool::call {
  Endpoint endpoint;
  Request request;
  std::function<void(Result)> done;
  std::optional<timer_type> queue_timer;
  bool queued = false;
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

pool::pool(net::io_context& io, const Endpoint& endpoint)
    : io_(io),
      strand_(net::make_strand(io)),
      generation_(endpoint.generation),
      // 0 would queue every request until its queue deadline.
      max_connections_(std::max<std::size_t>(1, endpoint.max_connections)),
      max_queued_(endpoint.max_queued),
      idle_retire_(endpoint.idle_retire),
      sweep_timer_(strand_) {
  if (endpoint.tls) tls_context_ = make_tls_context(endpoint.ca_file, tls_context_error_);
}

pool::~pool() = default;

void pool::submit(const Endpoint& endpoint, Request request, std::function<void(Result)> done) {
  auto c = std::make_shared<call>();
  c->endpoint = endpoint;
  c->request = std::move(request);
  c->done = std::move(done);
  net::post(strand_, [self = shared_from_this(), c] { self->admit(c); });
}

void pool::update(const Endpoint& endpoint) {
  net::post(strand_, [self = shared_from_this(), endpoint] { self->take_limits(endpoint); });
}

void pool::shutdown() {
  net::post(strand_, [self = shared_from_this()] { self->stop(); });
}

void pool::take_limits(const Endpoint& endpoint) {
  if (endpoint.generation <= generation_) return;  // the same settings, or older ones
  generation_ = endpoint.generation;
  max_connections_ = std::max<std::size_t>(1, endpoint.max_connections);
  max_queued_ = endpoint.max_queued;
  idle_retire_ = endpoint.idle_retire;
  // Exchanges over a lowered limit finish as they are: nothing is closed.
  // Room under a raised one goes to the queue first, in order.
  if (!stopped_) start_waiters();
}

void pool::admit(const std::shared_ptr<call>& c) {
  take_limits(c->endpoint);
  if (stopped_) return complete(*c, unsent(Failure::queue_timeout, "upstream client is shut down"));
  if (auto problem = request_problem(c->request); !problem.empty())
    return complete(*c, unsent(Failure::write_failed_unsent, "request not sent: " + problem));
  if (c->endpoint.tls && !tls_context_) return complete(*c, unsent(Failure::tls_failed, tls_context_error_));
  if (busy_ < max_connections_ && waiters_.empty()) return start(c);
  // Bounded: past it a burst is refused at once, unsent, instead of holding
  // memory and agents' connections until each one's queue deadline.
  if (waiters_.size() >= max_queued_)
    return complete(*c, unsent(Failure::queue_timeout, "upstream queue full (max_queued " +
                                                           std::to_string(max_queued_) + "); nothing was sent"));

  c->queued = true;
  c->queue_timer.emplace(strand_);
  c->queue_timer->expires_after(c->endpoint.queue_timeout);
  c->queue_timer->async_wait([self = shared_from_this(), c](error_code) { self->on_queue_deadline(c); });
  waiters_.push_back(c);
}

void pool::on_queue_deadline(const std::shared_ptr<call>& c) {
  // Whoever takes a waiter off the queue clears `queued` first, so a timer
  // that fired in the same instant finds nothing to do.
  if (!c->queued) return;
  c->queued = false;
  waiters_.erase(std::find(waiters_.begin(), waiters_.end(), c));
  complete(*c, unsent(Failure::queue_timeout, "no connection slot within queue_timeout (" +
                                                  std::to_string(busy_) + " exchanges in flight)"));
}

void pool::start(const std::shared_ptr<call>& c) {
  ++busy_;
  if (auto conn = take_idle()) return run(c, std::move(conn));
  auto conn = std::make_shared<connection>(strand_, tls_context_);
  conn->connect(c->endpoint, [self = shared_from_this(), c, conn](Failure failure, std::string detail) {
    if (failure != Failure::none) return self->finish(c, unsent(failure, std::move(detail)), nullptr);
    self->run(c, conn);
  });
}

void pool::run(const std::shared_ptr<call>& c, std::shared_ptr<connection> conn) {
  run_exchange(conn, std::move(c->request), c->endpoint,
               [self = shared_from_this(), c, conn](Result result, bool reusable) {
                 self->finish(c, std::move(result), reusable ? conn : nullptr);
               });
}

void pool::finish(const std::shared_ptr<call>& c, Result result, std::shared_ptr<connection> reusable) {
  --busy_;
  if (reusable && stopped_) {
    reusable->close();
  } else if (reusable) {
    idle_.push_back({std::move(reusable), std::chrono::steady_clock::now()});
    schedule_sweep();
  }
  complete(*c, std::move(result));
  start_waiters();
}

void pool::complete(call& c, Result result) {
  auto done = std::move(c.done);
  c.done = nullptr;  // exactly once, even if some path came back here
  deliver(io_, std::move(done), std::move(result));
}

void pool::start_waiters() {
  while (busy_ < max_connections_ && !waiters_.empty()) {
    auto c = std::move(waiters_.front());
    waiters_.pop_front();
    c->queued = false;
    c->queue_timer->cancel();
    start(c);
  }
}

std::shared_ptr<connection> pool::take_idle() {
  // Newest first: it is the least likely to have been closed by the peer.
  const auto now = std::chrono::steady_clock::now();
  while (!idle_.empty()) {
    auto entry = std::move(idle_.back());
    idle_.pop_back();
    // Retiring well before the provider's keep-alive timeout makes the race
    // "peer closes just as we write" (an unknown outcome) rare.
    if (now - entry.since >= idle_retire_ || entry.conn->peer_closed()) {
      entry.conn->close();
      continue;
    }
    return std::move(entry.conn);
  }
  return nullptr;
}

void pool::schedule_sweep() {
  if (sweep_armed_ || idle_.empty() || stopped_) return;
  sweep_armed_ = true;
  sweep_timer_.expires_at(idle_.front().since + idle_retire_);
  sweep_timer_.async_wait([self = shared_from_this()](error_code ec) {
    self->sweep_armed_ = false;
    if (!ec) self->sweep();
  });
}

void pool::sweep() {
  // Closes idle connections nobody will reuse, so they do not hold the
  // provider's sockets open; take_idle() would refuse them anyway.
  const auto now = std::chrono::steady_clock::now();
  while (!idle_.empty() && now - idle_.front().since >= idle_retire_) {
    idle_.front().conn->close();
    idle_.pop_front();
  }
  schedule_sweep();
}

void pool::stop() {
  stopped_ = true;
  for (auto& entry : idle_) entry.conn->close();
  idle_.clear();
  sweep_timer_.cancel();
  auto waiters = std::move(waiters_);
  waiters_.clear();
  for (auto& c : waiters) {
    c->queued = false;
    c->queue_timer->cancel();
    complete(*c, unsent(Failure::queue_timeout, "upstream client shut down while the request was queued"));
  }
}

}  // namespace gw::upstream::detail
