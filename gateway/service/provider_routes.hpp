// Each configured provider with the upstream client's endpoint for it: the
// proxy, the lookup loop and the webhook route all reach providers by name.
#pragma once

#include "config/config.hpp"
#include "upstream/client.hpp"

#include <boost/asio/awaitable.hpp>

#include <functional>
#include <map>
#include <string>

namespace gw {

struct ProviderRoute {
  const ProviderConfig* config;
  upstream::Endpoint endpoint;
};

using ProviderRoutes = std::map<std::string, ProviderRoute, std::less<>>;

// Points into `config`, which must outlive the routes.
ProviderRoutes provider_routes(const Config& config);

// One exchange through the upstream client, awaited: the coroutine resumes
// on its own executor with the result.
boost::asio::awaitable<upstream::Result> exchange(upstream::Client& client, const upstream::Endpoint& endpoint,
                                                  upstream::Request request);

}  // namespace gw
