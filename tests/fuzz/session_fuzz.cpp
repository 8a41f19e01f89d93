// The server's session loop itself (gateway/http/server.cpp): one real
// gw::http::Server on 127.0.0.1, started once, with a trivial handler and
// screen; each input is a script of the bytes one client connection sends,
// written over a real socket in pieces while the replies are read, until the
// server closes the connection. Chunked framing, extensions, trailers,
// pipelining, Expect, timeouts-free half-closes: whatever the script says.
//
// Script: bytes are sent as they are, except
//   0xFF          a piece boundary: what came before is written, then a pause,
//                 so the server reads it alone (first read, header read, body read);
//   0xFE a b n s  the n bytes s repeated (a * 256 + b + 1) times, streamed (up to
//                 16 MiB from a few bytes: an endless extension or trailer).
// At most max_stream bytes in all.
//
// Memory is the main property: scripts/fuzz.sh runs this harness with a low
// -malloc_limit_mb and -rss_limit_mb, so a session that buffers what it
// streams (a chunk-extension line, a trailer block, a refused body) is a
// crash. Traps also when the server writes something other than HTTP/1.1
// replies, when the handler runs after the screen refused on the same
// connection, when a request reaches the handler with a body over
// max_body_bytes, or when the server keeps a connection the client has
// half-closed.
#include "http/server.hpp"

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

namespace {

namespace asio = boost::asio;
using namespace std::chrono_literals;

void check(bool ok) {
  if (!ok) __builtin_trap();
}

constexpr std::size_t max_stream = 8 << 20;
constexpr int max_pieces = 8;
// Requests per connection before the handler asks to close: a script of
// repeated pipelined GETs ends there instead of running to the timeout.
constexpr int max_requests = 32;

gw::http::ServerLimits limits() {
  gw::http::ServerLimits l;
  l.max_header_bytes = 8 << 10;
  l.max_body_bytes = 64 << 10;
  // Every script ends with a half-close, so these only bound a stall.
  l.read_timeout = l.idle_timeout = l.header_timeout = l.write_timeout = 2s;
  l.max_connections = 4;
  return l;
}

// What the server did on the current input's connection.
std::atomic<int> handled{0};
std::atomic<bool> screen_refused{false};

struct Rig {
  Rig()
      : server(io, limits(),
               [](gw::http::Request r) -> asio::awaitable<gw::http::Response> {
                 check(!screen_refused);  // a refused connection serves nothing more
                 check(r.body.size() <= limits().max_body_bytes);
                 const bool last = ++handled >= max_requests;
                 co_return gw::http::Response{200, {}, "ok", last, std::nullopt};
               },
               [](const gw::http::Request& head) -> std::optional<gw::http::Response> {
                 if (head.target.find("deny") == std::string::npos) return std::nullopt;
                 screen_refused = true;
                 return gw::http::Response{401, {}, "no", false, std::nullopt};
               }) {
    port = server.listen("127.0.0.1", 0);
    thread = std::thread([this] { io.run(); });
  }
  asio::io_context io;
  asio::executor_work_guard<asio::io_context::executor_type> work{io.get_executor()};
  gw::http::Server server;
  std::uint16_t port = 0;
  std::thread thread;  // runs for the process's life: libFuzzer exits without unwinding
};

struct Op {
  std::string_view bytes;
  std::size_t times = 1;
  bool pause = false;  // a piece boundary before these bytes
};

std::vector<Op> parse_script(const std::uint8_t* data, std::size_t size) {
  std::vector<Op> ops;
  std::string_view in(reinterpret_cast<const char*>(data), size);
  std::size_t total = 0, literal = 0;
  bool pause = false;
  int pieces = 0;
  const auto flush = [&](std::size_t end) {
    if (end > literal) ops.push_back({in.substr(literal, end - literal), 1, pause}), pause = false;
  };
  for (std::size_t i = 0; i < in.size() && total < max_stream;) {
    const auto c = static_cast<std::uint8_t>(in[i]);
    if (c == 0xFF) {
      flush(i);
      if (++pieces <= max_pieces) pause = true;
      literal = ++i;
    } else if (c == 0xFE && i + 4 <= in.size()) {
      flush(i);
      const std::size_t times = static_cast<std::uint8_t>(in[i + 1]) * 256u + static_cast<std::uint8_t>(in[i + 2]) + 1;
      const std::size_t n = std::min<std::size_t>(static_cast<std::uint8_t>(in[i + 3]), in.size() - i - 4);
      if (n > 0) {
        const std::size_t capped = std::min(times, (max_stream - total + n - 1) / n);
        ops.push_back({in.substr(i + 4, n), capped, pause});
        pause = false;
        total += capped * n;
      }
      literal = i += 4 + n;
    } else {
      ++total;
      ++i;
    }
  }
  flush(in.size());
  return ops;
}

// Non-blocking from the start: libFuzzer's -timeout arms a SIGALRM every few
// seconds, and a blocking connect() it interrupts fails with EINTR while the
// handshake goes on in the kernel. Waiting in poll() survives the signal.
int connect_to(std::uint16_t port) {
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  check(fd >= 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(port);
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0) return fd;
  check(errno == EINPROGRESS || errno == EINTR);
  const auto give_up = std::chrono::steady_clock::now() + 10s;
  for (;;) {
    check(std::chrono::steady_clock::now() < give_up);  // the server stopped accepting
    pollfd p{fd, POLLOUT, 0};
    if (::poll(&p, 1, 100) <= 0) continue;  // not yet, or a signal
    int error = 0;
    socklen_t length = sizeof error;
    check(::getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &length) == 0);
    check(error == 0);  // refused or reset: the listener is gone
    return fd;
  }
}

