#include "service/event_log.hpp"

#include "service/logger.hpp"

namespace gw {

void log_event(LogLevel level, const std::string& event, nlohmann::json fields) {
  Logger::process().write(level, event, std::move(fields));
}

}  // namespace gw
