// The fault the business port injects now, and for how many more requests.
#pragma once

#include "plain_http.hpp"

#include <nlohmann/json_fwd.hpp>

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>

namespace demo_provider {

// What each mode does to a business request (recorded first in every case):
//   none                nothing
//   delay               waits delay_ms, then executes and answers
//   drop_after_execute  executes, then closes the connection without answering
//   late_reply          executes, then waits delay_ms before answering
//   error_5xx           answers 503 without executing
//   refuse              closes the business listener (no request gets in)
//   hold                waits until POST /__test/release, then executes and answers
//   reply_status        answers `status` (and Retry-After: `retry_after`) without executing
//   close_after_reply   executes and answers as usual (keep-alive), then closes the
//                       connection: the next request a client sends on it meets a closed socket
enum class fault_mode {
  none,
  delay,
  drop_after_execute,
  late_reply,
  error_5xx,
  refuse,
  hold,
  reply_status,
  close_after_reply
};

struct fault {
  fault_mode mode = fault_mode::none;
  std::chrono::milliseconds delay{0};
  unsigned status = 0;      // reply_status only
  std::string retry_after;  // reply_status only; empty: no Retry-After
};

class fault_plan {
 public:
  // Applies a POST /__test/faults body. On a bad body returns why, and the
  // plan stays as it was.
  std::optional<std::string> set(const nlohmann::json& request);
  void clear();

  // The fault for one arriving business request; spends one of `count`.
  // `refuse` acts on the listener, not on requests, so it yields `none`.
  fault take();

  bool refusing() const { return current_.mode == fault_mode::refuse; }
  nlohmann::json to_json() const;

 private:
  fault current_;
  std::optional<std::int64_t> remaining_;  // nullopt: until changed
};

// What error_5xx answers instead of executing.
plain_reply injected_unavailable_reply();
// What reply_status answers instead of executing.
plain_reply injected_status_reply(const fault& f);

}  // namespace demo_provider
