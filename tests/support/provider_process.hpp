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
#include <utility>
#include <vector>

namespace gw::test {

// The business credentials the demo provider expects and the gateway
// injects: one account per tenant (tenant-a, tenant-b, tenant-c), each with
// its own data. Agents never hold them; tests look for them in every
// agent-facing reply.
inline const std::string provider_credential = "demo-provider-credential-5c1e0b7d9a";
inline const std::string provider_credential_b = "demo-provider-credential-b-81f0c2";
inline const std::string provider_credential_c = "demo-provider-credential-c-4a97d3";

class ProviderProcess {
 public:
  // `demo-provider --kind KIND --port 0 --control-port 0 [extra_args]` with
  // one account per credential (DEMO_PROVIDER_CREDENTIALS); waits for its
  // startup line.
  explicit ProviderProcess(const std::string& kind = "booking",
                           const std::vector<std::string>& credentials = {provider_credential, provider_credential_b,
                                                                          provider_credential_c},
                           const std::vector<std::string>& extra_args = {});

  std::uint16_t port() const { return port_; }
  std::uint16_t control_port() const { return control_port_; }
  std::string base_url() const { return "http://127.0.0.1:" + std::to_string(port_); }

  // {"effects": N, "by_key": {key: count}}; "" counts effects sent without a key.
  nlohmann::json effects() const;
  std::int64_t effect_count() const;
  std::int64_t effects_for(const std::string& upstream_key) const;

  // Every business request read, in order: [{"method","target","headers","body","connection"}],
  // "connection" numbering the business connections in accept order.
  nlohmann::json requests() const;
  // How many business requests carried this Idempotency-Key.
  std::size_t requests_with_key(const std::string& upstream_key) const;

  // POST /__test/faults; mode: none, delay, drop_after_execute, late_reply,
  // error_5xx, refuse, hold. `count` absent: until changed.
  void set_fault(const std::string& mode, std::int64_t delay_ms = 0, std::optional<std::int64_t> count = std::nullopt) const;
  // POST /__test/faults with any body (reply_status, bad bodies); throws unless 200.
  nlohmann::json set_fault_json(const nlohmann::json& body) const;
  // The next `count` business requests (all when nullopt) are answered
  // `status`, with Retry-After when given, without executing.
  void reply_status_next(unsigned status, std::optional<std::string> retry_after = std::nullopt,
                         std::optional<std::int64_t> count = 1) const;
  void reset() const;

  // The next `count` business requests (all when nullopt) are recorded, then
  // held before executing until release(). Reset closes held requests unexecuted.
  void hold_next(std::optional<std::int64_t> count = 1) const;
  // Lets the `count` longest-held requests (all when nullopt) execute and
  // answer; returns how many were released.
  std::int64_t release(std::optional<std::int64_t> count = std::nullopt) const;

  // {"in_progress": N, "held": M}: business requests read and not yet
  // answered or closed (held ones included), and those held now.
  nlohmann::json activity() const;
  // Polls activity() until exactly `count` requests are held.
  bool wait_for_held(std::int64_t count, std::chrono::milliseconds limit = std::chrono::seconds(30)) const;
  // Polls activity() until no business request is in progress.
  bool wait_until_idle(std::chrono::milliseconds limit = std::chrono::seconds(30)) const;

  // POST /__test/reply_headers: added to every business reply, in order,
  // duplicates kept; {} clears.
  void set_reply_headers(const std::vector<std::pair<std::string, std::string>>& headers) const;

  // The control API without interpretation, for tests of the API itself.
  Reply control_raw(const std::string& method, const std::string& target, const std::string& body = {}) const;

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

// Releases every held request when it leaves scope. Declared after the
// futures waiting on held requests, so a failing REQUIRE does not leave one
// held (and its future's destructor waiting) until the forward deadline.
class ReleaseOnExit {
 public:
  explicit ReleaseOnExit(const ProviderProcess& provider) : provider_(provider) {}
  ~ReleaseOnExit();
  ReleaseOnExit(const ReleaseOnExit&) = delete;
  ReleaseOnExit& operator=(const ReleaseOnExit&) = delete;

 private:
  const ProviderProcess& provider_;
};

}  // namespace gw::test
