// What crosses the proxy, as tables.
#include "core/base64url.hpp"
#include "core/http_syntax.hpp"
#include "core/methods.hpp"
#include "service/proxy/forwarding.hpp"
#include "support/near_field_names.hpp"

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <array>
#include <random>
#include <string>
#include <vector>

using namespace gw;

namespace {
ProviderConfig provider() {
  ProviderConfig p;
  p.name = "booking";
  p.host = "127.0.0.1";
  p.port = "9101";
  p.shared_credential = "provider-secret";
  p.index_credentials();
  return p;
}
bool has(const http::Fields& f, const std::string& name) { return http::find_header(f, name).has_value(); }
}  // namespace

TEST_CASE("upstream headers: agent credentials, gateway and hop-by-hop headers never reach the provider") {
  const http::Fields agent{{"Authorization", "Bearer agent-token"},
                           {"Fence-Grant", "token"},
                           {"Idempotency-Key", "op-1"},
                           {"Expected-Version", "3"},
                           {"Fence-Epoch", "999"},
                           {"Gateway-Status", "committed"},
                           {"X-Forwarded-For", "1.2.3.4"},
                           {"Forwarded", "for=1.2.3.4"},
                           {"X-Request-Id", "agent-chosen"},
                           {"Connection", "keep-alive, X-Drop-Me"},
                           {"X-Drop-Me", "1"},
                           {"Keep-Alive", "timeout=5"},
                           {"Transfer-Encoding", "chunked"},
                           {"Content-Length", "10"},
                           {"Host", "gateway.local"},
                           {"Content-Type", "application/json"},
                           {"X-Custom", "kept"}};
  auto out = upstream_headers(agent, provider(), "provider-secret", {"req-1", "10.0.0.7", "gateway.local"},
                              FenceHeaders{"gw1-key", "realm-1", 42, "region-a"});
  for (auto name : {"Fence-Grant", "Expected-Version", "Gateway-Status", "X-Forwarded-For", "X-Drop-Me",
                    "Keep-Alive", "Transfer-Encoding", "Content-Length", "Host", "Connection"})
    CHECK_MESSAGE(!has(out, name), name);
  CHECK(http::find_header(out, "Content-Type") == "application/json");
  CHECK(http::find_header(out, "X-Custom") == "kept");
  CHECK(http::find_header(out, "Authorization") == "Bearer provider-secret");
  CHECK(http::find_header(out, "Idempotency-Key") == "gw1-key");
  CHECK(http::find_header(out, "Fence-Realm") == "realm-1");
  CHECK(http::find_header(out, "Fence-Epoch") == "42");
  CHECK(http::find_header(out, "Fence-Owner") == "region-a");
  CHECK(http::find_header(out, "X-Request-Id") == "req-1");
  CHECK(http::find_header(out, "Forwarded") == "for=10.0.0.7;proto=http;host=\"gateway.local\"");
  int authorizations = 0;
  for (const auto& [k, v] : out) authorizations += http::iequals(k, "Authorization");
  CHECK(authorizations == 1);
}

TEST_CASE("upstream headers: provider-specific header names cannot be forged by the agent") {
  auto p = provider();
  p.credential_header = "X-Api-Key";
  p.credential_prefix = "";
  p.idempotency_header = "X-Idem";
  const http::Fields agent{{"X-Api-Key", "forged"}, {"X-Idem", "forged"}, {"Authorization", "Bearer agent"}};
  auto out = upstream_headers(agent, p, "provider-secret", {"r", "::1", std::nullopt}, std::nullopt);
  CHECK(http::find_header(out, "X-Api-Key") == "provider-secret");
  CHECK_FALSE(has(out, "X-Idem"));  // unprotected: no identity, and the forged one is gone
  CHECK_FALSE(has(out, "Authorization"));
  CHECK_FALSE(has(out, "Fence-Epoch"));
  CHECK(http::find_header(out, "Forwarded") == "for=\"[::1]\";proto=http");
}

