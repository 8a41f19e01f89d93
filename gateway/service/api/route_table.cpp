#include "service/api/route_table.hpp"

namespace gw {

std::vector<std::string_view> template_parts(const RouteSpec& route) {
  std::vector<std::string_view> parts;
  std::string_view rest = route.path.substr(1);  // after the leading '/'
  while (true) {
    const auto slash = rest.find('/');
    const auto part = rest.substr(0, slash);
    parts.push_back(part.starts_with('{') ? std::string_view() : part);
    if (slash == std::string_view::npos) break;
    rest = rest.substr(slash + 1);
  }
  return parts;
}

bool matches_parts(const std::vector<std::string_view>& parts, bool rest, const std::vector<std::string>& segments) {
  if (rest ? segments.size() < parts.size() : segments.size() != parts.size()) return false;
  for (std::size_t i = 0; i < parts.size(); ++i)
    if (!parts[i].empty() && segments[i] != parts[i]) return false;
  return true;
}

bool matches(const RouteSpec& route, const std::vector<std::string>& segments) {
  return matches_parts(template_parts(route), route.rest, segments);
}

}  // namespace gw
