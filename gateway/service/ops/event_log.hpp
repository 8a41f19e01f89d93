// Operator-facing events (held, swept, reconciled, resolved, database lost
// and regained, drain, ...) as one JSON line each, through the process's
// Logger (service/ops/logger.hpp): never written from the caller's thread.
// Never pass a token, a secret, a credential or a body.
#pragma once

#include "config/config.hpp"

#include <nlohmann/json.hpp>

#include <string>

namespace gw {

void log_event(LogLevel level, const std::string& event, nlohmann::json fields);
inline void log_event(const std::string& event, nlohmann::json fields) {
  log_event(LogLevel::info, event, std::move(fields));
}

}  // namespace gw
