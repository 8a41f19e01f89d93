// head_problem as a table: which request heads the server refuses before it
// reads a body (RFC 9112 framing, singleton headers, override headers,
// target bytes), and that ordinary heads pass.
#include "http/framing.hpp"

#include <doctest/doctest.h>

#include <cctype>
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