TEST_CASE("upstream headers: '_' for '-' in a name the gateway owns or drops is dropped too") {
  // CGI, WSGI and PHP give a provider HTTP_FENCE_EPOCH for Fence-Epoch and Fence_Epoch alike.
  auto p = provider();
  p.credential_header = "X-Api-Key";
  p.credential_prefix = "";
  const http::Fields agent{{"Fence_Epoch", "999"},        {"FENCE_REALM", "forged"},    {"fence_owner", "forged"},
                           {"Idempotency_Key", "forged"}, {"X_Request_Id", "forged"},   {"Fence_Grant", "token"},
                           {"Expected_Version", "3"},     {"Gateway_Status", "forged"}, {"X_Forwarded_For", "1.2.3.4"},
                           {"X_Api_Key", "forged"},       {"Content_Length", "5"},      {"Transfer_Encoding", "chunked"},
                           {"Fence-Anything", "forged"},  {"X_Custom", "kept"}};
  auto out = upstream_headers(agent, p, "provider-secret", {"req-1", "10.0.0.7", std::nullopt},
                              FenceHeaders{"gw1-key", "realm-1", 42, "region-a"});
  for (const auto& [name, value] : agent) {
    if (name == "X_Custom") continue;
    CHECK_MESSAGE(std::none_of(out.begin(), out.end(), [&](const auto& f) { return f.name == name; }), name);
    CHECK_MESSAGE(std::none_of(out.begin(), out.end(), [&](const auto& f) { return f.value == value && value != "chunked"; }),
                  name);
  }
  CHECK(http::find_header(out, "X_Custom") == "kept");
  CHECK(http::find_header(out, "Fence-Epoch") == "42");
  CHECK(http::find_header(out, "X-Api-Key") == "provider-secret");
}

// A credential in a reply withholds the whole reply: tests/service/reply_screen_tests.cpp.
TEST_CASE("reply headers: hop-by-hop, framing, cookies and gateway headers never reach the agent") {
  const http::Fields provider_reply{{"Content-Type", "application/json"},
                                    {"Location", "/bookings/bk_1"},
                                    {"Transfer-Encoding", "chunked"},
                                    {"Connection", "close"},
                                    {"Set-Cookie", "session=abc"},
                                    {"Date", "Sun, 29 Nov 2026 21:00:00 GMT"},
                                    {"Gateway-Status", "forged"},
                                    {"committed-version", "99"},
                                    {"Idempotent-Replayed", "true"}};
  auto out = reply_headers(provider_reply, provider());
  CHECK(out == http::Fields{{"Content-Type", "application/json"}, {"Location", "/bookings/bk_1"}});
}

TEST_CASE("reply headers: every header a provider's Connection headers name is dropped, the rest kept in order") {
  const http::Fields provider_reply{{"X-Before", "1"},
                                    {"Connection", " x-provider-hop ,\tKeep-Alive"},
                                    {"X-Provider-Hop", "a"},
                                    {"X-Middle", "2"},
                                    {"connection", "X-Second-Hop"},
                                    {"x-second-hop", "b"},
                                    {"X-PROVIDER-HOP", "c"},
                                    {"X-After", "3"}};
  auto out = reply_headers(provider_reply, provider());
  CHECK(out == http::Fields{{"X-Before", "1"}, {"X-Middle", "2"}, {"X-After", "3"}});
}

TEST_CASE("method_rule: GET and HEAD unfenced by default, TRACE and CONNECT never, everything else fenced") {
  const auto& unfenced = provider().unfenced_methods;
  struct Case {
    const char* method;
    MethodRule rule;
  };
  const Case cases[] = {
      {"GET", MethodRule::unfenced},   {"HEAD", MethodRule::unfenced},  {"POST", MethodRule::fenced},
      {"PUT", MethodRule::fenced},     {"PATCH", MethodRule::fenced},   {"DELETE", MethodRule::fenced},
      {"post", MethodRule::fenced},    {"get", MethodRule::fenced},     {"Get", MethodRule::fenced},
      {"PURGE", MethodRule::fenced},   {"MKCOL", MethodRule::fenced},   {"X-CUSTOM", MethodRule::fenced},
      {"OPTIONS", MethodRule::fenced}, {"TRACE", MethodRule::refused},  {"trace", MethodRule::refused},
      {"CONNECT", MethodRule::refused}, {"Connect", MethodRule::refused},
  };
  for (const auto& c : cases) {
    CAPTURE(c.method);
    CHECK(method_rule(c.method, unfenced) == c.rule);
  }
  CHECK(method_rule("PURGE", {"GET", "PURGE"}) == MethodRule::unfenced);
  CHECK(method_rule("GET", {}) == MethodRule::fenced);
}

TEST_CASE("upstream target: base path, then the agent's raw path and query") {
  auto p = provider();
  CHECK(upstream_target(p, "/bookings", "?x=%2F&y=1") == "/bookings?x=%2F&y=1");
  CHECK(upstream_target(p, "", "") == "/");
  CHECK(upstream_target(p, "", "?q") == "/?q");
  p.base_path = "/api/v2";
  CHECK(upstream_target(p, "/bookings/a%20b", "") == "/api/v2/bookings/a%20b");
}

TEST_CASE("provider target: the raw rest and query after /providers/{name}") {
  auto t = split_provider_target("/v1/tenants/t/tasks/k/providers/booking/bookings/a%2Fb?x=%2F&y=1");
  CHECK(t.rest == "/bookings/a%2Fb");
  CHECK(t.query == "?x=%2F&y=1");
  t = split_provider_target("/v1/tenants/t/tasks/k/providers/booking");
  CHECK(t.rest.empty());
  CHECK(t.query.empty());
  t = split_provider_target("/v1/tenants/t/tasks/k/providers/booking?q=/x");
  CHECK(t.rest.empty());
  CHECK(t.query == "?q=/x");
  t = split_provider_target("/v1/tenants/t/tasks/k/providers/booking/");
  CHECK(t.rest == "/");
}

