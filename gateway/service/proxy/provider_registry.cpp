#include "service/proxy/provider_registry.hpp"

#include "service/db/resume.hpp"

#include <boost/asio/io_context.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/any_io_executor.hpp>

namespace gw {

namespace {

upstream::Endpoint endpoint_for(const ProviderConfig& p, std::uint64_t generation) {
  upstream::Endpoint e;
  e.name = p.name;
  e.tls = p.tls;
  e.host = p.host;
  e.port = p.port;
  e.ca_file = p.ca_file;
  e.connect_timeout = p.connect_timeout;
  e.request_timeout = p.request_timeout;
  e.max_connections = p.max_connections;
  e.max_queued = p.max_queued;
  e.queue_timeout = p.queue_timeout;
  e.idle_retire = p.idle_retire;
  e.max_response_body = p.max_response_body_bytes;
  e.generation = generation;
  return e;
}

}  // namespace

ProviderSet::ProviderSet(const std::vector<ProviderConfig>& providers, std::uint64_t generation)
    : configs(providers) {
  for (const auto& p : configs) routes.emplace(p.name, ProviderRoute{&p, endpoint_for(p, generation)});
}

LiveProviders::LiveProviders(const Config& config, upstream::Client* upstream)
    : upstream_(upstream), current_(std::make_shared<const ProviderSet>(config.providers, generation_)) {}

void LiveProviders::replace(const Config& config) {
  std::lock_guard lock(replacing_);
  auto next = std::make_shared<const ProviderSet>(config.providers, ++generation_);
  current_.store(next);
  // Requests from now on carry the new generation and would move their
  // pools on by themselves; this also moves pools nobody is sending to, so
  // a raised limit starts their queued requests now.
  if (upstream_)
    for (const auto& [name, route] : next->routes) upstream_->update(route.endpoint);
}

boost::asio::awaitable<upstream::Result> exchange(upstream::Client& client, const upstream::Endpoint& endpoint,
                                                  upstream::Request request) {
  return resume_on<upstream::Result>([&client, &endpoint, request = std::move(request)](
                                         const asio::any_io_executor& executor,
                                         std::function<void(upstream::Result)> done) mutable {
    // On the io_context the awaiting coroutine runs on, so the exchange and
    // its reply stay on this thread (each I/O thread has its own io_context).
    asio::io_context* io = nullptr;
    if (const auto* strand = executor.target<asio::strand<asio::io_context::executor_type>>())
      io = &strand->get_inner_executor().context();
    else if (const auto* plain = executor.target<asio::io_context::executor_type>())
      io = &plain->context();
    if (io)
      client.send(*io, endpoint, std::move(request), std::move(done));
    else
      client.send(endpoint, std::move(request), std::move(done));
  });
}

}  // namespace gw
