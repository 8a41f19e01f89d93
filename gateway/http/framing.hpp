// What the server refuses about a request head before it reads any body: the
// framing rules of RFC 9112 that Beast leaves to its user, headers that must
// appear once, and request-target bytes. Each of these let two parties (the
// gateway and a provider, or the gateway and itself on a kept-alive
// connection) read one request differently. Pure; tests/http/framing_tests.cpp.
#pragma once

#include "http/message.hpp"

#include <optional>
#include <string>
#include <string_view>

namespace gw::http {

// Why this head must be answered 400 with the connection closed, or nullopt:
// - Transfer-Encoding other than exactly one "chunked" (identity, gzip,
//   "chunked, identity", "xchunked", an empty value, two header lines): the
//   body's end would be guessed. Also Transfer-Encoding with Content-Length.
// - a singleton header twice: Content-Length, Host, Authorization,
//   Fence-Grant, Idempotency-Key, Expected-Version, Content-Type, Expect,
//   X-Request-Id. First-wins and last-wins readers would disagree.
// - a method-override header (X-HTTP-Method-Override, X-HTTP-Method,
//   X-Method-Override) or a target-override one (X-Original-URL,
//   X-Rewrite-URL), with '_' for '-' too: a provider framework would run the
//   method or route to the path it names where the gateway checked another.
// - a request target with a byte outside visible ASCII (0x21-0x7E), which
//   RFC 3986 does not allow unencoded.
std::optional<std::string> head_problem(std::string_view target, const Fields& headers);

}  // namespace gw::http
