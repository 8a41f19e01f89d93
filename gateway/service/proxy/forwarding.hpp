// What crosses the proxy, as pure functions: which agent headers reach the
// provider, which provider headers reach the agent (and the ledger), and the
// upstream target. Tested as tables in tests/service/forwarding_tests.cpp.
#pragma once

#include "config/config.hpp"
#include "http/message.hpp"
#include "upstream/client.hpp"

#include <optional>
#include <string>
#include <string_view>

namespace gw {

// The fence and operation identity a protected request carries upstream.
struct FenceHeaders {
  std::string upstream_key;
  std::string realm;
  std::int64_t epoch = 0;
  std::string owner;
};

struct ForwardContext {
  std::string request_id;
  std::string remote;  // the agent's address, for Forwarded
  std::optional<std::string> host;  // the Host the agent used
  // W3C trace context for the provider (core/trace_context.hpp): the
  // gateway's traceparent and the caller's tracestate, if well-formed.
  std::optional<std::string> traceparent{}, tracestate{};  // {}: brace-initialized callers may omit them
};

// Agent -> provider: drops hop-by-hop headers (and those Connection names),
// framing, the agent's Authorization, every gateway header (Fence-*,
// Idempotency-Key, Expected-Version, Gateway-*), and any header the provider
// config names (credential, idempotency, fence) so an agent cannot forge
// them, and the agent's traceparent and tracestate, each also when spelt
// with '_' for '-' (core/http_syntax.hpp, same_field_name); then adds `credential`
// (the request's tenant's, from ProviderConfig::credential_for), the fence
// and identity headers, X-Request-Id, the context's trace headers and
// Forwarded. The context is taken by value: its strings are moved into the
// list (one per request, made for it).
http::Fields upstream_headers(const http::Fields& agent, const ProviderConfig& provider, const std::string& credential,
                              ForwardContext context, const std::optional<FenceHeaders>& fence);

// Provider -> agent: drops hop-by-hop and framing headers, Set-Cookie and
// Date (they belong to one exchange, not to a replay), and the gateway's own
// headers (Gateway-*, Committed-Version, Idempotent-Replayed). By value: the
// kept fields are moved through, in order. A reply that would carry one of
// the provider's credentials back, in its headers or its body, is withheld
// whole after this (service/proxy/reply_screen.hpp, which calls it).
http::Fields reply_headers(http::Fields provider_headers, const ProviderConfig& provider);

// The upstream request target: the provider's base path, then the agent's
// path after .../providers/{name} and its query, byte for byte (never
// decoded and re-encoded). `rest` starts at the '/' after the name, or is
// empty; `query` includes its '?' when the agent sent one.
std::string upstream_target(const ProviderConfig& provider, std::string_view rest, std::string_view query);

// Splits a proxy request target /v1/tenants/{t}/tasks/{k}/providers/{p}[rest][?query]
// into the raw rest ("" or "/...") and query ("" or "?...").
struct ProviderTarget {
  std::string_view rest;
  std::string_view query;
};
ProviderTarget split_provider_target(std::string_view target);

// Headers kept in the ledger, as JSON [[name, value], ...] text, and back.
// A value with any byte outside printable ASCII and tab (obs-text, which
// need not be UTF-8) is kept as [name, {"base64": ...}], so a replay repeats
// it byte for byte.
std::string headers_to_json(const http::Fields& headers);
http::Fields headers_from_json(std::string_view json);

}  // namespace gw
