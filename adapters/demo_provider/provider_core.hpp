// The demo provider's whole state and its request handling, without I/O:
// the server hands it plain requests and sends back what it returns.
#pragma once

#include "business_rules.hpp"
#include "fault_plan.hpp"
#include "plain_http.hpp"
#include "provider_kind.hpp"

#include <nlohmann/json.hpp>

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

namespace demo_provider {

struct core_config {
  provider_kind kind = provider_kind::booking;
  std::optional<std::string> credential;  // nullopt: any caller is accepted
  // How long after execution a status lookup by key still answers not_found,
  // like a provider whose lookup index lags its writes.
  std::chrono::milliseconds settle{0};
};

class provider_core {
 public:
  using clock = std::chrono::steady_clock;

  explicit provider_core(core_config config);

  // Every business request that was read, before anything else decides about it.
  void record(const plain_request& request);

  // Auth, the idempotency-key replay, the business rules and effect counting.
  plain_reply handle_business(const plain_request& request, clock::time_point now);

  fault_plan& faults() { return faults_; }
  const fault_plan& faults() const { return faults_; }

  nlohmann::json requests_json() const;
  nlohmann::json effects_json() const;

  // Back to a fresh start: business state, records, effects and faults.
  void reset();

 private:
  struct stored_reply {
    unsigned status;
    std::string body;
    clock::time_point executed_at;
  };

  bool authorized(const plain_request& request) const;
  plain_reply execute(const plain_request& request, const std::string& id, clock::time_point now);
  plain_reply lookup_by_key(const std::string& key, clock::time_point now) const;

  core_config config_;
  std::unique_ptr<business_rules> rules_;
  fault_plan faults_;
  std::vector<plain_request> requests_;
  std::unordered_map<std::string, stored_reply> replies_by_key_;
  std::int64_t effects_ = 0;
  std::map<std::string, std::int64_t> effects_by_key_;  // "" for effects sent without a key
};

}  // namespace demo_provider
