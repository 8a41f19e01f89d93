// The demo provider's whole state and its request handling, without I/O:
// the server hands it plain requests and sends back what it returns.
#pragma once

#include "business_rules.hpp"
#include "echo.hpp"
#include "fault_plan.hpp"
#include "hold_gate.hpp"
#include "plain_http.hpp"
#include "provider_kind.hpp"
#include "webhooks.hpp"

#include <nlohmann/json.hpp>

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <variant>
#include <vector>

namespace demo_provider {

struct core_config {
  provider_kind kind = provider_kind::booking;
  // One account per credential, each with its own data and idempotency keys,
  // like a real provider's separate customer accounts. Empty: one account,
  // any caller accepted.
  std::vector<std::string> credentials;
  // How long after execution a status lookup by key still answers not_found,
  // like a provider whose lookup index lags its writes.
  std::chrono::milliseconds settle{0};
  // Set: every keyed mutation that executes queues a signed webhook about it.
  std::optional<webhook_settings> webhooks;
  std::string webhook_id_prefix = "msg_demo_";  // ids are this plus a counter
};

class provider_core {
 public:
  using clock = std::chrono::steady_clock;

  explicit provider_core(core_config config);

  // Every business request that was read, before anything else decides about
  // it. It is in progress from here until finished().
  void record(const plain_request& request);
  // The request was answered, or its connection closed without an answer.
  void finished();

  // The reply to a recorded request under `injected`, once any delay or hold
  // is over: error_5xx and reply_status answer without executing; the other
  // modes execute (handle_business). The reply_headers and echo switches apply to all.
  plain_reply answer(const plain_request& request, const fault& injected, clock::time_point now);

  // Auth, the idempotency-key replay, the business rules and effect counting.
  plain_reply handle_business(const plain_request& request, clock::time_point now);

  fault_plan& faults() { return faults_; }
  const fault_plan& faults() const { return faults_; }
  hold_gate& holds() { return holds_; }

  // POST /__test/reply_headers; on a bad body returns why and keeps the list.
  std::optional<std::string> set_reply_headers(const nlohmann::json& body);
  const header_list& reply_headers() const { return reply_headers_; }

  // POST /__test/echo (echo.hpp): the forms every business reply echoes the
  // request's headers in; on a bad body returns why and keeps them.
  std::optional<std::string> set_echo(const nlohmann::json& body);
  const std::vector<echo_form>& echo() const { return echo_; }

  // Webhooks: queued by executions and by POST /__test/webhooks, taken and
  // sent by the server, which reports each result back.
  const std::optional<webhook_settings>& webhook_config() const { return config_.webhooks; }
  // The event POST /__test/webhooks asks for; on a bad body returns why.
  std::variant<webhook_event, std::string> queue_webhook(const nlohmann::json& body);
  std::vector<webhook_event> take_webhooks();
  void webhook_delivered(webhook_delivery delivery);
  nlohmann::json webhooks_json() const;  // {"delivered": [...], "queued": N}

  nlohmann::json requests_json() const;
  nlohmann::json effects_json() const;
  // {"in_progress": N, "held": M}: N counts held requests too.
  nlohmann::json activity_json() const;

  // Back to a fresh start: business state, records, effects, faults, reply
  // headers and echo; held requests are cancelled (closed without executing).
  // Requests in progress stay counted until they finish.
  void reset();

 private:
  struct stored_reply {
    unsigned status;
    std::string body;
    clock::time_point executed_at;
  };

  struct account {
    std::unique_ptr<business_rules> rules;
    std::unordered_map<std::string, stored_reply> replies_by_key;
  };

  // The account the request's bearer credential opens; nullptr: 401.
  account* account_of(const plain_request& request);
  const stored_reply* find_reply(const std::string& key) const;  // in any account
  plain_reply execute(account& to, const plain_request& request, const std::string& id, clock::time_point now);
  plain_reply lookup_by_key(const account& in, const std::string& key, clock::time_point now) const;
  std::string next_webhook_id();

  core_config config_;
  std::map<std::string, account> accounts_;  // by credential; "" when any caller is accepted
  fault_plan faults_;
  hold_gate holds_;
  header_list reply_headers_;
  std::vector<echo_form> echo_;
  std::int64_t in_progress_ = 0;
  std::vector<plain_request> requests_;
  std::int64_t effects_ = 0;
  std::map<std::string, std::int64_t> effects_by_key_;  // "" for effects sent without a key
  std::uint64_t webhook_sequence_ = 0;  // never reset: a webhook id is never reused
  std::vector<webhook_event> webhooks_queued_;
  std::vector<webhook_delivery> webhooks_delivered_;
};

}  // namespace demo_provider
