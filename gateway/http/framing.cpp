#include "http/framing.hpp"

#include "core/http_syntax.hpp"

#include <array>

namespace gw::http {
namespace {

constexpr std::array<std::string_view, 9> singletons{"Content-Length", "Host",           "Authorization",
                                                     "Fence-Grant",    "Idempotency-Key", "Expected-Version",
                                                     "Content-Type",   "Expect",         "X-Request-Id"};
constexpr std::array<std::string_view, 3> method_overrides{"X-HTTP-Method-Override", "X-HTTP-Method",
                                                           "X-Method-Override"};
// IIS, Symfony, Zend and Laminas route by these instead of the request line.
constexpr std::array<std::string_view, 2> target_overrides{"X-Original-URL", "X-Rewrite-URL"};

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

std::size_t count(const Fields& headers, std::string_view name) {
  std::size_t n = 0;
  for (const auto& [k, v] : headers) n += iequals(k, name) ? 1 : 0;
  return n;
}

}  // namespace

std::optional<std::string> head_problem(std::string_view target, const Fields& headers) {
  for (unsigned char c : target)
    if (c < 0x21 || c > 0x7e) return "the request target must be visible ASCII; percent-encode other bytes";

  if (auto te = find_header(headers, "Transfer-Encoding")) {
    if (count(headers, "Transfer-Encoding") > 1 || !iequals(trim(*te), "chunked"))
      return "Transfer-Encoding must be exactly \"chunked\"";
    if (find_header(headers, "Content-Length")) return "Transfer-Encoding and Content-Length must not both be sent";
  }
  for (auto name : singletons)
    if (count(headers, name) > 1) return "header " + std::string(name) + " must appear at most once";
  // In any spelling a server behind us may fold to the same name (X_HTTP_Method too).
  for (const auto& [k, v] : headers) {
    for (auto name : method_overrides)
      if (same_field_name(k, name)) return "method-override headers are refused (" + k + ")";
    for (auto name : target_overrides)
      if (same_field_name(k, name)) return "target-override headers are refused (" + k + ")";
  }
  return std::nullopt;
}

}  // namespace gw::http
