// Query strings of the operator routes: name=value pairs, percent-decoded.
// Strict like the JSON bodies: an unknown or repeated name, a pair without
// '=', or a bad escape is refused (Rejection invalid_request), never ignored.
#pragma once

#include <initializer_list>
#include <map>
#include <string>
#include <string_view>

namespace gw {

std::map<std::string, std::string, std::less<>> parse_query(std::string_view query,
                                                            std::initializer_list<std::string_view> allowed);

}  // namespace gw
