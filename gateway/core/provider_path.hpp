// Which agent paths may be sent to a provider (issue #8): the target sent
// upstream must stay under the provider's base path whatever the provider's
// framework does with dot-segments, encoded slashes or backslashes. Pure;
// tests/core/provider_path_tests.cpp.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace gw {

// Path forms refused by default that a provider may opt in to
// (providers[].allowed_path_forms), because its framework treats them as
// plain data. An encoded NUL is never allowed.
struct PathForms {
  bool dot_segments = false;          // "." or ".." segments, raw or %2e
  bool encoded_slash = false;         // %2F
  bool backslash = false;             // raw or %5C
  bool leading_double_slash = false;  // "//x", which some clients read as a host
};

// Sets the form named `name` in `forms`; false for an unknown name.
bool allow_path_form(PathForms& forms, std::string_view name);

// Why the raw path after /providers/{name} (before any query) must not be
// forwarded, or nullopt. A segment is a dot-segment when what precedes its
// first ';' is "." or ".." (servers that take path parameters read "..;x"
// as ".."). Each form is refused unless `allowed` says
// otherwise. Even with every form allowed, a path whose dot-segments would
// climb above its start is refused: read with "/", "\", %2F and %5C all as
// separators, no ".." may pop more segments than came before it, so the
// target stays under the base path whichever of them the provider splits on.
std::optional<std::string> provider_path_problem(std::string_view rest, const PathForms& allowed = {});

}  // namespace gw
