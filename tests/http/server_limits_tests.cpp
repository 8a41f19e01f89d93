// The HTTP front door's own limits (issue #8), on a bare http::Server with a
// trivial handler and real sockets: the slowloris header deadline, the
// connection cap, the pause after a failed accept (a real EMFILE),
// `100 Continue` only for a head the screen lets through, and an end of
// stream or a reset that came with a client's last bytes ending it at once.
#include "http/server.hpp"
#include "support/eventually.hpp"
#include "support/process.hpp"
#include "support/sanitizers.hpp"

#include <boost/asio/io_context.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <doctest/doctest.h>

#include <poll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <future>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>

using namespace std::chrono_literals;
namespace asio = boost::asio;
using gw::test::eventually;

namespace {

// A plain blocking TCP connection to 127.0.0.1, with poll() for deadlines.
class Conn {
 public:
  explicit Conn(std::uint16_t port) : fd_(connect_loopback(port)) {}
  ~Conn() { close(); }
  Conn(const Conn&) = delete;
  Conn& operator=(const Conn&) = delete;

  void close() {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
  }
  // No more bytes from this side (FIN); replies can still be read.
  void half_close() { ::shutdown(fd_, SHUT_WR); }
  // Closes with a reset (RST) instead of a FIN.
  void reset() {
    const linger abort{1, 0};
    ::setsockopt(fd_, SOL_SOCKET, SO_LINGER, &abort, sizeof abort);
    close();
  }
  // False once the peer has closed (EPIPE/ECONNRESET).
  bool send(const std::string& bytes) {
    return ::send(fd_, bytes.data(), bytes.size(), MSG_NOSIGNAL) == static_cast<ssize_t>(bytes.size());
  }
  // Whatever arrives within `wait`; nullopt when the peer closed with nothing more.
  std::optional<std::string> receive(std::chrono::milliseconds wait) {
    pollfd p{fd_, POLLIN, 0};
    if (::poll(&p, 1, static_cast<int>(wait.count())) <= 0) return std::string();
    char buf[4096];
    auto n = ::recv(fd_, buf, sizeof buf, 0);
    if (n <= 0) return std::nullopt;
    return std::string(buf, static_cast<std::size_t>(n));
  }
  // Sends `bytes` one at a time, 100 ms apart, until the peer cuts the
  // connection; fails if anything is answered meanwhile. Returns how many
  // bytes went out before the cut (bytes.size() when it never came).
  std::size_t trickle(const std::string& bytes) {
    std::size_t sent = 0;
    for (; sent < bytes.size(); ++sent) {
      if (!send(bytes.substr(sent, 1))) break;
      auto got = receive(100ms);
      if (!got) break;
      REQUIRE(got->empty());  // no reply to a message that never finished
    }
    return sent;
  }
  // Reads until `needle` arrived or the peer closed; throws after `limit`
  // (a guard against a hang, not a measurement).
  std::string receive_until(const std::string& needle, std::chrono::seconds limit = 20s) {
    std::string all;
    const auto give_up = std::chrono::steady_clock::now() + limit;
    while (all.find(needle) == std::string::npos) {
      if (std::chrono::steady_clock::now() > give_up) throw std::runtime_error("no '" + needle + "' in: " + all);
      auto part = receive(100ms);
      if (!part) break;
      all += *part;
    }
    return all;
  }

 private:
  int fd_;
};

const std::string hello = "GET /x HTTP/1.1\r\nHost: t\r\n\r\n";

// A server on an ephemeral port with one I/O thread.
struct Harness {
  explicit Harness(gw::http::ServerLimits limits, gw::http::Screen screen = {})
      : server(io, limits,
               [this](gw::http::Request r) -> asio::awaitable<gw::http::Response> {
                 ++handled;
                 last_body = r.body;
                 co_return gw::http::Response{200, {}, reply_body, false, std::nullopt};
               },
               std::move(screen)) {
    port = server.listen("127.0.0.1", 0);
    thread = std::thread([this] { io.run(); });
  }
  ~Harness() {
    server.stop_accepting();
    work.reset();
    io.stop();
    thread.join();
  }
  asio::io_context io;
  std::optional<asio::executor_work_guard<asio::io_context::executor_type>> work{io.get_executor()};
  std::atomic<int> handled{0};
  std::string last_body;
  std::string reply_body = "ok";  // set before the first request
  gw::http::Server server;
  std::uint16_t port = 0;
  std::thread thread;
};

}  // namespace

