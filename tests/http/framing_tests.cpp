// head_problem as a table: which request heads the server refuses before it
// reads a body (RFC 9112 framing, singleton headers, override headers,
// target bytes), and that ordinary heads pass.
#include "http/framing.hpp"

#include "core/http_syntax.hpp"
#include "support/near_field_names.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <optional>
#include <random>
#include <string>
#include <vector>

using namespace gw::http;

namespace {
bool refused(std::string_view target, const Fields& headers) { return head_problem(target, headers).has_value(); }
}  // namespace

TEST_CASE("head_problem: ordinary heads pass") {
  CHECK_FALSE(refused("/v1/tenants/a/tasks/b/claim", {{"Host", "x"}, {"Content-Length", "10"}}));
  CHECK_FALSE(refused("/x?q=%C3%A9&a=b", {{"Transfer-Encoding", "chunked"}}));
  CHECK_FALSE(refused("/x", {{"Transfer-Encoding", " Chunked "}}));
  CHECK_FALSE(refused("/x", {{"Accept", "a"}, {"Accept", "b"}}));  // a list header may repeat
  CHECK_FALSE(refused("/x", {}));
}

TEST_CASE("head_problem: Transfer-Encoding other than exactly chunked") {
  for (const char* te : {"identity", "chunked, identity", "xchunked", "gzip", "gzip, chunked", "chunked;x=1", "",
                         "chunked,", ",chunked", "chunked chunked"}) {
    CAPTURE(te);
    auto why = head_problem("/x", {{"Transfer-Encoding", te}});
    REQUIRE(why);
    CHECK(why->find("Transfer-Encoding") != std::string::npos);
  }
  CHECK(refused("/x", {{"Transfer-Encoding", "chunked"}, {"transfer-encoding", "chunked"}}));
  CHECK(refused("/x", {{"Transfer-Encoding", "chunked"}, {"Content-Length", "5"}}));
}

TEST_CASE("head_problem: singleton headers at most once, in any spelling") {
  for (const char* name : {"Content-Length", "Host", "Authorization", "Fence-Grant", "Idempotency-Key",
                           "Expected-Version", "Content-Type", "Expect", "X-Request-Id"}) {
    CAPTURE(name);
    CHECK_FALSE(refused("/x", {{name, "1"}}));
    CHECK(refused("/x", {{name, "1"}, {name, "1"}}));  // even the same value
    std::string lower(name);
    for (auto& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    CHECK(refused("/x", {{name, "1"}, {lower, "2"}}));
  }
}

TEST_CASE("head_problem: method-override headers") {
  for (const char* name : {"X-HTTP-Method-Override", "X-HTTP-Method", "X-Method-Override", "x-http-method",
                           "X_HTTP_Method_Override", "x_http-method"}) {
    CAPTURE(name);
    CHECK(refused("/x", {{name, "DELETE"}}));
  }
}

TEST_CASE("head_problem: target-override headers (X-Original-URL, X-Rewrite-URL), in any spelling") {
  // Frameworks that honour them route to the path they name, not the one the gateway checked.
  for (const char* name : {"X-Original-URL", "X-Rewrite-URL", "x-original-url", "X_Original_URL", "X_REWRITE_URL"}) {
    CAPTURE(name);
    CHECK(refused("/x", {{name, "/v1/admin/held"}}));
  }
  CHECK_FALSE(refused("/x", {{"X-Original-Host", "a"}, {"X-URL", "/b"}}));
}

TEST_CASE("head_problem: request-target bytes outside visible ASCII") {
  for (const auto& target :
       std::vector<std::string>{"/a\x80", "/\xff", "/caf\xc3\xa9", "/a b", "/a\tb", "/a\x7f", std::string("/a\0b", 4)}) {
    CAPTURE(target);
    CHECK(refused(target, {}));
  }
  CHECK_FALSE(refused("/~!$&'()*+,;=:@-._%20", {}));
}

namespace {

// head_problem's header rules written plainly: each name compared with each
// list, as they were before fields were classified once.
std::optional<std::string> plain_head_problem(const Fields& headers) {
  constexpr std::array<std::string_view, 9> singletons{"Content-Length", "Host",           "Authorization",
                                                       "Fence-Grant",    "Idempotency-Key", "Expected-Version",
                                                       "Content-Type",   "Expect",         "X-Request-Id"};
  constexpr std::array<std::string_view, 3> method_overrides{"X-HTTP-Method-Override", "X-HTTP-Method",
                                                             "X-Method-Override"};
  constexpr std::array<std::string_view, 2> target_overrides{"X-Original-URL", "X-Rewrite-URL"};
  const auto count = [&](std::string_view name) {
    return std::count_if(headers.begin(), headers.end(), [&](const auto& h) { return iequals(h.name, name); });
  };
  const auto trim = [](std::string_view s) {
    while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
    while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
    return s;
  };
  if (auto te = find_header(headers, "Transfer-Encoding")) {
    if (count("Transfer-Encoding") > 1 || !iequals(trim(*te), "chunked"))
      return "Transfer-Encoding must be exactly \"chunked\"";
    if (find_header(headers, "Content-Length")) return "Transfer-Encoding and Content-Length must not both be sent";
  }
  for (auto name : singletons)
    if (count(name) > 1) return "header " + std::string(name) + " must appear at most once";
  for (const auto& [k, v] : headers) {
    for (auto name : method_overrides)
      if (gw::same_field_name(k, name)) return "method-override headers are refused (" + k + ")";
    for (auto name : target_overrides)
      if (gw::same_field_name(k, name)) return "target-override headers are refused (" + k + ")";
  }
  return std::nullopt;
}

}  // namespace

TEST_CASE("head_problem: the same answer as its rules written plainly, over 20,000 heads of names made to come close") {
  std::mt19937 rng(4093);
  const auto pick = [&](std::size_t n) { return std::uniform_int_distribution<std::size_t>(0, n - 1)(rng); };
  const std::array<std::string, 5> values{"chunked", " Chunked\t", "gzip", "chunked, identity", ""};
  for (int round = 0; round < 20000; ++round) {
    Fields headers;
    for (std::size_t i = pick(7); i > 0; --i) headers.emplace_back(gw::test::near_field_name(rng), values[pick(values.size())]);
    // A repeat of one already there, as a duplicate singleton would be.
    if (!headers.empty() && pick(3) == 0) headers.push_back(headers[pick(headers.size())]);
    std::string described;
    for (const auto& [k, v] : headers) described += k + ": " + v + "\n";
    CAPTURE(described);
    REQUIRE(head_problem("/v1/x", headers) == plain_head_problem(headers));
  }
}
