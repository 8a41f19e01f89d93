// Gateway-generated replies: JSON bodies that carry `code`, RFC 9457
// problem+json for errors, and the Gateway-Status header on every one.
#pragma once

#include "core/codes.hpp"
#include "http/message.hpp"

#include <nlohmann/json.hpp>

namespace gw::http {

// 2xx-style reply: `body` gets "code" added; status from the code table.
Response json_reply(Code code, nlohmann::json body);
// The same, for a body written as text (core/json_text.hpp): a JSON object
// that carries its `code` already.
Response json_text_reply(Code code, std::string body);

// Error reply: {"type","title","status","code","detail"} plus `extra` members.
// `detail` must be safe to show a client: never an internal exception text.
Response problem(Code code, std::string detail, nlohmann::json extra = nlohmann::json::object());

}  // namespace gw::http
