#include "service/proxy/provider_registry.hpp"

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

}  // namespace gw