TEST_CASE("slowloris: a header trickled byte by byte is cut at header_timeout, whatever the idle timeout") {
  gw::http::ServerLimits limits;
  limits.idle_timeout = 600s;
  limits.header_timeout = 500ms;
  Harness h(limits);
  Conn c(h.port);
  // One byte every 100 ms: each read is fresh, so only a whole-header deadline ends it.
  const std::string head = "GET /x HTTP/1.1\r\nHost: t\r\nX-Slow: " + std::string(400, 'a') + "\r\n\r\n";
  CHECK(c.trickle(head) < head.size());
  CHECK(h.handled == 0);
}

TEST_CASE("header_timeout starts at a request's first byte: an idle keep-alive connection is kept") {
  gw::http::ServerLimits limits;
  limits.idle_timeout = 600s;
  limits.header_timeout = 300ms;
  Harness h(limits);
  Conn c(h.port);
  REQUIRE(c.send(hello));
  CHECK(c.receive_until("ok").find("200 OK") != std::string::npos);
  // Idle for longer than the header deadline, then a second request: served.
  auto quiet = c.receive(900ms);
  REQUIRE(quiet);
  CHECK(quiet->empty());
  REQUIRE(c.send(hello));
  CHECK(c.receive_until("ok").find("200 OK") != std::string::npos);
  CHECK(h.handled == 2);
}

TEST_CASE("idle_timeout: a keep-alive connection is closed once idle that long, and not while requests keep coming") {
  gw::http::ServerLimits limits;
  limits.idle_timeout = 1000ms;  // far above the 100 ms gaps below, even on a loaded machine
  Harness h(limits);
  Conn c(h.port);
  // Requests closer together than the idle timeout, over several times its
  // length: each one moves the deadline on, and the connection stays.
  const auto started = std::chrono::steady_clock::now();
  auto last_reply = started;
  int served = 0;
  while (std::chrono::steady_clock::now() - started < 2500ms) {
    REQUIRE(c.send(hello));
    REQUIRE(c.receive_until("ok").find("200 OK") != std::string::npos);
    last_reply = std::chrono::steady_clock::now();
    ++served;
    auto quiet = c.receive(100ms);
    REQUIRE(quiet);  // still open
  }
  CHECK(h.handled == served);
  // Then silence: the gateway closes it, with nothing sent, and not before
  // idle_timeout has passed since the last reply.
  std::optional<std::string> got = std::string();
  CHECK(eventually([&] {
    got = c.receive(100ms);
    return !got || !got->empty();
  }));
  CHECK_FALSE(got.has_value());
  CHECK(std::chrono::steady_clock::now() - last_reply >= 1000ms);
  // The session ends just after its socket closes.
  CHECK(eventually([&] { return h.server.open_connections() == 0; }));
}

TEST_CASE("read_timeout: a body trickled after its head is cut at read_timeout, and never handled") {
  gw::http::ServerLimits limits;
  limits.idle_timeout = 600s;
  limits.header_timeout = 600s;
  limits.read_timeout = 500ms;
  Harness h(limits);
  Conn c(h.port);
  REQUIRE(c.send("POST /x HTTP/1.1\r\nHost: t\r\nContent-Length: 100\r\n\r\n"));
  CHECK(c.trickle(std::string(100, 'a')) < 100);
  CHECK(h.handled == 0);
}

// A read that finds the socket drained makes the next wait for the reactor's
// news (gateway/socket_read.hpp). An end of stream or a reset that came with
// the last bytes gives no later news: these must still end the connection at
// once, not at a timeout ten minutes away. To have them come with the bytes,
// the server's thread is held while the client sends (loopback delivers
// before send returns), and let go after.
namespace {

// Holds the harness's I/O thread until the returned object is destroyed.
struct HeldThread {
  std::promise<void> release;
  explicit HeldThread(asio::io_context& io) {
    std::promise<void> entered;
    auto in = entered.get_future();
    asio::post(io, [&entered, out = release.get_future().share()] {
      entered.set_value();
      out.wait();
    });
    in.wait();
  }
  ~HeldThread() { release.set_value(); }
};

}  // namespace

