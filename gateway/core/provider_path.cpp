#include "core/provider_path.hpp"

#include <cctype>

namespace gw {
namespace {

// The segment with %2e/%2E read as '.', so "%2e%2E" is seen as "..".
std::string dots_decoded(std::string_view segment) {
  std::string out;
  for (std::size_t i = 0; i < segment.size(); ++i) {
    if (segment[i] == '%' && i + 2 < segment.size() && segment[i + 1] == '2' &&
        (segment[i + 2] == 'e' || segment[i + 2] == 'E')) {
      out += '.';
      i += 2;
    } else {
      out += segment[i];
    }
  }
  return out;
}

bool has_escape(std::string_view path, char hi, char lo) {
  for (std::size_t i = 0; i + 2 < path.size(); ++i)
    if (path[i] == '%' && path[i + 1] == hi &&
        std::tolower(static_cast<unsigned char>(path[i + 2])) == std::tolower(static_cast<unsigned char>(lo)))
      return true;
  return false;
}

}  // namespace

std::optional<std::string> provider_path_problem(std::string_view rest) {
  if (rest.empty() || rest == "/") return std::nullopt;
  if (rest.find('\\') != std::string_view::npos || has_escape(rest, '5', 'c'))
    return "a backslash in the provider path is refused";
  if (has_escape(rest, '2', 'f')) return "an encoded slash (%2F) in the provider path is refused";
  if (has_escape(rest, '0', '0')) return "an encoded NUL (%00) in the provider path is refused";
  if (rest.size() > 1 && rest[0] == '/' && rest[1] == '/') return "the provider path must not start with //";
  for (std::size_t start = 0; start <= rest.size();) {
    const auto slash = rest.find('/', start);
    const auto end = slash == std::string_view::npos ? rest.size() : slash;
    const auto plain = dots_decoded(rest.substr(start, end - start));
    if (plain == "." || plain == "..") return "dot-segments in the provider path are refused";
    start = end + 1;
  }
  return std::nullopt;
}

}  // namespace gw
