// Query strings of the operator routes: name=value pairs, percent-decoded.
// Strict like the JSON bodies: an unknown or repeated name, a pair without
// '=', or a bad escape is refused (Refusal invalid_request), never ignored.
// Also what every listing shares: label parameters, the page size, cursors.
#pragma once

#include <nlohmann/json.hpp>

#include <cstddef>
#include <initializer_list>
#include <map>
#include <string>
#include <string_view>

namespace gw {

using Query = std::map<std::string, std::string, std::less<>>;

Query parse_query(std::string_view query, std::initializer_list<std::string_view> allowed);

// A tenant, task, provider or operation id from a path or a query: a label,
// or invalid_request naming `what`.
std::string label_param(const std::string& value, const char* what);

// The listing's page size: `limit` from 1 to max_page, default_page without it.
constexpr unsigned default_page = 100;
constexpr unsigned max_page = 500;
unsigned page_limit(const Query& q);

// Cursors are opaque to clients: base64url of a JSON array of where the last
// page ended. cursor_fields gives back that array when it has `count`
// elements; the route checks their types. Anything else is invalid_request.
std::string encode_cursor(const nlohmann::json& fields);
nlohmann::json cursor_fields(const std::string& cursor, std::size_t count);

// The Refusal for a cursor this gateway did not make.
[[noreturn]] void bad_cursor();

}  // namespace gw