TEST_CASE("recorded headers round-trip through their JSON form") {
  const http::Fields headers{{"Content-Type", "text/plain"}, {"X-Dup", "1"}, {"X-Dup", "2"}};
  CHECK(headers_from_json(headers_to_json(headers)) == headers);
  CHECK(headers_from_json("not json").empty());
}

TEST_CASE("recorded headers: values with bytes outside ASCII (obs-text, not UTF-8) round-trip byte for byte") {
  std::string latin1 = "caf\xe9";                   // ISO-8859-1, invalid as UTF-8
  std::string every_high;
  for (int c = 0x80; c <= 0xff; ++c) every_high += static_cast<char>(c);
  const http::Fields headers{{"X-Latin1", latin1}, {"X-Utf8", "caf\xc3\xa9"}, {"X-High", every_high},
                             {"X-Plain", "a\tb c"}};
  const auto json = headers_to_json(headers);
  CHECK(headers_from_json(json) == headers);
  // Stored as readable text where it can be, and as base64 only where it must.
  CHECK(json.find(R"(["X-Plain","a\tb c"])") != std::string::npos);
  CHECK(json.find(R"(["X-Latin1",{"base64":"Y2Fm6Q=="}])") != std::string::npos);
  // A base64 member that does not decode is dropped, never replayed as garbage.
  CHECK(headers_from_json(R"([["X-Bad",{"base64":"%%%"}],["X-Ok","1"]])") == http::Fields{{"X-Ok", "1"}});
}

TEST_CASE("recorded headers: the JSON written is what a JSON library writes for the same list") {
  // The library's form, as headers_to_json wrote it before it wrote JSON itself.
  const auto library = [](const http::Fields& headers) {
    auto j = nlohmann::json::array();
    for (const auto& [k, v] : headers) {
      const bool plain = std::ranges::all_of(v, [](unsigned char c) { return c == '\t' || (c >= 0x20 && c <= 0x7e); });
      if (plain)
        j.push_back({k, v});
      else
        j.push_back({k, {{"base64", base64_encode(v)}}});
    }
    return j.dump();
  };
  std::string every_printable;
  for (int c = 0x20; c <= 0x7e; ++c) every_printable += static_cast<char>(c);
  const std::vector<http::Fields> lists{
      {},
      {{"Content-Type", "application/json"}},
      {{"X-Quote", "say \"hi\""}, {"X-Backslash", "C:\\dir\\"}, {"X-Tab", "\ta\tb\t"}, {"X-Empty", ""}},
      {{"X-Printable", every_printable}, {"X-Control", std::string("a\x01b\nc\x7f", 6)}, {"X-High", "caf\xe9"}},
      {{"X-Dup", "1"}, {"X-Dup", "2"}, {"Set-Cookie", "a=b; Path=/; HttpOnly"}},
  };
  for (const auto& headers : lists) {
    CAPTURE(library(headers));
    CHECK(headers_to_json(headers) == library(headers));
    CHECK(headers_from_json(headers_to_json(headers)) == headers);
  }
  // A name that is not a token never reaches here from a parser; if one did,
  // its header is left out, not recorded in a form no parser gave.
  CHECK(headers_to_json({{"Bad\nName", "1"}, {"X-Ok", "2"}}) == R"([["X-Ok","2"]])");
}

TEST_CASE("upstream headers: the agent's trace headers are replaced by the gateway's, sent only when given") {
  const http::Fields agent{{"traceparent", "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"},
                           {"TraceState", "rojo=1"}};
  ForwardContext context{"req-1", "10.0.0.7", std::nullopt};
  auto bare = upstream_headers(agent, provider(), "provider-secret", context, std::nullopt);
  CHECK_FALSE(has(bare, "traceparent"));
  CHECK_FALSE(has(bare, "tracestate"));
  context.traceparent = "00-0af7651916cd43dd8448eb211c80319c-00f067aa0ba902b7-01";
  context.tracestate = "rojo=1";
  auto out = upstream_headers(agent, provider(), "provider-secret", context, std::nullopt);
  CHECK(http::find_header(out, "traceparent") == "00-0af7651916cd43dd8448eb211c80319c-00f067aa0ba902b7-01");
  CHECK(http::find_header(out, "tracestate") == "rojo=1");
  int traceparents = 0;
  for (const auto& [k, v] : out) traceparents += http::iequals(k, "traceparent") + http::iequals(k, "tracestate");
  CHECK(traceparents == 2);
}

