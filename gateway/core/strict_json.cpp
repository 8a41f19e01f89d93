#include "core/strict_json.hpp"

#include <set>
#include <string>
#include <vector>

namespace gw {

nlohmann::json parse_strict_json(std::string_view text) {
  using event = nlohmann::json::parse_event_t;
  std::vector<std::set<std::string>> open;  // member names of each object being read
  bool repeated = false;
  auto on_event = [&](int, event e, nlohmann::json& parsed) {
    switch (e) {
      case event::object_start:
        open.emplace_back();
        break;
      case event::object_end:
        if (!open.empty()) open.pop_back();
        break;
      case event::key:
        if (!open.empty() && !open.back().insert(parsed.get<std::string>()).second) repeated = true;
        break;
      default:
        break;
    }
    return true;
  };
  auto j = nlohmann::json::parse(text, on_event, /*allow_exceptions=*/false);
  if (repeated) return nlohmann::json(nlohmann::json::value_t::discarded);
  return j;
}

}  // namespace gw
