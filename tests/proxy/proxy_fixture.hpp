// Shared by the proxy tests: a real demo provider process behind an
// in-process gateway, and the agent's side of a protected write
// (spec section 3) as one struct.
#pragma once

#include "support/gateway_fixture.hpp"
#include "support/provider_process.hpp"

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace gw::test {

// The environment variables the gateway config names for each tenant's
// credential at the booking provider (provider_credential, _b, _c).
inline const std::string booking_credential_env = "GW_TEST_BOOKING_KEY";
inline const std::string booking_credential_env_b = "GW_TEST_BOOKING_KEY_B";
inline const std::string booking_credential_env_c = "GW_TEST_BOOKING_KEY_C";

// What a gateway process started with booking_provider_config needs in its environment.
std::vector<std::pair<std::string, std::string>> booking_credential_envs();

struct ProviderSettings {
  std::int64_t request_timeout_ms = 10000;
  std::int64_t connect_timeout_ms = 2000;
  std::int64_t max_request_body_bytes = 65536;
  nlohmann::json outcomes;  // null: the gateway's defaults
  nlohmann::json allowed_path_forms;  // null: none
  std::int64_t max_connections = 32;
  std::int64_t max_queued = 1024;
};

// The "providers" entry for the demo provider, named "booking".
nlohmann::json booking_provider_config(const ProviderProcess& provider, const ProviderSettings& settings = {});

// Gateway options whose config gains the booking provider. Sets the
// credential variable first (once per process, before any gateway thread
// could read the environment).
GatewayOptions proxy_options(const ProviderProcess& provider, const ProviderSettings& settings = {},
                             bool manual_clock = true);

// A fresh booking provider and a fresh gateway in front of it. The gateway
// is destroyed first, so it never outlives the provider it forwards to.
struct ProxyRig {
  explicit ProxyRig(ProviderSettings settings = {}, bool manual_clock = true);
  ProviderProcess provider;
  Gateway gateway;
};

// One proxied request as an agent sends it. Protected headers are sent only
// when set, so tests can leave each one out.
struct Write {
  std::string tenant = "tenant-a";
  std::string task = "task-a";
  std::string grant;                          // Fence-Grant: a grant_token
  std::string key;                            // Idempotency-Key: the operation id
  std::optional<std::int64_t> expected_version = 0;
  std::string body;
  std::string method = "POST";
  std::string rest = "/bookings";             // the upstream path and query
  std::string agent = agent_a;                // "" sends no Authorization
  std::string provider = "booking";
};

std::string proxy_path(const Write& w);
Reply send(HttpClient& client, const Write& w, const Headers& extra = {});

// A booking request body; the slot decides whether the provider accepts it.
std::string booking_body(const std::string& slot, const std::string& customer = "synthetic-customer");

// The key the gateway sends upstream for (tenant, task, operation id).
std::string upstream_key(const std::string& tenant, const std::string& task, const std::string& operation);

std::string grant_token(const nlohmann::json& claim_reply);

// The reply, minus what legitimately differs between an original and its replay.
Headers replayable_headers(const Reply& r);

}  // namespace gw::test
