#include "http/framing.hpp"

#include "core/field_name.hpp"

#include <array>

namespace gw::http {
namespace {

// Told exactly (ascii_iequals), in the order their refusals are checked.
constexpr std::array<FieldName, 9> singletons{
    FieldName::content_length, FieldName::host,         FieldName::authorization,
    FieldName::fence_grant,    FieldName::idempotency_key, FieldName::expected_version,
    FieldName::content_type,   FieldName::expect,       FieldName::x_request_id};

// What an override header overrides, or null. Refused in any spelling a
// server behind us may fold to the same name (X_HTTP_Method too).
const char* overridden(FieldName name) {
  switch (name) {
    case FieldName::x_http_method_override:
    case FieldName::x_http_method:
    case FieldName::x_method_override:
      return "method";
    // IIS, Symfony, Zend and Laminas route by these instead of the request line.
    case FieldName::x_original_url:
    case FieldName::x_rewrite_url:
      return "target";
    default:
      return nullptr;
  }
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

}  // namespace

std::optional<std::string> head_problem(std::string_view target, const Fields& headers) {
  for (unsigned char c : target)
    if (c < 0x21 || c > 0x7e) return "the request target must be visible ASCII; percent-encode other bytes";

  // One pass classifies every field (core/field_name.hpp); the refusals are
  // then checked in their order, whichever field came first.
  std::array<unsigned, field_name_count> seen{};
  std::optional<std::string_view> transfer_encoding;
  const std::string* override_name = nullptr;  // the first override field, of either kind
  const char* override_kind = nullptr;
  for (const auto& [k, v] : headers) {
    const auto field = classify_field(k);
    if (const char* kind = overridden(field.name)) {
      if (!override_name) {
        override_name = &k;
        override_kind = kind;
      }
      continue;
    }
    const auto exact = field.exact();
    ++seen[static_cast<std::size_t>(exact)];
    if (exact == FieldName::transfer_encoding && !transfer_encoding) transfer_encoding = v;
  }
  const auto count = [&](FieldName name) { return seen[static_cast<std::size_t>(name)]; };

  if (transfer_encoding) {
    if (count(FieldName::transfer_encoding) > 1 || !iequals(trim(*transfer_encoding), "chunked"))
      return "Transfer-Encoding must be exactly \"chunked\"";
    if (count(FieldName::content_length) > 0) return "Transfer-Encoding and Content-Length must not both be sent";
  }
  for (auto name : singletons)
    if (count(name) > 1) return "header " + std::string(canonical_spelling(name)) + " must appear at most once";
  if (override_name) return std::string(override_kind) + "-override headers are refused (" + *override_name + ")";
  return std::nullopt;
}

}  // namespace gw::http
