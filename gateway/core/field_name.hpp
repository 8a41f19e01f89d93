// The header names the gateway's rules single out, told once per field.
//
// The framing checks, the filter towards the provider and the filter of its
// reply each asked "is this one of these names?" of every field, name by
// name: tens of comparisons per field, the largest share of a pass-through's
// header work. classify_field answers once, with one table lookup, and each
// rule becomes a switch on the answer. Pure; tests/core/field_name_tests.cpp.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace gw {

enum class FieldName : std::uint8_t {
  other,
  // Hop-by-hop and framing.
  connection,
  content_length,
  expect,
  keep_alive,
  proxy_authenticate,
  proxy_authorization,
  proxy_connection,
  te,
  trailer,
  transfer_encoding,
  upgrade,
  // The gateway's own, or ones it writes itself.
  authorization,
  committed_version,
  expected_version,
  fence_grant,
  fence_realm,
  fence_epoch,
  fence_owner,
  forwarded,
  host,
  idempotency_key,
  idempotent_replayed,
  traceparent,
  tracestate,
  x_request_id,
  // Method and target overrides (http/framing.hpp refuses them).
  x_http_method_override,
  x_http_method,
  x_method_override,
  x_original_url,
  x_rewrite_url,
  // Others a rule names.
  content_type,
  date,
  set_cookie,
  // Families: a name under a prefix the gateway owns and not one of the
  // names above: Gateway-*, Fence-*, X-Forwarded-*.
  gateway_family,
  fence_family,
  x_forwarded_family,
};

constexpr std::size_t field_name_count = static_cast<std::size_t>(FieldName::x_forwarded_family) + 1;

struct FieldClass {
  FieldName name = FieldName::other;
  // Told apart only by reading '_' as '-' (same_field_name in
  // core/http_syntax.hpp): `Fence_Epoch`, `Gateway_Status`. For a family,
  // whether its prefix had a '_'. Rules that compare names exactly, as
  // ascii_iequals does, take a class only when this is false.
  bool underscore = false;

  // The class a rule that compares exactly sees: `other` for an underscored one.
  FieldName exact() const { return underscore ? FieldName::other : name; }
};

// ASCII case folded and '_' read as '-', as a server behind the gateway may
// read it. A name that folds to one of the names above is that name; else a
// name that starts with a family's prefix (longer than it or not) is that
// family; else other.
FieldClass classify_field(std::string_view name);

// The name as the class stands for it ("Content-Length"); a family's prefix
// ("Gateway-"); "" for other.
std::string_view canonical_spelling(FieldName name);

}  // namespace gw
