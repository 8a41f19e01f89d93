#include "service/proxy/forwarding.hpp"

#include "core/base64url.hpp"
#include "core/field_name.hpp"
#include "core/http_syntax.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <array>

namespace gw {
namespace {

using http::iequals;

bool hop_by_hop(FieldName name) {
  switch (name) {
    case FieldName::connection:
    case FieldName::keep_alive:
    case FieldName::proxy_authenticate:
    case FieldName::proxy_authorization:
    case FieldName::proxy_connection:
    case FieldName::te:
    case FieldName::trailer:
    case FieldName::transfer_encoding:
    case FieldName::upgrade:
    case FieldName::content_length:
    case FieldName::expect:
      return true;
    default:
      return false;
  }
}

// An agent's header the provider must never see from the agent: hop-by-hop
// and framing ones, and every one the gateway owns or writes itself
// (traceparent and tracestate too: the gateway sends its own
// (ForwardContext), a span of its own under the caller's trace).
bool gateway_owned(FieldName name) {
  switch (name) {
    case FieldName::authorization:
    case FieldName::fence_grant:
    case FieldName::fence_realm:
    case FieldName::fence_epoch:
    case FieldName::fence_owner:
    case FieldName::idempotency_key:
    case FieldName::expected_version:
    case FieldName::x_request_id:
    case FieldName::forwarded:
    case FieldName::host:
    case FieldName::idempotent_replayed:
    case FieldName::traceparent:
    case FieldName::tracestate:
    case FieldName::gateway_family:
    case FieldName::fence_family:
    case FieldName::x_forwarded_family:
      return true;
    default:
      return hop_by_hop(name);
  }
}

// A provider's header the agent must never see: hop-by-hop and framing ones,
// Set-Cookie and Date (they belong to one exchange, not to a replay), and
// the gateway's own reply headers, so that a provider cannot make a
// pass-through or a rejection look committed or replayed.
bool kept_from_agent(FieldName name) {
  switch (name) {
    case FieldName::set_cookie:
    case FieldName::date:
    case FieldName::committed_version:
    case FieldName::idempotent_replayed:
    case FieldName::gateway_family:
      return true;
    default:
      return hop_by_hop(name);
  }
}

bool in(std::string_view name, auto const& names) {
  return std::any_of(names.begin(), names.end(), [&](std::string_view n) { return iequals(n, name); });
}

// Towards the provider, names are compared as a server behind us may fold
// them ('_' as '-'): an agent's `Fence_Epoch` is dropped like `Fence-Epoch`.
bool in_folded(std::string_view name, auto const& names) {
  return std::any_of(names.begin(), names.end(), [&](std::string_view n) { return same_field_name(n, name); });
}

// The header names that the list's Connection headers name: hop-by-hop too.
// Collected once per list (none, nearly always), not once per header.
std::vector<std::string_view> connection_named(const http::Fields& headers) {
  std::vector<std::string_view> names;
  for (const auto& [k, v] : headers) {
    if (!iequals(k, "Connection")) continue;
    std::string_view rest = v;
    while (!rest.empty()) {
      auto comma = rest.find(',');
      auto token = rest.substr(0, comma);
      while (!token.empty() && (token.front() == ' ' || token.front() == '\t')) token.remove_prefix(1);
      while (!token.empty() && (token.back() == ' ' || token.back() == '\t')) token.remove_suffix(1);
      if (!token.empty()) names.push_back(token);
      if (comma == std::string_view::npos) break;
      rest.remove_prefix(comma + 1);
    }
  }
  return names;
}

// RFC 7239 wants IPv6 addresses quoted and bracketed.
std::string forwarded_for(const std::string& remote) {
  if (remote.find(':') != std::string::npos) return "\"[" + remote + "]\"";
  return remote.empty() ? "unknown" : remote;
}

}  // namespace

http::Fields upstream_headers(const http::Fields& agent, const ProviderConfig& p, const std::string& credential,
                              ForwardContext context, const std::optional<FenceHeaders>& fence) {
  http::Fields out;
  out.reserve(agent.size() + 9);  // the agent's, less the dropped, plus at most nine of ours
  const auto hop_named = connection_named(agent);
  for (const auto& [k, v] : agent) {
    // Towards the provider, in any spelling a server behind it may fold to the same name.
    if (gateway_owned(classify_field(k).name) || in_folded(k, hop_named)) continue;
    if (in_folded(k, std::array<std::string_view, 5>{p.credential_header, p.idempotency_header, p.fence_realm_header,
                                                     p.fence_epoch_header, p.fence_owner_header}))
      continue;
    out.emplace_back(k, v);
  }
  out.emplace_back(p.credential_header, p.credential_prefix + credential);
  if (fence) {
    out.emplace_back(p.idempotency_header, fence->upstream_key);
    out.emplace_back(p.fence_realm_header, fence->realm);
    out.emplace_back(p.fence_epoch_header, std::to_string(fence->epoch));
    out.emplace_back(p.fence_owner_header, fence->owner);
  }
  // The context's values are moved in: it is made for this one request.
  out.emplace_back("X-Request-Id", std::move(context.request_id));
  if (context.traceparent) {
    out.emplace_back("traceparent", std::move(*context.traceparent));
    if (context.tracestate) out.emplace_back("tracestate", std::move(*context.tracestate));
  }
  const bool with_host = context.host && !context.host->empty() &&
                         std::none_of(context.host->begin(), context.host->end(),
                                      [](char c) { return c == '"' || c == ';' || c == ','; });
  const auto agent_address = forwarded_for(context.remote);
  std::string forwarded;
  forwarded.reserve(32 + agent_address.size() + (with_host ? context.host->size() : 0));  // one allocation
  forwarded += "for=";
  forwarded += agent_address;
  forwarded += ";proto=http";
  if (with_host) {
    forwarded += ";host=\"";
    forwarded += *context.host;
    forwarded += '"';
  }
  out.emplace_back("Forwarded", std::move(forwarded));
  return out;
}

http::Fields reply_headers(http::Fields provider_headers, const ProviderConfig&) {
  // Filtered in place: the kept fields are moved, never copied. The names
  // Connection lists are copied first, since the filter moves the list.
  std::vector<std::string> hop_named;
  for (auto name : connection_named(provider_headers)) hop_named.emplace_back(name);
  std::erase_if(provider_headers, [&](const http::Fields::value_type& field) {
    // Names as the agent's side reads them: exactly, ASCII case folded.
    return kept_from_agent(classify_field(field.name).exact()) || in(field.name, hop_named);
  });
  return provider_headers;
}

std::string upstream_target(const ProviderConfig& p, std::string_view rest, std::string_view query) {
  std::string target = p.base_path;
  target += rest.empty() ? std::string_view("/") : rest;
  target += query;
  return target;
}

ProviderTarget split_provider_target(std::string_view target) {
  ProviderTarget out;
  auto q = target.find('?');
  if (q != std::string_view::npos) out.query = target.substr(q);
  auto path = target.substr(0, q);
  // Skip "/v1/tenants/{t}/tasks/{k}/providers/{p}": seven segments.
  std::size_t at = 0;
  for (int segment = 0; segment < 7 && at != std::string_view::npos; ++segment) at = path.find('/', at + 1);
  if (at != std::string_view::npos) out.rest = path.substr(at);
  return out;
}

// Every recorded outcome stores its reply's headers this way, so the JSON is
// written directly (a DOM and its serializer were a twentieth of a protected
// request). Only a string of tab and printable ASCII is written as a JSON
// string here; the rest is base64, so escaping needs only three cases.
namespace {

bool plain_text(std::string_view v) {
  return std::ranges::all_of(v, [](unsigned char c) { return c == '\t' || (c >= 0x20 && c <= 0x7e); });
}

void append_json_string(std::string& out, std::string_view plain) {
  out += '"';
  for (char c : plain) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (c == '\t') {
      out += "\\t";
    } else {
      out += c;
    }
  }
  out += '"';
}

}  // namespace

