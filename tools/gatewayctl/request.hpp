// The HTTP request for an invocation: method, target and JSON body, with
// every path segment and query value percent-encoded. No I/O.
#pragma once

#include "gatewayctl/cli.hpp"
#include "gatewayctl/transport.hpp"

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace gwctl {

// RFC 3986 unreserved characters as they are, every other byte as %XX.
std::string percent_encode(std::string_view text);

// "?a=1&b=x%20y", or "" for no parameters.
std::string query_string(const std::vector<std::pair<std::string, std::string>>& params);

// The request for `inv`; for held and rejections, `cursor` (when set)
// overrides inv.cursor: it is the page being fetched.
HttpRequest build_request(const Invocation& inv, const std::optional<std::string>& cursor = std::nullopt);

}  // namespace gwctl
