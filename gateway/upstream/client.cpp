// Client: finds (or creates) the pool for an endpoint and hands it the
// request. The map is the only state shared between threads outside a
// strand, so it sits behind a mutex.
#include "upstream/client.hpp"

#include "upstream/pool.hpp"

#include <mutex>
#include <unordered_map>

namespace gw::upstream {
namespace detail {

class client_state {
 public:
  explicit client_state(net::io_context& io) : io_(io) {}

  net::io_context& io_;
  std::mutex mutex_;
  std::unordered_map<std::string, std::shared_ptr<pool>> pools_;  // guarded by mutex_
  bool stopped_ = false;                                           // guarded by mutex_
};

namespace {

std::string pool_key(const Endpoint& endpoint) {
  std::string key = endpoint.name;
  for (const auto* part : {&endpoint.host, &endpoint.port}) key += '\0' + *part;
  key += '\0';
  key += endpoint.tls ? "tls" : "tcp";
  return key;
}

}  // namespace
}  // namespace detail

Client::Client(boost::asio::io_context& io) : state_(std::make_unique<detail::client_state>(io)) {}

Client::~Client() { shutdown(); }

void Client::send(const Endpoint& endpoint, Request request, std::function<void(Result)> done) {
  std::shared_ptr<detail::pool> pool;
  {
    std::lock_guard lock(state_->mutex_);
    if (!state_->stopped_) {
      auto& slot = state_->pools_[detail::pool_key(endpoint)];
      if (!slot) slot = std::make_shared<detail::pool>(state_->io_, endpoint);
      pool = slot;
    }
  }
  if (!pool) {
    return detail::deliver(state_->io_, std::move(done),
                           detail::unsent(Failure::queue_timeout, "upstream client is shut down"));
  }
  pool->submit(endpoint, std::move(request), std::move(done));
}

void Client::update(const Endpoint& endpoint) {
  std::shared_ptr<detail::pool> pool;
  {
    std::lock_guard lock(state_->mutex_);
    if (state_->stopped_) return;
    auto& slot = state_->pools_[detail::pool_key(endpoint)];
    if (!slot) slot = std::make_shared<detail::pool>(state_->io_, endpoint);
    pool = slot;
  }
  pool->update(endpoint);
}

void Client::shutdown() {
  std::unordered_map<std::string, std::shared_ptr<detail::pool>> pools;
  {
    std::lock_guard lock(state_->mutex_);
    state_->stopped_ = true;
    pools.swap(state_->pools_);
  }
  for (auto& [key, pool] : pools) pool->shutdown();
}

}  // namespace gw::upstream