std::string headers_to_json(const http::Fields& headers) {
  std::size_t size = 2;
  for (const auto& [name, value] : headers) size += name.size() + value.size() + 8;
  std::string out;
  out.reserve(size);
  out += '[';
  for (const auto& [name, value] : headers) {
    // Names are HTTP tokens by now (both parsers check); a header whose name
    // is not is left out rather than recorded in a form no parser gave.
    if (!plain_text(name)) continue;
    if (out.size() > 1) out += ',';
    out += '[';
    append_json_string(out, name);
    out += ',';
    if (plain_text(value)) {
      append_json_string(out, value);
    } else {
      out += R"({"base64":")";
      out += base64_encode(value);
      out += R"("})";
    }
    out += ']';
  }
  out += ']';
  return out;
}

http::Fields headers_from_json(std::string_view text) {
  http::Fields out;
  auto j = nlohmann::json::parse(text, nullptr, false);
  if (!j.is_array()) return out;
  for (const auto& pair : j) {
    if (!pair.is_array() || pair.size() != 2 || !pair[0].is_string()) continue;
    if (pair[1].is_string()) {
      out.emplace_back(pair[0].get<std::string>(), pair[1].get<std::string>());
    } else if (pair[1].is_object() && pair[1].contains("base64") && pair[1]["base64"].is_string()) {
      if (auto bytes = base64_decode(pair[1]["base64"].get<std::string>()))
        out.emplace_back(pair[0].get<std::string>(), std::move(*bytes));
    }
  }
  return out;
}

}  // namespace gw