TEST_CASE("a keep-alive client that half-closes with its request gets its reply, then the close, not idle_timeout") {
  gw::http::ServerLimits limits;
  limits.idle_timeout = 600s;
  Harness h(limits);
  Conn c(h.port);
  REQUIRE(c.send(hello));
  REQUIRE(c.receive_until("ok").find("200 OK") != std::string::npos);
  {
    HeldThread held(h.io);
    REQUIRE(c.send(hello));  // the second request and the FIN, read together
    c.half_close();
  }
  // The reply, then the server's close (receive says nullopt).
  std::string all;
  CHECK(eventually([&] {
    auto part = c.receive(100ms);
    if (!part) return true;
    all += *part;
    return false;
  }, 20s));
  CHECK(all.find("200 OK") != std::string::npos);
  CHECK(h.handled == 2);
  CHECK(eventually([&] { return h.server.open_connections() == 0; }, 20s));
}

TEST_CASE("a client that sends part of a head and resets frees its slot at once, not at header_timeout") {
  gw::http::ServerLimits limits;
  limits.idle_timeout = 600s;
  limits.header_timeout = 600s;
  Harness h(limits);
  Conn c(h.port);
  REQUIRE(c.send(hello));
  REQUIRE(c.receive_until("ok").find("200 OK") != std::string::npos);
  {
    HeldThread held(h.io);
    REQUIRE(c.send("GET /x HTTP/1.1\r\nHost: t\r\nX-Cut: "));  // part of a head and the RST, read together
    c.reset();
  }
  CHECK(eventually([&] { return h.server.open_connections() == 0; }, 20s));
  CHECK(h.handled == 1);
}

TEST_CASE("write_timeout: a client that stops reading a large reply is cut at write_timeout") {
  gw::http::ServerLimits limits;
  limits.idle_timeout = 600s;
  limits.write_timeout = 500ms;
  Harness h(limits);
  h.reply_body.assign(64 << 20, 'x');  // far more than loopback buffers hold
  Conn c(h.port);
  REQUIRE(c.send(hello));
  REQUIRE(eventually([&] { return h.handled == 1; }));
  // The reply is stuck in full socket buffers; the server gives up on it
  // and closes the connection, which the client never read from.
  CHECK(eventually([&] { return h.server.open_connections() == 0; }));
}

TEST_CASE("connection cap: past max_connections a new connection waits, and is served once one closes") {
  gw::http::ServerLimits limits;
  limits.max_connections = 2;
  Harness h(limits);
  Conn a(h.port), b(h.port);
  REQUIRE(a.send(hello));
  REQUIRE(b.send(hello));
  a.receive_until("ok");
  b.receive_until("ok");
  CHECK(h.server.open_connections() == 2);

  Conn c(h.port);  // the kernel completes the handshake; the gateway does not accept it yet
  REQUIRE(c.send(hello));
  auto early = c.receive(500ms);
  REQUIRE(early);
  CHECK(early->empty());
  CHECK(h.handled == 2);
  CHECK(h.server.open_connections() == 2);

  a.close();
  CHECK(c.receive_until("ok").find("200 OK") != std::string::npos);
  CHECK(h.handled == 3);
}

// Not in the sanitizer tree: with no descriptor left, the sanitizers' own
// memory probes (a pipe) fail, and UBSan reports sound objects as having an
// invalid vptr. The release tree runs it.
#ifndef GW_TEST_ASAN
TEST_CASE("accept failing with EMFILE pauses and retries instead of spinning, then serves the waiting client") {
  Harness h(gw::http::ServerLimits{});
  rlimit before{};
  REQUIRE(getrlimit(RLIMIT_NOFILE, &before) == 0);
  // A new descriptor takes the lowest free number; the limit bounds the number. With the
  // limit one above it, the client's socket below takes the last descriptor, and the
  // server's accept() of that connection fails with EMFILE. The limit drops first: a
  // connection made before it could be accepted before it dropped (a race the test lost
  // on a busy machine).
  const int lowest_free = ::dup(0);
  REQUIRE(lowest_free >= 0);
  ::close(lowest_free);
  rlimit tight = before;
  tight.rlim_cur = static_cast<rlim_t>(lowest_free + 1);
  REQUIRE(setrlimit(RLIMIT_NOFILE, &tight) == 0);
  std::optional<Conn> waiting;
  try {
    waiting.emplace(h.port);  // waits in the listen backlog
  } catch (...) {
    setrlimit(RLIMIT_NOFILE, &before);
    throw;
  }
  const auto errors_at = [&] { return h.server.accept_errors(); };
  // Give accept a full second to fail: with a pause that doubles from 5 ms it tries about 8
  // times; a loop without a pause would fail hundreds of thousands of times.
  std::this_thread::sleep_for(1s);
  const auto failed = errors_at();
  REQUIRE(setrlimit(RLIMIT_NOFILE, &before) == 0);
  CHECK(failed >= 1);
  CHECK(failed < 50);

  REQUIRE(waiting->send(hello));
  CHECK(waiting->receive_until("ok").find("200 OK") != std::string::npos);
}
#endif

