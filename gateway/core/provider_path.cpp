#include "core/provider_path.hpp"

#include <algorithm>
#include <cctype>
#include <vector>

namespace gw {
namespace {

bool is_escape(std::string_view path, std::size_t i, char hi, char lo) {
  return i + 2 < path.size() && path[i] == '%' && path[i + 1] == hi &&
         std::tolower(static_cast<unsigned char>(path[i + 2])) == lo;
}

bool has_escape(std::string_view path, char hi, char lo) {
  for (std::size_t i = 0; i + 2 < path.size(); ++i)
    if (is_escape(path, i, hi, lo)) return true;
  return false;
}

// The segments of `path` split on every separator a provider might honour
// ("/", "\", %2F, %5C), with %2e read as '.', so "%2e%2E" is seen as "..".
std::vector<std::string> loose_segments(std::string_view path) {
  std::vector<std::string> out(1);
  for (std::size_t i = 0; i < path.size(); ++i) {
    if (path[i] == '/' || path[i] == '\\') {
      out.emplace_back();
    } else if (is_escape(path, i, '2', 'f') || is_escape(path, i, '5', 'c')) {
      out.emplace_back();
      i += 2;
    } else if (is_escape(path, i, '2', 'e')) {
      out.back() += '.';
      i += 2;
    } else {
      out.back() += path[i];
    }
  }
  return out;
}

}  // namespace

bool allow_path_form(PathForms& forms, std::string_view name) {
  if (name == "dot_segments") return forms.dot_segments = true;
  if (name == "encoded_slash") return forms.encoded_slash = true;
  if (name == "backslash") return forms.backslash = true;
  if (name == "leading_double_slash") return forms.leading_double_slash = true;
  return false;
}

std::optional<std::string> provider_path_problem(std::string_view rest, const PathForms& allowed) {
  if (rest.empty() || rest == "/") return std::nullopt;
  // The usual path ("/bookings/bk_1") has nothing the rules below look at,
  // but for the leading "//" (an empty first segment): no allocation for it.
  // One pass (find_first_of calls memchr over the set for every byte).
  if (std::none_of(rest.begin(), rest.end(), [](char c) { return c == '.' || c == '%' || c == '\\'; })) {
    if (!allowed.leading_double_slash && rest.starts_with("//")) return "the provider path must not start with //";
    return std::nullopt;
  }
  if (has_escape(rest, '0', '0')) return "an encoded NUL (%00) in the provider path is refused";
  if (!allowed.backslash && (rest.find('\\') != std::string_view::npos || has_escape(rest, '5', 'c')))
    return "a backslash in the provider path is refused";
  if (!allowed.encoded_slash && has_escape(rest, '2', 'f'))
    return "an encoded slash (%2F) in the provider path is refused";
  const auto segments = loose_segments(rest[0] == '/' ? rest.substr(1) : rest);
  // The path as a server resolves it: "." dropped, ".." popping. Depth counts
  // only non-empty segments, since many servers merge "//" into "/".
  std::vector<std::string_view> resolved;
  std::size_t depth = 0;
  for (const auto& whole : segments) {
    // Path parameters: some servers (Tomcat) read "..;x" as "..".
    const std::string_view segment = std::string_view(whole).substr(0, whole.find(';'));
    if (segment == "." || segment == "..") {
      if (!allowed.dot_segments) return "dot-segments in the provider path are refused";
      if (segment == "..") {
        if (depth == 0) return "the provider path climbs above the provider's base path";
        while (resolved.back().empty()) resolved.pop_back();
        resolved.pop_back();
        --depth;
      }
      if (&whole == &segments.back()) resolved.emplace_back();  // "/a/." is "/a/"
    } else {
      resolved.push_back(whole);
      if (!segment.empty()) ++depth;
    }
  }
  // "//x", also spelt "/\\x", "/%2Fx" or "/./x" where those forms are allowed.
  if (!allowed.leading_double_slash && resolved.size() > 1 && resolved.front().empty())
    return "the provider path must not start with //";
  return std::nullopt;
}

}  // namespace gw
