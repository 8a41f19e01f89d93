// The status line and header block of a reply, as the server writes them. The
// server owns the connection's framing: Connection, Content-Length and
// Transfer-Encoding are written from the reply's body and keep-alive, never
// taken from its fields, and a field that could not be written safely (a name
// that is not a token, a value with CR, LF or another control) is left out.
// Pure; tests/http/reply_head_tests.cpp.
#pragma once

#include "http/message.hpp"

#include <string>

namespace gw::http {

// `version` is 10 or 11. A HEAD reply carries the Content-Length its body
// (or content_length_override) would have, and no body. 1xx, 204 and 304
// replies carry no Content-Length and no body.
std::string reply_head(const Response& reply, unsigned version, bool keep_alive, bool head);

// Whether a reply with this status may carry a body at all.
bool reply_has_body(unsigned status);

}  // namespace gw::http