TEST_CASE("Expect: 100-continue: a head the screen refuses gets the refusal, never 100, and the body is not read") {
  gw::http::ServerLimits limits;
  Harness h(limits, [](const gw::http::Request& head) -> std::optional<gw::http::Response> {
    if (head.header("Authorization") == std::optional<std::string_view>("Bearer good")) return std::nullopt;
    return gw::http::Response{401, {}, "no", false, std::nullopt};
  });
  {
    Conn c(h.port);
    REQUIRE(c.send("POST /x HTTP/1.1\r\nHost: t\r\nAuthorization: Bearer bad\r\nExpect: 100-continue\r\n"
                   "Content-Length: 5\r\n\r\n"));
    auto reply = c.receive_until("no");
    CHECK(reply.find("100 Continue") == std::string::npos);
    CHECK(reply.rfind("HTTP/1.1 401", 0) == 0);
    // The connection closes: the body the client may still send is never taken as a request.
    CHECK_FALSE(c.receive(5s).has_value());
    CHECK(h.handled == 0);
  }
  {
    Conn c(h.port);
    REQUIRE(c.send("POST /x HTTP/1.1\r\nHost: t\r\nAuthorization: Bearer good\r\nExpect: 100-continue\r\n"
                   "Content-Length: 5\r\n\r\n"));
    CHECK(c.receive_until("\r\n\r\n").rfind("HTTP/1.1 100 Continue\r\n", 0) == 0);
    REQUIRE(c.send("hello"));
    CHECK(c.receive_until("ok").find("200 OK") != std::string::npos);
    CHECK(h.handled == 1);
    CHECK(h.last_body == "hello");
  }
}

TEST_CASE("header_timeout from the accept: a connection that sends nothing is closed at header_timeout, not idle_timeout") {
  gw::http::ServerLimits limits;
  limits.idle_timeout = 600s;  // longer than the wait below: only the header deadline can close it
  limits.header_timeout = 300ms;
  Harness h(limits);
  Conn c(h.port);
  std::optional<std::string> got = std::string();
  CHECK(eventually([&] {
    got = c.receive(100ms);
    return !got || !got->empty();
  }));
  CHECK_FALSE(got.has_value());  // closed, with nothing sent
  CHECK(eventually([&] { return h.server.open_connections() == 0; }));
  CHECK(h.handled == 0);
}

namespace {

std::string chunk_line(std::size_t size) {
  std::ostringstream out;
  out << std::hex << size << "\r\n";
  return out.str();
}

// A POST of `body` (already framed) with `framing` as its framing header line.
std::string post(const std::string& framing, const std::string& body, const std::string& extra = "") {
  return "POST /x HTTP/1.1\r\nHost: t\r\nConnection: close\r\n" + framing + extra + "\r\n" + body;
}

}  // namespace

TEST_CASE("read buffer cap: bodies up to max_body_bytes are served, by Content-Length, many small chunks or one big chunk") {
  gw::http::ServerLimits limits;
  limits.max_header_bytes = 4096;  // the smallest cap: 4 KiB + a read chunk, far below the body
  limits.max_body_bytes = 1 << 20;
  REQUIRE(gw::http::read_buffer_bytes(limits) < limits.max_body_bytes);
  Harness h(limits);
  std::string body(limits.max_body_bytes, 'b');
  for (std::size_t i = 0; i < body.size(); i += 997) body[i] = static_cast<char>('a' + i % 26);
  std::string small_chunks;
  for (std::size_t at = 0; at < body.size(); at += 100) {
    const auto piece = body.substr(at, 100);
    small_chunks += chunk_line(piece.size()) + piece + "\r\n";
  }
  small_chunks += "0\r\n\r\n";
  struct Case {
    const char* name;
    std::string request;
  };
  for (const auto& c : {Case{"Content-Length", post("Content-Length: " + std::to_string(body.size()) + "\r\n", body)},
                        Case{"small chunks", post("Transfer-Encoding: chunked\r\n", small_chunks)},
                        Case{"one chunk", post("Transfer-Encoding: chunked\r\n",
                                               chunk_line(body.size()) + body + "\r\n0\r\nX-Trailer: t\r\n\r\n")}}) {
    CAPTURE(c.name);
    const int before = h.handled;
    Conn conn(h.port);
    REQUIRE(conn.send(c.request));
    CHECK(conn.receive_until("ok").rfind("HTTP/1.1 200", 0) == 0);
    CHECK(h.handled == before + 1);
    CHECK(h.last_body == body);
  }
}

