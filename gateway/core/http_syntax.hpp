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

// Whether a server behind us may read two field names as one: ASCII case
// folded, and '_' the same as '-', since CGI, WSGI, PHP and others map both
// to HTTP_FENCE_EPOCH. Every check of a header the gateway owns or drops uses
// it, so `Fence_Epoch` cannot pass for `Fence-Epoch`.
bool same_field_name(std::string_view a, std::string_view b);

// same_field_name(name.substr(0, prefix.size()), prefix), for a name longer than it.
bool field_name_has_prefix(std::string_view name, std::string_view prefix);

}  // namespace gw
