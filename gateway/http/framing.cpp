#include "http/framing.hpp"

#include <array>

namespace gw::http {
namespace {

constexpr std::array<std::string_view, 9> singletons{"Content-Length", "Host",           "Authorization",
                                                     "Fence-Grant",    "Idempotency-Key", "Expected-Version",
                                                     "Content-Type",   "Expect",         "X-Request-Id"};
constexpr std::array<std::string_view, 3> method_overrides{"X-HTTP-Method-Override", "X-HTTP-Method",
                                                           "X-Method-Override"};

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
  for (auto name : method_overrides)
    if (find_header(headers, name)) return "method-override headers are refused (" + std::string(name) + ")";
  return std::nullopt;
}

}  // namespace gw::http
