#include "service/provider_routes.hpp"

#include "service/resume.hpp"

namespace gw {

ProviderRoutes provider_routes(const Config& config) {
  ProviderRoutes routes;
  for (const auto& p : config.providers) {
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
    routes.emplace(p.name, ProviderRoute{&p, std::move(e)});
  }
  return routes;
}

boost::asio::awaitable<upstream::Result> exchange(upstream::Client& client, const upstream::Endpoint& endpoint,
                                                  upstream::Request request) {
  return resume_with<upstream::Result>(
      [&client, &endpoint, request = std::move(request)](std::function<void(upstream::Result)> done) mutable {
        client.send(endpoint, std::move(request), std::move(done));
      });
}

}  // namespace gw
