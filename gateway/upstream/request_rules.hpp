// Pure rules applied to a request before it is serialized: what may be
// written as a method, target or field; the default Host; when a
// Content-Length is due. No I/O, so they are tested as tables.
#pragma once

#include "upstream/client.hpp"

#include <string>
#include <string_view>
#include <vector>

namespace gw::upstream::detail {

// Empty when the request can be written, otherwise why not. A CR or LF in a
// field or target would let a caller smuggle a second request onto the wire.
std::string request_problem(const Request& request);

// "host" or "host:port" when the port is not the scheme's default; IPv6
// literals are bracketed.
std::string default_host(const Endpoint& endpoint);

// Methods that define a body get a Content-Length even when it is 0 (some
// servers answer 411 otherwise); others only when they carry bytes.
bool needs_content_length(std::string_view method, std::size_t body_size);

// Content-Length and Transfer-Encoding: the client frames the body itself, so
// caller values for these are dropped rather than trusted.
bool is_framing_header(std::string_view name);

// The request line and header block as written, up to and including the
// blank line: the caller's fields in order (framing ones dropped), Host when
// the caller gave none, Content-Length when due. `request` must have passed
// request_problem(); the body is written after it as it is.
std::string wire_head(const Request& request, const Endpoint& endpoint);

// True when a Connection field of the request names "close": the connection
// is not reused after its reply.
bool asks_close(const std::vector<Header>& headers);

bool iequals(std::string_view a, std::string_view b);

}  // namespace gw::upstream::detail
