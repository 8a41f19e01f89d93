// Table tests for the request rules: what may be written, default Host,
// when Content-Length is due.
#include "upstream/request_rules.hpp"

#include <doctest/doctest.h>

namespace gw::upstream::detail {

TEST_CASE("request_problem accepts a plain request and rejects smuggling characters") {
  Request ok{"POST", "/v1/items?x=1", {{"X-Trace", "a\tb"}, {"Idempotency-Key", "k-1"}}, "{}"};
  CHECK(request_problem(ok).empty());

  struct row {
    Request request;
    const char* why;
  };
  const row rows[] = {
      {{"", "/", {}, {}}, "empty method"},
      {{"PO ST", "/", {}, {}}, "space in method"},
      {{"POST", "", {}, {}}, "empty target"},
      {{"POST", "/a b", {}, {}}, "space in target"},
      {{"POST", "/a\r\nX: y", {}, {}}, "CRLF in target"},
      {{"POST", "/", {{"X-A", "v\r\nInjected: 1"}}, {}}, "CRLF in value"},
      {{"POST", "/", {{"X-A", std::string("v\0w", 3)}}, {}}, "NUL in value"},
      {{"POST", "/", {{"X A", "v"}}, {}}, "space in name"},
      {{"POST", "/", {{"", "v"}}, {}}, "empty name"},
      {{"POST", "/", {{"X-A:", "v"}}, {}}, "colon in name"},
  };
  for (const auto& r : rows) {
    CAPTURE(r.why);
    CHECK_FALSE(request_problem(r.request).empty());
  }
}

TEST_CASE("default_host omits the scheme's default port and brackets IPv6") {
  auto endpoint = [](bool tls, std::string host, std::string port) {
    Endpoint e;
    e.tls = tls;
    e.host = std::move(host);
    e.port = std::move(port);
    return e;
  };
  CHECK(default_host(endpoint(false, "api.example", "80")) == "api.example");
  CHECK(default_host(endpoint(true, "api.example", "443")) == "api.example");
  CHECK(default_host(endpoint(true, "api.example", "80")) == "api.example:80");
  CHECK(default_host(endpoint(false, "127.0.0.1", "8080")) == "127.0.0.1:8080");
  CHECK(default_host(endpoint(false, "::1", "8080")) == "[::1]:8080");
}

TEST_CASE("needs_content_length for body methods and for any body") {
  CHECK(needs_content_length("POST", 0));
  CHECK(needs_content_length("PUT", 0));
  CHECK(needs_content_length("PATCH", 0));
  CHECK(needs_content_length("DELETE", 3));
  CHECK_FALSE(needs_content_length("DELETE", 0));
  CHECK_FALSE(needs_content_length("GET", 0));
  CHECK_FALSE(needs_content_length("HEAD", 0));
}

TEST_CASE("framing headers are recognised in any case") {
  CHECK(is_framing_header("content-length"));
  CHECK(is_framing_header("Transfer-Encoding"));
  CHECK_FALSE(is_framing_header("Content-Type"));
}

}  // namespace gw::upstream::detail
