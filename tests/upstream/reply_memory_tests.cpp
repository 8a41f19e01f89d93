// What a provider's reply can make the client hold: the body is bounded by
// max_response_body as it arrives, and everything else Beast must see whole
// (the head, a chunk-size line with its extensions, the trailer block) by
// the read buffer's own bound, whatever the provider streams. Memory is the
// kernel's count of this process's peak RSS (peak_memory.hpp).
#include "client_harness.hpp"
#include "peak_memory.hpp"

namespace gw::upstream::test {
namespace {

constexpr std::size_t MiB = 1024 * 1024;

TEST_CASE("a chunk extension or trailer larger than the read buffer is response_too_large, in bounded memory") {
  const std::string head = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n";
  std::string before, unit, after;
  std::size_t times = 0;
  SUBCASE("a 64 MiB chunk extension") {
    before = head + "5;ext=";
    unit = "e";
    times = 64 * MiB;
    after = "\r\nhello\r\n0\r\n\r\n";
  }
  SUBCASE("a 64 MiB trailer field") {
    before = head + "5\r\nhello\r\n0\r\nX-Trailer: ";
    unit = "t";
    times = 64 * MiB;
    after = "\r\n\r\n";
  }
  SUBCASE("8 MiB of small trailer fields") {
    before = head + "5\r\nhello\r\n0\r\n";
    unit = "a: b\r\n";
    times = 8 * MiB / unit.size();
    after = "\r\n";
  }
  SUBCASE("a chunk-size line of 64 MiB of leading zeros") {
    before = head;
    unit = "0";
    times = 64 * MiB;
    after = "5\r\nhello\r\n0\r\n\r\n";
  }
  TestServer server([&](ServerSession& s) {
    if (!s.read_request()) return;
    if (s.write(before) && s.write_repeated(unit, times)) s.write(after);
    s.wait_for_eof();
  });
  Harness h;
  auto e = local(server);
  e.max_response_body = 1 * MiB;
  REQUIRE(reset_peak_rss());
  const std::size_t before_kib = status_kib("VmRSS");
  Result r = h.send(e, get());
  const std::size_t peak_kib = status_kib("VmHWM");
  check_failure(r, Failure::response_too_large, true);
  CHECK(r.detail.find("chunk extension or trailer") != std::string::npos);
  eventually([&] { return server.finished_scripts() == 1; });  // the client closed it
  // What the provider sent is 8 to 64 MiB; the client may hold a read
  // buffer's worth of it (well under 1 MiB). The rest is slack for the
  // allocator and the test's own threads.
  CAPTURE(before_kib);
  CAPTURE(peak_kib);
  CHECK(peak_kib < before_kib + 16 * 1024);
}

std::string pattern(std::size_t size) {
  std::string s(size, '\0');
  for (std::size_t i = 0; i < size; ++i) s[i] = static_cast<char>('a' + i % 23);
  return s;
}

TEST_CASE("bodies up to max_response_body, extensions and trailers under the bound, read whole") {
  const std::string body = pattern(4 * MiB);
  std::string response;
  std::string trailer;
  SUBCASE("Content-Length") { response = reply(200, body); }
  SUBCASE("chunked, 1 MiB chunks") {
    response = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n";
    for (std::size_t at = 0; at < body.size(); at += MiB) response += "100000\r\n" + body.substr(at, MiB) + "\r\n";
    response += "0\r\n\r\n";
  }
  SUBCASE("chunked, one chunk") {
    response = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n400000\r\n" + body + "\r\n0\r\n\r\n";
  }
  SUBCASE("chunked, a 30 KiB extension and a 30 KiB trailer field") {
    trailer = std::string(30 * 1024, 't');
    response = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n200000;ext=" + std::string(30 * 1024, 'e') +
               "\r\n" + body.substr(0, 2 * MiB) + "\r\n200000\r\n" + body.substr(2 * MiB) + "\r\n0\r\nX-Trailer: " +
               trailer + "\r\n\r\n";
  }
  TestServer server(answer_all(response));
  Harness h;
  auto e = local(server);
  e.max_response_body = 4 * MiB;
  for (int i = 0; i < 2; ++i) {  // and the connection is reused after each
    Result r = h.send(e, get());
    check_success(r, 200);
    CHECK(r.response->body.size() == body.size());
    CHECK(r.response->body == body);
    if (!trailer.empty()) {
      REQUIRE(r.response->headers.size() == 2);
      CHECK(r.response->headers[1].name == "X-Trailer");
      CHECK(r.response->headers[1].value == trailer);
    }
  }
  CHECK(server.connections() == 1);
}

}  // namespace
}  // namespace gw::upstream::test