// One connection: writes the script's ops in order (a repeated op streamed
// from a small block, never built whole), reading replies all along;
// half-closes once the script is out, and reads until the server closes.
// Returns the first bytes of the replies.
std::string converse(std::uint16_t port, const std::vector<Op>& ops) {
  const int fd = connect_to(port);
  std::string replies;
  std::array<char, 16384> block{};
  std::size_t op = 0, done = 0;  // bytes of ops[op] written
  bool sending = true, closed = false;
  const auto give_up = std::chrono::steady_clock::now() + 20s;  // the server's timeouts are 2 s
  while (!closed) {
    check(std::chrono::steady_clock::now() < give_up);  // it kept a half-closed connection
    if (sending && op == ops.size()) {
      ::shutdown(fd, SHUT_WR);
      sending = false;
    }
    pollfd p{fd, static_cast<short>(POLLIN | (sending ? POLLOUT : 0)), 0};
    if (sending && done == 0 && ops[op].pause) {
      ::poll(&p, 1, 1);  // let the server read what is there on its own
      p.revents = 0;
    }
    if (::poll(&p, 1, 100) <= 0) continue;
    if (p.revents & (POLLIN | POLLHUP | POLLERR)) {
      char in[16384];
      const auto n = ::recv(fd, in, sizeof in, 0);
      if (n > 0) {
        const std::size_t room = (64u << 10) - std::min<std::size_t>(replies.size(), 64u << 10);
        replies.append(in, std::min(static_cast<std::size_t>(n), room));
      } else if (n == 0 || (errno != EAGAIN && errno != EWOULDBLOCK)) {
        closed = true;  // EOF or reset: the server ended the connection
        break;
      }
    }
    if (sending && (p.revents & POLLOUT)) {
      const Op& o = ops[op];
      const std::size_t length = o.bytes.size() * o.times;
      std::string_view out;
      if (o.times == 1) {
        out = o.bytes.substr(done);
      } else {
        // Whole copies of the pattern in the block, from where `done` is in it.
        const std::size_t copies = std::max<std::size_t>(1, block.size() / o.bytes.size());
        std::size_t filled = 0;
        for (std::size_t k = 0; k < copies && filled + o.bytes.size() <= block.size(); ++k, filled += o.bytes.size())
          std::copy(o.bytes.begin(), o.bytes.end(), block.begin() + static_cast<std::ptrdiff_t>(filled));
        const std::size_t at = done % o.bytes.size();
        out = std::string_view(block.data() + at, std::min(filled - at, length - done));
      }
      const auto n = ::send(fd, out.data(), out.size(), MSG_NOSIGNAL);
      if (n > 0) {
        done += static_cast<std::size_t>(n);
        if (done == length) ++op, done = 0;
      } else if (errno != EAGAIN && errno != EWOULDBLOCK) {
        sending = false;  // the server closed; read what it sent before
      }
    }
  }
  ::close(fd);
  return replies;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static Rig* rig = new Rig();  // never destroyed: its thread runs until exit
  handled = 0;
  screen_refused = false;
  const std::string replies = converse(rig->port, parse_script(data, size));
  // The session ends just after its socket closes: wait for it, so the next
  // input's counters are its own.
  const auto give_up = std::chrono::steady_clock::now() + 20s;
  while (rig->server.open_connections() != 0) {
    check(std::chrono::steady_clock::now() < give_up);
    std::this_thread::yield();
  }
  // An HTTP/1.0 request is answered in HTTP/1.0 (http/reply_head.cpp).
  check(replies.empty() || replies.rfind("HTTP/1.1 ", 0) == 0 || replies.rfind("HTTP/1.0 ", 0) == 0);
  check(handled <= max_requests);
  return 0;
}
