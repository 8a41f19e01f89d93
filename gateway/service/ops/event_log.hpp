// Operator-facing events (held, swept, reconciled, resolved, database lost
// and regained, drain, ...) as one JSON line each, through the process's
// Logger (service/ops/logger.hpp): never written from the caller's thread.
// Never pass a token, a secret, a credential or a body.
#pragma once

#include "config/config.hpp"

#include <nlohmann/json.hpp>

#include <exception>
#include <string>

namespace gw {

void log_event(LogLevel level, const std::string& event, nlohmann::json fields);
inline void log_event(const std::string& event, nlohmann::json fields) {
  log_event(LogLevel::info, event, std::move(fields));
}

// A background duty's failures (the sweep, retention, the reconciler's
// rounds), said once per streak: the first failure since start or since a
// round that worked is logged at warn with its reason (`error`); the rest of
// the streak only counts in the metrics, as a database away fails every round.
// Without it an operator saw the count grow and no line saying why: a full
// queue, a statement timeout and a lost database looked the same. One duty's
// loop owns it (one thread at a time).
class FailureStreak {
 public:
  void failed(const std::string& event, const std::exception& error) {
    if (!failing_) log_event(LogLevel::warn, event, {{"error", error.what()}});
    failing_ = true;
  }
  void succeeded() { failing_ = false; }

 private:
  bool failing_ = false;
};

}  // namespace gw
