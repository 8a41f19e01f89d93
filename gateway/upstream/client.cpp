// Client: finds (or creates) the pool for an endpoint and hands it the
// request. The list of pools is shared between threads, so it sits behind a
// mutex; it is short (one pool per provider) and searched without building a
// key, because every forward looks it up.
#include "upstream/client.hpp"

#include "upstream/exchange.hpp"
#include "upstream/pool.hpp"
#include "upstream/request_rules.hpp"

#include <boost/asio/associated_executor.hpp>
#include <boost/asio/async_result.hpp>
#include <boost/asio/dispatch.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <memory>
#include <mutex>
#include <new>
#include <vector>

namespace gw::upstream {

namespace net = boost::asio;

namespace detail {

class ClientState {
 public:
  explicit ClientState(net::io_context& io) : io_(io) {}

  // Pools are keyed by name, host, port and TLS.
  struct KeyedPool {
    std::string name, host, port;
    bool tls;
    std::shared_ptr<detail::ConnectionPool> shared;
    bool serves(const Endpoint& e) const { return tls == e.tls && name == e.name && host == e.host && port == e.port; }
  };

  // The endpoint's pool, made now if there is none yet; null once shut down.
  std::shared_ptr<ConnectionPool> pool_for(const Endpoint& endpoint) {
    std::lock_guard lock(mutex_);
    if (stopped_) return nullptr;
    for (const auto& p : pools_)
      if (p.serves(endpoint)) return p.shared;
    auto made = std::make_shared<ConnectionPool>(io_, endpoint);
    pools_.push_back({endpoint.name, endpoint.host, endpoint.port, endpoint.tls, made});
    return made;
  }

  net::io_context& io_;
  std::mutex mutex_;
  std::vector<KeyedPool> pools_;  // guarded by mutex_
  bool stopped_ = false;           // guarded by mutex_
};

}  // namespace detail

Client::Client(boost::asio::io_context& io) : state_(std::make_unique<detail::ClientState>(io)) {}

Client::~Client() { shutdown(); }

void Client::send(const Endpoint& endpoint, Request request, std::function<void(Result)> done) {
  send(state_->io_, endpoint, std::move(request), std::move(done));
}

void Client::send(boost::asio::io_context& on, const Endpoint& endpoint, Request request,
                  std::function<void(Result)> done) {
  auto pool = state_->pool_for(endpoint);
  if (!pool) {
    return detail::deliver(on, std::move(done),
                           detail::unsent(Failure::queue_timeout, "upstream client is shut down"));
  }
  pool->submit(on, endpoint, std::move(request), std::move(done));
}

namespace {

// The io_context behind a coroutine's executor, or null.
net::io_context* io_context_of(const net::any_io_executor& executor) {
  if (const auto* strand = executor.target<net::strand<net::io_context::executor_type>>())
    return &strand->get_inner_executor().context();
  if (const auto* plain = executor.target<net::io_context::executor_type>()) return &plain->context();
  return nullptr;
}

}  // namespace

net::awaitable<Result> Client::exchange(const Endpoint& endpoint, Request request) {
  auto* io = io_context_of(co_await net::this_coro::executor);
  auto pool = state_->pool_for(endpoint);
  if (io && pool && detail::request_problem(request).empty()) {
    const std::string partition = request.partition;
    if (auto conn = pool->take_now(*io, endpoint, partition)) {
      detail::Exchanged done;
      try {
        // take_now found it quiet just now, and awaiting the exchange starts
        // it on this turn of the event loop.
        done = co_await detail::exchange(std::move(conn), std::move(request), endpoint,
                                         detail::ConnectionUse::reused_just_checked);
      } catch (const std::bad_alloc&) {
        done = detail::out_of_memory();
      }
      pool->release(*io, partition, std::move(done.reusable));
      co_return std::move(done.result);
    }
  }
  // send()'s way: through the pool's queue, or on a new connection. Its
  // callback comes on the io_context the exchange ran on; the coroutine is
  // resumed on its own executor (the same thread when `io` was found).
  co_return co_await net::async_initiate<const net::use_awaitable_t<>&, void(Result)>(
      [&](auto handler) {
        auto shared = std::make_shared<decltype(handler)>(std::move(handler));
        send(io ? *io : state_->io_, endpoint, std::move(request), [shared](Result result) {
          auto resume = [shared, result = std::move(result)]() mutable { std::move(*shared)(std::move(result)); };
          net::dispatch(net::get_associated_executor(*shared), std::move(resume));
        });
      },
      net::use_awaitable);
}

void Client::update(const Endpoint& endpoint) {
  if (auto pool = state_->pool_for(endpoint)) pool->update(endpoint);
}

void Client::shutdown() {
  std::vector<detail::ClientState::KeyedPool> pools;
  {
    std::lock_guard lock(state_->mutex_);
    state_->stopped_ = true;
    pools.swap(state_->pools_);
  }
  for (auto& p : pools) p.shared->shutdown();
}

}  // namespace gw::upstream
