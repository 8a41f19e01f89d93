// Table tests for the request rules: what may be written, default Host,
// when Content-Length is due, the head as written, Connection: close.
#include "upstream/request_rules.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <random>
#include <string>
#include <vector>

namespace gw::upstream::detail {

TEST_CASE("request_problem accepts a plain request and rejects smuggling characters") {
  Request ok{"POST", "/v1/items?x=1", {{"X-Trace", "a\tb"}, {"Idempotency-Key", "k-1"}}, "{}"};
  CHECK(request_problem(ok).empty());

  struct Row {
    Request request;
    const char* why;
  };
  const Row rows[] = {
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

TEST_CASE("wire_head writes the request line and fields in order, framed by the client") {
  Endpoint e;
  e.host = "127.0.0.1";
  e.port = "8080";
  SUBCASE("a GET gets the default Host and no Content-Length") {
    Request r{"GET", "/v1/items?x=1", {{"Accept", "application/json"}, {"X-Trace", "a\tb"}}, {}};
    CHECK(wire_head(r, e) ==
          "GET /v1/items?x=1 HTTP/1.1\r\nHost: 127.0.0.1:8080\r\nAccept: application/json\r\n"
          "X-Trace: a\tb\r\n\r\n");
  }
  SUBCASE("a caller's Host is kept where it is, and not doubled") {
    Request r{"GET", "/", {{"Accept", "*/*"}, {"host", "api.example"}}, {}};
    CHECK(wire_head(r, e) == "GET / HTTP/1.1\r\nAccept: */*\r\nhost: api.example\r\n\r\n");
  }
  SUBCASE("a caller's framing fields are dropped and Content-Length is the body's") {
    Request r{"POST", "/b", {{"Content-Length", "999"}, {"Transfer-Encoding", "chunked"}, {"X-A", "1"}}, "{\"a\":1}"};
    CHECK(wire_head(r, e) == "POST /b HTTP/1.1\r\nHost: 127.0.0.1:8080\r\nX-A: 1\r\nContent-Length: 7\r\n\r\n");
  }
  SUBCASE("a POST with no body says Content-Length: 0") {
    Request r{"POST", "/b", {}, {}};
    CHECK(wire_head(r, e) == "POST /b HTTP/1.1\r\nHost: 127.0.0.1:8080\r\nContent-Length: 0\r\n\r\n");
  }
}

TEST_CASE("wire_head: the same bytes as the head appended piece by piece, over 5,000 requests") {
  std::mt19937 rng(31);
  const auto pick = [&](std::size_t n) { return std::uniform_int_distribution<std::size_t>(0, n - 1)(rng); };
  const std::vector<std::string> methods{"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE"};
  const std::vector<std::string> names{"Host", "host", "Content-Length", "transfer-encoding", "X-A", "Authorization",
                                       "X-Request-Id", "traceparent", "Forwarded"};
  for (int round = 0; round < 5000; ++round) {
    Endpoint e;
    e.host = pick(2) ? "127.0.0.1" : "::1";
    e.tls = pick(2) == 0;
    e.port = pick(3) == 0 ? (e.tls ? "443" : "80") : std::to_string(1 + pick(65535));
    Request r{methods[pick(methods.size())], "/" + std::string(pick(40), 'p'), {}, std::string(pick(3) * 700, 'b')};
    for (std::size_t i = pick(8); i > 0; --i) r.headers.push_back({names[pick(names.size())], std::string(pick(90), 'v')});
    // Written plainly: each piece appended.
    std::string want = r.method + " " + r.target + " HTTP/1.1\r\n";
    if (std::none_of(r.headers.begin(), r.headers.end(), [](const Header& h) { return iequals(h.name, "Host"); }))
      want += "Host: " + default_host(e) + "\r\n";
    for (const auto& h : r.headers)
      if (!is_framing_header(h.name)) want += h.name + ": " + h.value + "\r\n";
    if (needs_content_length(r.method, r.body.size())) want += "Content-Length: " + std::to_string(r.body.size()) + "\r\n";
    want += "\r\n";
    REQUIRE(wire_head(r, e) == want);
  }
}

TEST_CASE("asks_close finds the close token in any Connection field, in any case") {
  CHECK_FALSE(asks_close({}));
  CHECK_FALSE(asks_close({{"Connection", "keep-alive"}}));
  CHECK_FALSE(asks_close({{"X-Connection", "close"}}));
  CHECK_FALSE(asks_close({{"Connection", "closed"}}));
  CHECK(asks_close({{"Connection", "close"}}));
  CHECK(asks_close({{"connection", "Upgrade, CLOSE"}}));
  CHECK(asks_close({{"Connection", "keep-alive"}, {"Connection", " close\t"}}));
}

}  // namespace gw::upstream::detail
