// Which agent paths may be sent to a provider (issue #8): the target sent
// upstream must stay under the provider's base path whatever the provider's
// framework does with dot-segments, encoded slashes or backslashes. Pure;
// tests/core/provider_path_tests.cpp.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace gw {

// Why the raw path after /providers/{name} (before any query) must not be
// forwarded, or nullopt. Refused: a "." or ".." segment, raw or
// percent-encoded (%2e); an encoded slash (%2f) or backslash (raw or %5c),
// which some servers decode into a separator; an encoded NUL (%00); and an
// empty first segment ("//x"), which some clients read as a host.
std::optional<std::string> provider_path_problem(std::string_view rest);

}  // namespace gw
