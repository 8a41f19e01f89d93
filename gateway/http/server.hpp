// The HTTP/1.1 front door (Beast): keep-alive sessions, a fresh parser with
// header and body limits per request, read and idle deadlines, over plain
// TCP or TLS. It knows no routes: every complete request goes to the
// Handler, a coroutine awaited on the session's io_context.
#pragma once

#include "http/message.hpp"

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace boost::asio {
class io_context;
namespace ssl {
class context;
}
}  // namespace boost::asio

namespace gw::http {

struct ServerLimits {
  std::size_t max_header_bytes = 16 << 10;
  std::size_t max_body_bytes = 1 << 20;
  std::chrono::milliseconds read_timeout{10000};    // the body, once the header is in
  // Between requests of a kept-alive connection: from a reply until the
  // first byte of the next request.
  std::chrono::milliseconds idle_timeout{60000};
  // From that byte to the end of the header. For a connection's first
  // request from the accept on (under TLS the handshake included), so a
  // connection that never sends a byte is closed at header_timeout too.
  std::chrono::milliseconds header_timeout{10000};
  std::chrono::milliseconds write_timeout{10000};
  // Open connections. At the cap the listener stops accepting: new
  // connections wait in the kernel's backlog until one closes.
  std::size_t max_connections = 10000;
};

// The most a connection's read buffer holds: a whole head plus one read of
// what follows it. A body passes through a read at a time, so only what
// Beast must have whole before it parses it can fill the buffer: a chunk
// header with its extensions, or the trailer block (neither counts against
// any other limit). One that does is refused with 413 and the connection
// closes. The connections' memory for reading is thus bounded by
// max_connections x this (at the defaults 32 KiB each, 320 MB for 10,000).
constexpr std::size_t read_chunk_bytes = 16 << 10;
inline std::size_t read_buffer_bytes(const ServerLimits& limits) { return limits.max_header_bytes + read_chunk_bytes; }

// Checks a request's head before its body is read: before `100 Continue`
// invites the body, and for every request whose body did not come whole
// with its head. A reply refuses the request: it is sent, and the
// connection closes without reading the body (a short lingering close, so
// the reply is not lost to a reset). Looks at the head only (the body may
// be partly parsed). Runs on the connection's io_context, for many
// requests: must be cheap, and must not block or throw.
using Screen = std::function<std::optional<Response>(const Request& head)>;

class Server {
 public:
  // How many connections share one io_context before the next goes to
  // another (the constructor below). bench/bare_proxy.cpp places its own by it.
  static constexpr std::size_t packed_connections = 4;

  Server(boost::asio::io_context& io, ServerLimits limits, Handler handler, Screen screen = {});
  // Accepts on the first io_context and serves each connection on one of
  // them: the first serving fewer than packed_connections, else the one
  // serving the fewest (a thread serving a few finds several requests ready
  // each time it wakes; more would leave the other threads' cores unused).
  // With one io_context per thread, a connection's requests are served on
  // one thread, with no hand-over between threads. Each io_context must be
  // run by exactly one thread: sessions use no strands.
  Server(std::vector<boost::asio::io_context*> ios, ServerLimits limits, Handler handler, Screen screen = {});
  ~Server();

  // HTTPS with `context` for connections accepted from now on (null: plain
  // HTTP); call before listen() to serve TLS from the start. A connection
  // keeps the context it started with, so a swap never drops one.
  void set_tls_context(std::shared_ptr<boost::asio::ssl::context> context);
  // Binds and starts accepting; returns the bound port (0 picks a free one).
  std::uint16_t listen(const std::string& address, std::uint16_t port);
  // Stops accepting; sessions finish the request they are in, then close.
  void stop_accepting();
  // Requests received whose reply has not been written yet.
  std::size_t active_requests() const;
  // Called on an I/O thread each time active_requests() drops to 0: what a
  // drain waits for. Set before listen().
  void on_idle(std::function<void()> callback);
  // Connections accepted and not yet closed.
  std::size_t open_connections() const;
  // Failed accepts (EMFILE and the like) since the start; each one is
  // followed by a growing pause, so the count stays small.
  std::size_t accept_errors() const;

  struct State;

 private:
  std::shared_ptr<State> state_;
};

}  // namespace gw::http
