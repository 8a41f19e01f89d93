#include "core/methods.hpp"

#include <algorithm>
#include <cctype>

namespace gw {
namespace {

bool iequals(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::toupper(static_cast<unsigned char>(x)) == std::toupper(static_cast<unsigned char>(y));
         });
}

}  // namespace

bool never_forwarded(std::string_view method) { return iequals(method, "TRACE") || iequals(method, "CONNECT"); }

MethodRule method_rule(std::string_view method, const std::set<std::string>& unfenced) {
  if (never_forwarded(method)) return MethodRule::refused;
  if (unfenced.count(std::string(method))) return MethodRule::unfenced;
  return MethodRule::fenced;
}

}  // namespace gw
