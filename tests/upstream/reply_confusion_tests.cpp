// A provider whose bytes on a connection stop matching the requests on it:
// a HEAD reply followed by the body it announced, bytes after a reply, a
// protocol switch nobody asked for. Whatever it sends, a caller gets its own
// reply or a failure, never a reply that was meant for another request, and
// a connection holding bytes nobody asked for is never written to again.
// Every request carries a tag (X-Tag) that the scripted provider echoes.
#include "client_harness.hpp"

#include <atomic>

namespace gw::upstream::test {
namespace {

void check_own_reply(const Result& r, const std::string& tag) {
  CAPTURE(tag);
  check_success(r, 200);
  CHECK(r.response->body == "tag:" + tag);
}

// Bytes the scripted provider sends on a connection only once the test opens
// the gate (so they come after what the client has read), and the sign that
// they reached the client's socket. A test holds a gate::opener on
// `release` declared after its server, so a failing test never leaves the
// provider's thread waiting while the server joins it.
struct LateBytes {
  Gate release;
  std::promise<void> landed;

  void send(ServerSession& s, const std::string& bytes) {
    release.future.wait();
    s.write(bytes);
    s.wait_acknowledged();
    landed.set_value();
  }
  void open_and_wait() {
    release.open();
    REQUIRE(landed.get_future().wait_for(60s) == std::future_status::ready);
  }
};

TEST_CASE("HEAD whose announced body comes later: no later GET, of any partition, reads it") {
  LateBytes late;  // the HEAD's "body", only once the test has sent its GETs
  std::atomic<int> after_poison{0};
  TestServer server([&](ServerSession& s) {
    bool poisoned = false;
    while (auto request = s.read_request()) {
      if (poisoned) ++after_poison;
      const auto tag = tag_of(*request);
      if (request->method != "HEAD") {
        s.write(tagged_reply(tag));
        continue;
      }
      // The announced length is that of a complete reply of its own.
      const std::string stale = tagged_reply("stale-" + tag);
      s.write("HTTP/1.1 200 OK\r\nX-Tag: " + tag + "\r\nContent-Length: " + std::to_string(stale.size()) +
              "\r\n\r\n");
      poisoned = true;
      late.send(s, stale);
    }
  });
  Gate::Opener open_at_end{late.release};
  Harness h;
  const auto e = local(server);

  Result head = h.send(e, tagged("HEAD", "head-a", "tenant-a"));
  check_success(head, 200);
  CHECK(head.response->body.empty());
  // While the HEAD's body is still to come, as the gateway sends reads
  // (resend_if_stale): another tenant's, then the same tenant's.
  for (const auto& [tag, partition] : {std::pair{"get-b1", "tenant-b"}, std::pair{"get-a1", "tenant-a"}}) {
    Request r = tagged("GET", tag, partition);
    r.resend_if_stale = true;
    check_own_reply(h.send(e, std::move(r)), tag);
  }
  late.open_and_wait();
  for (const auto& [tag, partition] : {std::pair{"get-a2", "tenant-a"}, std::pair{"get-b2", "tenant-b"}}) {
    Request r = tagged("GET", tag, partition);
    r.resend_if_stale = true;
    check_own_reply(h.send(e, std::move(r)), tag);
  }
  CHECK(after_poison == 0);
  // The HEAD's connection, then one per partition (each reused once).
  CHECK(server.connections() == 3);
}

TEST_CASE("bytes that arrive on an idle connection after a reply are never read as the next reply") {
  bool resend_if_stale = false;
  std::string extra;
  SUBCASE("a complete second reply, next request resendable") {
    resend_if_stale = true;
    extra = tagged_reply("stale");
  }
  SUBCASE("a complete second reply") { extra = tagged_reply("stale"); }
  SUBCASE("one stray byte, next request resendable") {
    resend_if_stale = true;
    extra = "X";
  }
  LateBytes late;  // once the client has the reply, and the connection is idle
  std::atomic<int> after_poison{0};
  TestServer server([&](ServerSession& s) {
    bool poisoned = false;
    while (auto request = s.read_request()) {
      if (poisoned) ++after_poison;
      s.write(tagged_reply(tag_of(*request)));
      if (s.index() != 0 || poisoned) continue;
      poisoned = true;
      late.send(s, extra);
    }
  });
  Gate::Opener open_at_end{late.release};
  Harness h;
  const auto e = local(server);
  check_own_reply(h.send(e, tagged("GET", "first", "tenant-a")), "first");
  late.open_and_wait();
  Request next = tagged("GET", "second", "tenant-a");
  next.resend_if_stale = resend_if_stale;
  check_own_reply(h.send(e, std::move(next)), "second");
  CHECK(after_poison == 0);
  CHECK(server.connections() == 2);
}

TEST_CASE("bytes sent right behind a reply: the connection is not reused") {
  std::atomic<int> after_poison{0};
  TestServer server([&](ServerSession& s) {
    bool poisoned = false;
    while (auto request = s.read_request()) {
      if (poisoned) ++after_poison;
      const auto tag = tag_of(*request);
      s.write(tagged_reply(tag) + (s.index() == 0 ? tagged_reply("stale-" + tag) : std::string()));
      poisoned = s.index() == 0;
    }
  });
  Harness h;
  const auto e = local(server);
  check_own_reply(h.send(e, tagged("GET", "first", "tenant-a")), "first");
  check_own_reply(h.send(e, tagged("GET", "second", "tenant-a")), "second");
  CHECK(after_poison == 0);
  CHECK(server.connections() == 2);
}

TEST_CASE("101 Switching Protocols, never asked for, is a failure after send and closes the connection") {
  std::string before;
  Request first = tagged("GET", "first", "tenant-a");
  SUBCASE("to a GET") {}
  SUBCASE("after a 100 Continue") { before = "HTTP/1.1 100 Continue\r\n\r\n"; }
  SUBCASE("to a POST") { first = Request{"POST", "/pay", {{"X-Tag", "first"}}, "{}"}; }
  std::atomic<int> after_poison{0};
  TestServer server([&](ServerSession& s) {
    bool poisoned = false;
    while (auto request = s.read_request()) {
      if (poisoned) ++after_poison;
      const auto tag = tag_of(*request);
      if (s.index() != 0) {
        s.write(tagged_reply(tag));
        continue;
      }
      // Then bytes "of the new protocol", shaped as a reply to tempt a reader.
      s.write(before + "HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n\r\n" +
              tagged_reply("after-101-" + tag));
      poisoned = true;
    }
  });
  Harness h;
  const auto e = local(server);
  Result r = h.send(e, first);
  check_failure(r, Failure::failed_after_send, true);
  CHECK(r.detail.find("101") != std::string::npos);
  eventually([&] { return server.finished_scripts() == 1; });  // the client closed it
  check_own_reply(h.send(e, tagged("GET", "second", "tenant-a")), "second");
  CHECK(after_poison == 0);
  CHECK(server.connections() == 2);
}

TEST_CASE("interim replies: skipped, and after one other than 100 the connection is not reused") {
  std::string interim;
  int connections = 0;
  SUBCASE("100 Continue") {
    interim = "HTTP/1.1 100 Continue\r\n\r\n";
    connections = 1;
  }
  SUBCASE("103 Early Hints") {
    interim = "HTTP/1.1 103 Early Hints\r\nLink: </a.css>; rel=preload\r\n\r\n";
    connections = 2;
  }
  SUBCASE("102 Processing, twice") {
    interim = "HTTP/1.1 102 Processing\r\n\r\nHTTP/1.1 102 Processing\r\n\r\n";
    connections = 2;
  }
  TestServer server([&](ServerSession& s) {
    while (auto request = s.read_request()) s.write(interim + tagged_reply(tag_of(*request)));
  });
  Harness h;
  const auto e = local(server);
  Result r = h.send(e, tagged("GET", "first", "tenant-a"));
  check_own_reply(r, "first");
  REQUIRE(r.response->headers.size() == 2);  // the final reply's own, not the interim's
  CHECK(r.response->headers[0].name == "X-Tag");
  check_own_reply(h.send(e, tagged("GET", "second", "tenant-a")), "second");
  CHECK(server.connections() == connections);
}

TEST_CASE("idle connections are reused only within their partition") {
  TestServer server([](ServerSession& s) {
    while (auto request = s.read_request()) s.write(tagged_reply(tag_of(*request)));
  });
  Harness h;
  const auto e = local(server);
  int n = 0;
  for (const char* partition : {"tenant-a", "tenant-b", "", "tenant-a", "tenant-b", "", "tenant-a"}) {
    const auto tag = std::string(partition) + "-" + std::to_string(n++);
    check_own_reply(h.send(e, tagged("GET", tag, partition)), tag);
  }
  CHECK(server.connections() == 3);  // one per partition
}

TEST_CASE("max_connections counts other partitions' idle connections: one is closed to open another") {
  TestServer server([](ServerSession& s) {
    while (auto request = s.read_request()) s.write(tagged_reply(tag_of(*request)));
  });
  Harness h;
  auto e = local(server);
  e.max_connections = 1;
  e.idle_retire = 600s;  // only the limit may close it within the test's wait
  check_own_reply(h.send(e, tagged("GET", "a1", "tenant-a")), "a1");
  check_own_reply(h.send(e, tagged("GET", "b1", "tenant-b")), "b1");
  eventually([&] { return server.finished_scripts() == 1; });  // tenant-a's idle one, closed by the client
  check_own_reply(h.send(e, tagged("GET", "b2", "tenant-b")), "b2");
  CHECK(server.connections() == 2);
}

}  // namespace
}  // namespace gw::upstream::test