namespace {

// The two filters' name rules written plainly, as they were before fields
// were classified once: each name compared with each list.
constexpr std::array<std::string_view, 11> plain_hop_by_hop{
    "Connection", "Keep-Alive", "Proxy-Authenticate", "Proxy-Authorization", "Proxy-Connection", "TE",
    "Trailer",    "Transfer-Encoding", "Upgrade", "Content-Length", "Expect"};
constexpr std::array<std::string_view, 13> plain_gateway_headers{
    "Authorization", "Fence-Grant", "Fence-Realm", "Fence-Epoch", "Fence-Owner", "Idempotency-Key",
    "Expected-Version", "X-Request-Id", "Forwarded", "Host", "Idempotent-Replayed", "traceparent", "tracestate"};

std::vector<std::string> connection_tokens(const http::Fields& headers) {
  std::vector<std::string> out;
  for (const auto& [k, v] : headers) {
    if (!http::iequals(k, "Connection")) continue;
    std::string token;
    for (char c : v + ",") {
      if (c == ',') {
        while (!token.empty() && (token.back() == ' ' || token.back() == '\t')) token.pop_back();
        if (!token.empty()) out.push_back(token);
        token.clear();
      } else if (!(token.empty() && (c == ' ' || c == '\t'))) {
        token += c;
      }
    }
  }
  return out;
}

bool plain_dropped_upstream(const std::string& k, const std::vector<std::string>& named, const ProviderConfig& p) {
  const auto in = [&](const auto& names) {
    return std::any_of(names.begin(), names.end(), [&](std::string_view n) { return same_field_name(n, k); });
  };
  return in(plain_hop_by_hop) || in(plain_gateway_headers) || in(named) ||
         field_name_has_prefix(k, "Gateway-") || field_name_has_prefix(k, "Fence-") ||
         field_name_has_prefix(k, "X-Forwarded-") ||
         in(std::array<std::string_view, 5>{p.credential_header, p.idempotency_header, p.fence_realm_header,
                                            p.fence_epoch_header, p.fence_owner_header});
}

bool plain_dropped_reply(const std::string& k, const std::vector<std::string>& named) {
  const auto in = [&](const auto& names) {
    return std::any_of(names.begin(), names.end(), [&](std::string_view n) { return http::iequals(n, k); });
  };
  const auto prefixed = k.size() >= 8 && http::iequals(std::string_view(k).substr(0, 8), "Gateway-");
  return in(plain_hop_by_hop) || in(named) || http::iequals(k, "Set-Cookie") || http::iequals(k, "Date") ||
         prefixed || http::iequals(k, "Committed-Version") || http::iequals(k, "Idempotent-Replayed");
}

}  // namespace

TEST_CASE("upstream and reply headers: the same fields kept as the name rules written plainly, over 20,000 lists") {
  std::mt19937 rng(77);
  const auto pick = [&](std::size_t n) { return std::uniform_int_distribution<std::size_t>(0, n - 1)(rng); };
  auto p = provider();
  p.credential_header = "X-Api-Key";  // one of the provider's names is no name of the gateway's
  const ForwardContext context{"req-1", "10.0.0.7", "gateway.local"};
  for (int round = 0; round < 20000; ++round) {
    http::Fields fields;
    for (std::size_t i = pick(8); i > 0; --i)
      fields.emplace_back(test::near_field_name(rng), "v" + std::to_string(fields.size()));
    if (pick(4) == 0) {  // a Connection field naming some of the others, or names near them
      std::string value;
      for (std::size_t i = pick(3) + 1; i > 0; --i)
        value += (fields.empty() || pick(2) ? test::near_field_name(rng) : fields[pick(fields.size())].name) + " , ";
      fields.emplace_back(pick(2) ? "Connection" : "connection", value);
    }
    if (pick(6) == 0) fields.emplace_back(pick(2) ? "x-api-key" : "X_Api_Key", "forged");
    std::string described;
    for (const auto& [k, v] : fields) described += k + ": " + v + "\n";
    CAPTURE(described);

    const auto named = connection_tokens(fields);
    http::Fields want_upstream;
    for (const auto& f : fields)
      if (!plain_dropped_upstream(f.name, named, p)) want_upstream.push_back(f);
    auto upstream = upstream_headers(fields, p, "provider-secret", context, std::nullopt);
    REQUIRE(upstream.size() >= want_upstream.size());
    upstream.resize(want_upstream.size());  // the gateway's own come after the agent's kept ones
    REQUIRE(upstream == want_upstream);

    http::Fields want_reply;
    for (const auto& f : fields)
      if (!plain_dropped_reply(f.name, named)) want_reply.push_back(f);
    REQUIRE(reply_headers(fields, p) == want_reply);
  }
}
