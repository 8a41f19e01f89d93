// Client: finds (or creates) the pool for an endpoint and hands it the
// request. The list of pools is shared between threads, so it sits behind a
// mutex; it is short (one pool per provider) and searched without building a
// key, because every forward looks it up.
#include "upstream/client.hpp"

#include "upstream/pool.hpp"

#include <mutex>
#include <vector>

namespace gw::upstream {
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
