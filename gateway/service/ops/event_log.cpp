#include "service/ops/event_log.hpp"

#include "service/ops/logger.hpp"

namespace gw {

void log_event(LogLevel level, const std::string& event, nlohmann::json fields) {
  Logger::process().write(level, event, std::move(fields));
}

}  // namespace gw
