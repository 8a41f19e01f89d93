// Transport-neutral HTTP request and reply values, so the provider's rules
// and the control API are written (and testable) without Beast.
#pragma once

#include <nlohmann/json_fwd.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace demo_provider {

using header_list = std::vector<std::pair<std::string, std::string>>;

struct plain_request {
  std::string method;
  std::string target;   // path and query exactly as received
  header_list headers;  // names as received, in arrival order
  std::string body;
  // Which business connection it came on: 1, 2, ... in accept order (0: none),
  // so a test can tell a reused keep-alive connection from a new one.
  std::uint64_t connection = 0;
};

struct plain_reply {
  unsigned status = 200;
  std::string body;     // always JSON text
  header_list headers;  // besides Content-Type, which is always application/json
};

bool iequals(std::string_view a, std::string_view b);

// HTTP field names are case-insensitive; the first occurrence wins.
std::optional<std::string_view> find_header(const header_list& headers, std::string_view name);

// What the server may send as a header line as is: a token name (RFC 9110),
// and a value of visible ASCII and inner spaces (no CR/LF smuggling).
bool valid_header_name(std::string_view name);
bool valid_header_value(std::string_view value);

std::string_view path_of(std::string_view target);

// nullopt for a malformed escape such as "%zz" or a trailing "%4".
std::optional<std::string> percent_decode(std::string_view text);

// Recorded requests may hold any bytes: invalid UTF-8 becomes U+FFFD instead
// of throwing, which nlohmann's default dump would do.
std::string json_text(const nlohmann::json& value);

plain_reply json_reply(unsigned status, const nlohmann::json& body);
// {"error": error}, the provider's refusals.
plain_reply error_reply(unsigned status, std::string_view error);

}  // namespace demo_provider
