// Each configured provider with the upstream client's endpoint for it: the
// proxy, the lookup loop and the webhook route all reach providers by name.
// The providers' settings are one immutable snapshot, swapped whole on
// reload (SIGHUP): a request takes the current one once, at its start, and
// uses it from admission to outcome.
#pragma once

#include "config/config.hpp"
#include "upstream/client.hpp"

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace gw {

struct ProviderRoute {
  const ProviderConfig* config;
  upstream::Endpoint endpoint;
};

using ProviderRoutes = std::map<std::string, ProviderRoute, std::less<>>;

// Every provider's settings at one moment: the configs (credentials and
// limits included) and the endpoints made from them, tagged with the
// settings generation the upstream pools compare (upstream/client.hpp).
struct ProviderSet {
  ProviderSet(const std::vector<ProviderConfig>& providers, std::uint64_t generation);
  ProviderSet(const ProviderSet&) = delete;  // routes point into configs
  ProviderSet& operator=(const ProviderSet&) = delete;

  const std::vector<ProviderConfig> configs;
  ProviderRoutes routes;  // by name
};

// The current ProviderSet. current() is one atomic load; whoever holds the
// pointer keeps that snapshot alive, so a forward in flight finishes with the
// credential and limits it started with.
class LiveProviders {
 public:
  // `upstream` may be null (no providers configured).
  LiveProviders(const Config& config, upstream::Client* upstream);

  std::shared_ptr<const ProviderSet> current() const { return current_.load(); }

  // Swaps in `config`'s providers (config/reload.hpp has checked that only
  // credentials and limits differ) and hands the new limits to the upstream
  // pools, which keep every open connection.
  void replace(const Config& config);

 private:
  upstream::Client* upstream_;
  std::mutex replacing_;            // one replace at a time: generations stay in order
  std::uint64_t generation_ = 1;    // under replacing_
  std::atomic<std::shared_ptr<const ProviderSet>> current_;
};

}  // namespace gw
