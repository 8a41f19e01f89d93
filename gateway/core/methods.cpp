#include "core/methods.hpp"

#include "core/labels.hpp"

namespace gw {

bool never_forwarded(std::string_view method) { return ascii_iequals(method, "TRACE") || ascii_iequals(method, "CONNECT"); }

MethodRule method_rule(std::string_view method, const std::set<std::string>& unfenced) {
  if (never_forwarded(method)) return MethodRule::refused;
  if (unfenced.count(std::string(method))) return MethodRule::unfenced;
  return MethodRule::fenced;
}

}  // namespace gw
