#include "service/api/path.hpp"

namespace gw {

std::optional<std::string> percent_decode(std::string_view text) {
  auto hex = [](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
  };
  // Most segments have no escape at all: one copy, no per-byte appends.
  if (text.find('%') == std::string_view::npos) return std::string(text);
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] != '%') {
      out += text[i];
      continue;
    }
    if (i + 2 >= text.size()) return std::nullopt;
    int hi = hex(text[i + 1]), lo = hex(text[i + 2]);
    if (hi < 0 || lo < 0) return std::nullopt;
    out += static_cast<char>(hi * 16 + lo);
    i += 2;
  }
  return out;
}

std::optional<SplitTarget> split_target(std::string_view target) {
  if (target.empty() || target.front() != '/') return std::nullopt;
  SplitTarget out;
  auto q = target.find('?');
  out.raw_path = target.substr(0, q);
  if (q != std::string_view::npos) out.query = target.substr(q + 1);
  std::string_view rest = out.raw_path.substr(1);
  out.segments.reserve(9);  // the proxy route's seven and a provider path of two
  // Every request comes through here; a path with no escape at all (nearly
  // every one) is cut into its segments as they are, with no per-segment
  // look for '%' and no decoded copy to move.
  const bool escaped = rest.find('%') != std::string_view::npos;
  while (true) {
    const auto slash = rest.find('/');
    const auto segment = rest.substr(0, slash);
    if (escaped) {
      auto decoded = percent_decode(segment);
      if (!decoded) return std::nullopt;
      out.segments.push_back(std::move(*decoded));
    } else {
      out.segments.emplace_back(segment);
    }
    if (slash == std::string_view::npos) break;
    rest.remove_prefix(slash + 1);
  }
  if (out.segments.size() == 1 && out.segments[0].empty()) out.segments.clear();
  return out;
}

}  // namespace gw
