#include "service/ops/request_log.hpp"

namespace gw {

LogLevel request_line_level(std::string_view route, std::string_view code) {
  if (code == "internal_error") return LogLevel::error;
  if (code == "unknown_outcome" || code == "authority_unavailable" || code == "provider_unavailable")
    return LogLevel::warn;
  if (route == "healthz" || route == "readyz" || route == "metrics" || route == "openapi") return LogLevel::debug;
  return LogLevel::info;
}

bool request_line_wanted(LogLevel line, const LogConfig& config) {
  if (line < config.level) return false;
  return config.access || line >= LogLevel::warn;
}

}  // namespace gw
