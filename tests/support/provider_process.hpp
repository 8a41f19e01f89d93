// The demo provider (adapters/demo_provider) as a real process for proxy
// tests, and its control API: what it executed (effects, by upstream
// Idempotency-Key), every business request it read, and the fault it
// injects next.
#pragma once

#include "support/process.hpp"

#include <nlohmann/json.hpp>

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>

namespace gw::test {

// The business credential the demo provider expects and the gateway injects.
// Agents never hold it; tests look for it in every agent-facing reply.
inline const std::string provider_credential = "demo-provider-credential-5c1e0b7d9a";

class ProviderProcess {
 public:
  // `demo-provider --kind KIND --port 0 --control-port 0` with
  // DEMO_PROVIDER_CREDENTIAL=credential; waits for its startup line.
  explicit ProviderProcess(const std::string& kind = "booking",
                           const std::string& credential = provider_credential);

  std::uint16_t port() const { return port_; }
  std::uint16_t control_port() const { return control_port_; }
  std::string base_url() const { return "http://127.0.0.1:" + std::to_string(port_); }

  // {"effects": N, "by_key": {key: count}}; "" counts effects sent without a key.
  nlohmann::json effects() const;
  std::int64_t effect_count() const;
  std::int64_t effects_for(const std::string& upstream_key) const;

  // Every business request read, in order: [{"method","target","headers","body"}].
  nlohmann::json requests() const;
  // How many business requests carried this Idempotency-Key.
  std::size_t requests_with_key(const std::string& upstream_key) const;

  // POST /__test/faults; mode: none, delay, drop_after_execute, late_reply,
  // error_5xx, refuse. `count` absent: until changed.
  void set_fault(const std::string& mode, std::int64_t delay_ms = 0, std::optional<std::int64_t> count = std::nullopt) const;
  void reset() const;

  // Polls requests() until `done` holds or `limit` passes: for liveness only
  // (a request reaching the provider), never as a timing assertion.
  bool wait_for_requests(const std::function<bool(const nlohmann::json&)>& done,
                         std::chrono::milliseconds limit = std::chrono::seconds(30)) const;
  bool wait_for_effects(const std::function<bool(const nlohmann::json&)>& done,
                        std::chrono::milliseconds limit = std::chrono::seconds(30)) const;

 private:
  nlohmann::json control(const std::string& method, const std::string& target, const nlohmann::json& body = {}) const;

  std::unique_ptr<ChildProcess> process_;
  std::uint16_t port_ = 0;
  std::uint16_t control_port_ = 0;
};

}  // namespace gw::test