TEST_CASE("read buffer cap: a chunk extension or a trailer block longer than the cap is 413, and the connection closes") {
  gw::http::ServerLimits limits;
  limits.idle_timeout = 600s;
  limits.read_timeout = 600s;  // only the cap can end these
  Harness h(limits);
  const std::size_t cap = gw::http::read_buffer_bytes(limits);
  const std::string message = "chunk extension or trailer exceeds " + std::to_string(cap) + " bytes";
  std::string trailer = "0\r\n";
  while (trailer.size() <= cap) trailer += "X-T: tttttttttt\r\n";
  for (const std::string& line : {"5;ext=" + std::string(cap, 'e'), trailer}) {
    CAPTURE(line.substr(0, 16));
    Conn c(h.port);
    REQUIRE(c.send(post("Transfer-Encoding: chunked\r\n", line)));
    auto reply = c.receive_until(message);
    CHECK(reply.rfind("HTTP/1.1 413", 0) == 0);
    CHECK(reply.find("payload_too_large") != std::string::npos);
    // The client stops; the gateway closes rather than wait for the line's end.
    std::optional<std::string> got = std::string();
    CHECK(eventually([&] {
      got = c.receive(100ms);
      return !got || !got->empty();
    }));
    CHECK_FALSE(got.has_value());
  }
  CHECK(h.handled == 0);
}

TEST_CASE("screen: a body not complete with its head is screened first: a refusal is received while the client still sends, the body unread") {
  gw::http::ServerLimits limits;
  limits.max_body_bytes = 256 << 20;
  std::atomic<int> screened{0};
  Harness h(limits, [&screened](const gw::http::Request& head) -> std::optional<gw::http::Response> {
    ++screened;
    if (head.header("Authorization") == std::optional<std::string_view>("Bearer good")) return std::nullopt;
    return gw::http::Response{401, {}, "no", false, std::nullopt};
  });
  for (const std::string& framing : {"Content-Length: " + std::to_string(limits.max_body_bytes) + "\r\n",
                                    std::string("Transfer-Encoding: chunked\r\n")}) {
    CAPTURE(framing);
    Conn c(h.port);
    REQUIRE(c.send("POST /x HTTP/1.1\r\nHost: t\r\nAuthorization: Bearer bad\r\n" + framing + "\r\n"));
    // Keep sending the body; the refusal arrives long before all of it went
    // out, and the gateway never waited for it. A reset would lose the reply.
    const std::string piece = framing[0] == 'C' ? std::string(64 << 10, 'a')
                                                : chunk_line(64 << 10) + std::string(64 << 10, 'a') + "\r\n";
    std::string reply;
    std::size_t sent = 0;
    while (reply.find("no") == std::string::npos && sent < limits.max_body_bytes) {
      auto got = c.receive(std::chrono::milliseconds(0));
      REQUIRE(got);  // not closed (nor reset) before the reply was read
      reply += *got;
      if (!c.send(piece)) break;
      sent += piece.size();
    }
    reply += c.receive_until("no");
    CHECK(reply.rfind("HTTP/1.1 401", 0) == 0);
    CHECK(sent < limits.max_body_bytes);
    CHECK(h.handled == 0);
  }
  CHECK(screened == 2);
  // A body that came whole with its head goes to the handler unscreened (the handler decides).
  Conn c(h.port);
  REQUIRE(c.send(post("Content-Length: 5\r\n", "hello")));
  CHECK(c.receive_until("ok").rfind("HTTP/1.1 200", 0) == 0);
  CHECK(screened == 2);
}
