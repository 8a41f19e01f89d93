#include "service/event_log.hpp"

#include <cstdio>

namespace gw {

void log_event(const std::string& event, nlohmann::json fields) {
  fields["event"] = event;
  // One fwrite per line: stdio locks the stream for the call.
  const std::string line = fields.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
  std::fwrite(line.data(), 1, line.size(), stderr);
}

}  // namespace gw
