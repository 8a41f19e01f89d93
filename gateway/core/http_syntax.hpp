// RFC 9110 syntax that every writer of HTTP here checks before a byte goes
// out (the upstream request, the agent's reply, configured header names), so
// that no field can end the head early or start a second message. Pure.
#pragma once

#include <string_view>

namespace gw {

// A token: a method or a field name, one or more tchar.
bool is_http_token(std::string_view s);

// A field value: HTAB, visible ASCII and obs-text; never CR, LF, NUL or
// another control.
bool is_field_value(std::string_view s);

}  // namespace gw
