#include "proxy/proxy_fixture.hpp"

#include "core/fingerprint.hpp"

#include <strings.h>

#include <cstdlib>
#include <mutex>

namespace gw::test {

nlohmann::json booking_provider_config(const ProviderProcess& provider, const ProviderSettings& s) {
  nlohmann::json p{{"name", "booking"},
                   {"base_url", provider.base_url()},
                   {"credential",
                    {{"tenants",
                      {{"tenant-a", {{"env", booking_credential_env}}},
                       {"tenant-b", {{"env", booking_credential_env_b}}},
                       {"tenant-c", {{"env", booking_credential_env_c}}}}}}},
                   {"request_timeout_ms", s.request_timeout_ms},
                   {"connect_timeout_ms", s.connect_timeout_ms},
                   {"max_request_body_bytes", s.max_request_body_bytes},
                   {"max_connections", s.max_connections},
                   {"max_queued", s.max_queued}};
  if (!s.outcomes.is_null()) p["outcomes"] = s.outcomes;
  if (!s.allowed_path_forms.is_null()) p["allowed_path_forms"] = s.allowed_path_forms;
  return p;
}

std::vector<std::pair<std::string, std::string>> booking_credential_envs() {
  return {{booking_credential_env, provider_credential},
          {booking_credential_env_b, provider_credential_b},
          {booking_credential_env_c, provider_credential_c}};
}

GatewayOptions proxy_options(const ProviderProcess& provider, const ProviderSettings& settings, bool manual_clock) {
  // setenv races with getenv in other threads (libpq reads its variables in
  // the gateway's workers): set the one value once, while no gateway runs.
  static std::once_flag once;
  std::call_once(once, [] {
    for (const auto& [name, value] : booking_credential_envs()) ::setenv(name.c_str(), value.c_str(), 1);
  });
  auto entry = booking_provider_config(provider, settings);
  return GatewayOptions{manual_clock, [entry](nlohmann::json& c) { c["providers"] = nlohmann::json::array({entry}); }};
}

ProxyRig::ProxyRig(ProviderSettings settings, bool manual_clock)
    : provider(), gateway(proxy_options(provider, settings, manual_clock)) {}

std::string proxy_path(const Write& w) {
  return task_path(w.tenant, w.task, "providers/" + w.provider) + w.rest;
}

Reply send(HttpClient& client, const Write& w, const Headers& extra) {
  Headers h;
  if (!w.agent.empty()) h.emplace_back("Authorization", "Bearer " + w.agent);
  if (!w.grant.empty()) h.emplace_back("Fence-Grant", w.grant);
  if (!w.key.empty()) h.emplace_back("Idempotency-Key", w.key);
  if (w.expected_version) h.emplace_back("Expected-Version", std::to_string(*w.expected_version));
  if (!w.body.empty()) h.emplace_back("Content-Type", "application/json");
  h.insert(h.end(), extra.begin(), extra.end());
  return client.request(w.method, proxy_path(w), h, w.body);
}

std::string booking_body(const std::string& slot, const std::string& customer) {
  return nlohmann::json{{"slot", slot}, {"customer", customer}}.dump();
}

std::string upstream_key(const std::string& tenant, const std::string& task, const std::string& operation) {
  return upstream_idempotency_key(tenant, task, operation);
}

std::string grant_token(const nlohmann::json& claim_reply) { return claim_reply["grant_token"].get<std::string>(); }

Headers replayable_headers(const Reply& r) {
  Headers out;
  for (const auto& [k, v] : r.headers) {
    if (strcasecmp(k.c_str(), "Gateway-Status") == 0 || strcasecmp(k.c_str(), "Idempotent-Replayed") == 0 ||
        strcasecmp(k.c_str(), "X-Request-Id") == 0)
      continue;
    out.emplace_back(k, v);
  }
  return out;
}

}  // namespace gw::test
