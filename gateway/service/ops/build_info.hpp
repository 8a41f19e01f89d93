// The version and git commit this binary was built from, for
// gateway_build_info. The commit is read at build time (build_info.cmake):
// "unknown" when the source is not a git checkout.
#pragma once

#include <string_view>

namespace gw {

std::string_view build_version();
std::string_view build_commit();

}  // namespace gw
