// Splitting a request target into percent-decoded path segments.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gw {

struct SplitTarget {
  std::vector<std::string> segments;  // decoded; "/a/b" -> {"a", "b"}
  std::string_view raw_path;
  std::string_view query;             // after '?', without it
};

// nullopt for a target that is not origin-form or has a bad %-escape.
std::optional<SplitTarget> split_target(std::string_view target);

std::optional<std::string> percent_decode(std::string_view text);

}  // namespace gw
