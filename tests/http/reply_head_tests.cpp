// The reply head as the server writes it: status line, the reply's fields in
// order, and the framing the server owns (Connection, Content-Length).
#include "http/reply_head.hpp"

#include <doctest/doctest.h>

namespace gw::http {

namespace {
Response reply(unsigned status, Fields headers, std::string body) {
  Response r;
  r.status = status;
  r.headers = std::move(headers);
  r.body = std::move(body);
  return r;
}
}  // namespace

TEST_CASE("reply_head: status line, fields in order, Content-Length of the body") {
  auto r = reply(201, {{"Content-Type", "application/json"}, {"X-Request-Id", "abc"}}, "{\"a\":1}");
  CHECK(reply_head(r, 11, true, false) ==
        "HTTP/1.1 201 Created\r\nContent-Type: application/json\r\nX-Request-Id: abc\r\nContent-Length: 7\r\n\r\n");
  CHECK(reply_head(reply(597, {}, ""), 11, true, false) == "HTTP/1.1 597 <unknown-status>\r\nContent-Length: 0\r\n\r\n");
}

TEST_CASE("reply_head: unknown_outcome's 504 reads Outcome Unknown, never Gateway Timeout, and only for that code") {
  // spec section 5 makes unknown_outcome a 504 also when the provider answered at once (a 5xx).
  CHECK(reply_head(reply(504, {{"Gateway-Status", "unknown_outcome"}}, ""), 11, true, false) ==
        "HTTP/1.1 504 Outcome Unknown\r\nGateway-Status: unknown_outcome\r\nContent-Length: 0\r\n\r\n");
  CHECK(reply_head(reply(504, {}, ""), 11, true, false).starts_with("HTTP/1.1 504 Gateway Timeout\r\n"));
  CHECK(reply_head(reply(504, {{"Gateway-Status", "committed"}}, ""), 11, true, false)
            .starts_with("HTTP/1.1 504 Gateway Timeout\r\n"));
  CHECK(reply_head(reply(502, {{"Gateway-Status", "unknown_outcome"}}, ""), 11, true, false)
            .starts_with("HTTP/1.1 502 Bad Gateway\r\n"));
}

TEST_CASE("reply_head: keep-alive as each HTTP version expects it") {
  auto r = reply(200, {}, "ok");
  CHECK(reply_head(r, 11, true, false) == "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n");
  CHECK(reply_head(r, 11, false, false) == "HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 2\r\n\r\n");
  CHECK(reply_head(r, 10, true, false) == "HTTP/1.0 200 OK\r\nConnection: keep-alive\r\nContent-Length: 2\r\n\r\n");
  CHECK(reply_head(r, 10, false, false) == "HTTP/1.0 200 OK\r\nContent-Length: 2\r\n\r\n");
}

TEST_CASE("reply_head: framing fields of the reply are never copied, the server writes its own") {
  auto r = reply(200, {{"Connection", "keep-alive"}, {"content-length", "999"}, {"Transfer-Encoding", "chunked"},
                       {"X-A", "1"}},
                 "abc");
  CHECK(reply_head(r, 11, false, false) == "HTTP/1.1 200 OK\r\nX-A: 1\r\nConnection: close\r\nContent-Length: 3\r\n\r\n");
}

TEST_CASE("reply_head: a field that could split the head is left out") {
  auto r = reply(200,
                 {{"X-Bad", "v\r\nSet-Cookie: x=1"}, {"X Bad", "v"}, {"", "v"}, {"X-Nul", std::string("a\0b", 3)},
                  {"X-Tab", "a\tb"}, {"X-Ok", "fine"}},
                 "");
  CHECK(reply_head(r, 11, true, false) == "HTTP/1.1 200 OK\r\nX-Tab: a\tb\r\nX-Ok: fine\r\nContent-Length: 0\r\n\r\n");
}

TEST_CASE("reply_head: HEAD keeps the Content-Length a GET would have, or the provider's") {
  auto r = reply(200, {}, "hello");
  CHECK(reply_head(r, 11, true, true) == "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\n");
  r.body.clear();
  r.content_length_override = "1234";
  CHECK(reply_head(r, 11, true, true) == "HTTP/1.1 200 OK\r\nContent-Length: 1234\r\n\r\n");
  CHECK(reply_head(r, 11, true, false) == "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n");
  r.content_length_override = "12\r\nX: y";
  CHECK(reply_head(r, 11, true, true) == "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n");
}

TEST_CASE("reply_head: 1xx, 204 and 304 carry no Content-Length and no body") {
  CHECK_FALSE(reply_has_body(100));
  CHECK_FALSE(reply_has_body(204));
  CHECK_FALSE(reply_has_body(304));
  CHECK(reply_has_body(200));
  CHECK(reply_has_body(404));
  CHECK(reply_head(reply(204, {{"X-A", "1"}}, ""), 11, true, false) == "HTTP/1.1 204 No Content\r\nX-A: 1\r\n\r\n");
  CHECK(reply_head(reply(304, {{"ETag", "\"v1\""}}, ""), 11, true, false) ==
        "HTTP/1.1 304 Not Modified\r\nETag: \"v1\"\r\n\r\n");
}

}  // namespace gw::http
