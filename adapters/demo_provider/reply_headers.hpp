// The reply_headers switch: header lines added to every business reply, in
// order and with duplicates kept (two Set-Cookie, a fixed Date), so tests can
// check that a replay repeats the provider's headers exactly. On the wire,
// Beast keeps fields of one name together at the first one's place.
#pragma once

#include "plain_http.hpp"

#include <nlohmann/json_fwd.hpp>

#include <optional>
#include <string>

namespace demo_provider {

// From a POST /__test/reply_headers body {"headers": [[name, value], ...]}
// ([] clears); a value may also be {"hex": "..."}, bytes that a JSON string
// cannot carry (obs-text, 0x80-0xFF). On a bad body returns why in `error`
// and no list.
struct parsed_reply_headers {
  std::optional<header_list> headers;
  std::string error;
};
parsed_reply_headers parse_reply_headers(const nlohmann::json& body);

nlohmann::json reply_headers_json(const header_list& headers);

}  // namespace demo_provider
