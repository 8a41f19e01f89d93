#include "http/server.hpp"

#include "http/framing.hpp"
#include "http/problem.hpp"
#include "http/reply_head.hpp"
#include "http/request_parser.hpp"

#include "deadline.hpp"
#include "socket_read.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/ssl/context.hpp>
#include <boost/asio/ssl/error.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl/ssl_stream.hpp>

#include <array>
#include <iostream>
#include <mutex>
#include <type_traits>

namespace gw::http {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace bhttp = beast::http;
namespace ssl = asio::ssl;
using tcp = asio::ip::tcp;
constexpr auto use_tuple = asio::as_tuple(asio::use_awaitable);

struct Server::State : std::enable_shared_from_this<Server::State> {
  State(std::vector<asio::io_context*> contexts, ServerLimits l, Handler h, Screen s)
      : ios(std::move(contexts)),
        limits(l),
        handler(std::move(h)),
        screen(std::move(s)),
        acceptor(*ios.front()),
        slot_freed(acceptor.get_executor()),
        served(std::make_unique<std::atomic<std::size_t>[]>(ios.size())) {}

  // Where the next accepted connection is served (accept loop only): the
  // first io_context serving fewer than Server::packed_connections, else the one
  // serving the fewest. A thread serving a few busy connections finds
  // several requests ready each time it wakes; dealt out in turn, two or
  // three connections would keep every thread falling asleep and being woken
  // for each request. Past a few, one thread's CPU is the limit when the
  // provider answers at once, so the rest are spread (docs/performance.md,
  // "Four connections packed on a thread, not sixteen").
  std::size_t next_io() const {
    std::size_t fewest = 0;
    for (std::size_t i = 0; i < ios.size(); ++i) {
      const auto n = served[i].load(std::memory_order_relaxed);
      if (n < Server::packed_connections) return i;
      if (n < served[fewest].load(std::memory_order_relaxed)) fewest = i;
    }
    return fewest;
  }

  std::vector<asio::io_context*> ios;
  ServerLimits limits;
  Handler handler;
  Screen screen;
  tcp::acceptor acceptor;
  // On the acceptor's io_context only: the accept loop waits on it at the
  // connection cap, and a closing session cancels it.
  asio::steady_timer slot_freed;
  std::atomic<bool> stopping{false};
  std::atomic<std::size_t> active{0};
  std::function<void()> idle;  // set before listen(), then only read
  std::atomic<std::size_t> connections{0};
  std::atomic<std::size_t> accept_errors{0};
  std::unique_ptr<std::atomic<std::size_t>[]> served;  // open connections, by index in `ios`

  // Read by the accept loop for each new connection, swapped by a reload.
  std::shared_ptr<ssl::context> tls_context() {
    std::lock_guard lock(tls_mutex);
    return tls;
  }
  std::mutex tls_mutex;
  std::shared_ptr<ssl::context> tls;
};

namespace {

// The peer cannot be answered: it went away, or (TLS) its stream broke or
// ended without close_notify. Plain TCP only ever gives the first two.
bool transport_failed(const beast::error_code& ec) {
  return ec == asio::error::eof || ec == asio::error::connection_reset ||
         ec.category() == asio::error::get_ssl_category() || ec.category() == ssl::error::get_stream_category();
}

// One connection: its stream and the one deadline (on the TCP socket, under
// TLS as well, so it bounds the record layer's reads and writes along with
// the HTTP ones) that every read and write runs under.
template <class Stream>
struct Connection {
  Stream& stream;
  Deadline& deadline;
  const ServerLimits& limits;
};

// The head is serialized by reply_head (no copy of the fields into a Beast
// message) and goes out with the body in one gathered write. Over plain TCP
// it is first written on the spot: a reply that fits the socket's buffer
// (nearly all) needs no deadline and no queued completion; only what the
// kernel did not take is awaited, under write_timeout.
struct ReplyFraming {
  unsigned version;        // the request's HTTP version
  bool keep_alive;         // the connection stays open after this reply
  bool to_head = false;    // the reply to a HEAD request: its head only
};

template <class Stream>
asio::awaitable<bool> write_reply(Connection<Stream> c, Response reply, ReplyFraming framing) {
  const std::string bytes = reply_head(reply, framing.version, framing.keep_alive, framing.to_head);
  const bool body = !framing.to_head && reply_has_body(reply.status) && !reply.body.empty();
  const std::array<asio::const_buffer, 2> wire{asio::buffer(bytes),
                                               body ? asio::buffer(reply.body) : asio::const_buffer{}};
  beast::buffers_suffix<std::array<asio::const_buffer, 2>> rest(wire);
  if constexpr (std::is_same_v<Stream, tcp::socket>) {
    beast::error_code ec;
    rest.consume(c.stream.write_some(wire, ec));  // non-blocking: would_block when the buffer is full
    if (ec && ec != asio::error::would_block) co_return false;
    if (beast::buffer_bytes(rest) == 0) co_return true;
  }
  c.deadline.expires_after(c.limits.write_timeout);
  auto [ec, n] = co_await asio::async_write(c.stream, rest, use_tuple);
  co_return !ec;
}

// A read of the agent's bytes. Over plain TCP, `start` says whether to try
// the socket before waiting (socket_read.hpp): the wait for a request tries
// only when the reactor has news since the last read found the socket
// drained, so a keep-alive connection's wait after each reply costs no recv
// that finds nothing; a read that continues a head or a body tries at once.
// TLS reads through its record layer.
template <class Stream>
auto read_some(Stream& stream, asio::mutable_buffer into, ReadStart start) {
  if constexpr (std::is_same_v<Stream, tcp::socket>)
    return async_receive(stream, into, start, use_tuple);
  else
    return stream.async_read_some(into, use_tuple);
}

// One more read into `buffer` for a message under way (the rest of a head
// or a body): it tries the socket at once, so a reset that came with the
// first bytes is an error now. buffer_overflow when the buffer is full.
template <class Stream>
asio::awaitable<beast::error_code> read_more(Stream& stream, beast::flat_buffer& buffer) {
  const std::size_t room = beast::read_size(buffer, 65536);
  if (room == 0) co_return bhttp::error::buffer_overflow;
  auto [ec, n] = co_await read_some(stream, buffer.prepare(room), ReadStart::try_first);
  buffer.commit(n);
  co_return ec;
}

// Keeps the connection count for the cap; the last thing a session does.
struct ConnectionSlot {
  std::shared_ptr<Server::State> state;
  std::size_t io;  // the index of the io_context serving it
  ~ConnectionSlot() {
    state->served[io].fetch_sub(1, std::memory_order_relaxed);
    --state->connections;
    asio::post(state->acceptor.get_executor(), [s = state] { s->slot_freed.cancel(); });
  }
};

// After a refusal that closes the connection the client may still be
// sending: a body the gateway will not read. Closing a socket with unread
// input makes the kernel send RST, which can destroy the reply before the
// client has read it. So the send side is shut down first (the client sees
// the reply end), and what still comes is read and thrown away (into the
// session's capped buffer, never committed) until the client closes, or
// linger_bytes came, or linger_timeout passed. Under TLS the send side stays
// open for the close_notify the session sends after this.
constexpr std::chrono::milliseconds linger_timeout{1000};
constexpr std::size_t linger_bytes = 4 << 20;

template <class Stream>
asio::awaitable<void> linger(Connection<Stream> c, beast::flat_buffer& buffer) {
  if constexpr (std::is_same_v<Stream, tcp::socket>) {
    beast::error_code ignored;
    c.stream.shutdown(tcp::socket::shutdown_send, ignored);
  }
  c.deadline.expires_after(linger_timeout);
  buffer.clear();
  const auto scratch = buffer.prepare(std::min(buffer.max_size(), read_chunk_bytes));
  for (std::size_t drained = 0; drained < linger_bytes;) {
    auto [ec, n] = co_await read_some(c.stream, scratch, ReadStart::try_first);
    if (ec) break;
    drained += n;
  }
}

// A reply that ends the connection, then the lingering close above.
template <class Stream>
asio::awaitable<void> refuse(Connection<Stream> c, beast::flat_buffer& buffer, Response reply, unsigned version) {
  reply.close = true;
  const bool written = co_await write_reply(c, std::move(reply), {.version = version, .keep_alive = false});
  if (written) co_await linger(c, buffer);
}

// The requests of one connection, the same over tcp::socket and
// beast::ssl_stream<tcp::socket>.
template <class Stream>
asio::awaitable<void> serve(Server::State& state, Connection<Stream> c, const std::string& remote) {
  const auto& limits = state.limits;
  // Capped: a read that would grow it past read_buffer_bytes fails with
  // buffer_overflow instead (server.hpp says why that is enough).
  beast::flat_buffer buffer(read_buffer_bytes(limits));
  auto& stream = c.stream;
  const auto too_large = [](const std::string& what, std::size_t limit) {
    return problem(Code::payload_too_large, what + " exceeds " + std::to_string(limit) + " bytes");
  };

  // The first request's head is due header_timeout after the accept (the
  // session set that deadline; under TLS before the handshake), so a
  // connection that never sends a byte holds its slot no longer than one
  // that trickles. idle_timeout is only the wait between requests.
  for (bool first = true;; first = false) {
    // A fresh parser per request: limits and state never leak across requests.
    RequestParser parser;
    parser.header_limit(static_cast<std::uint32_t>(limits.max_header_bytes));
    parser.body_limit(limits.max_body_bytes);

    // Idle until a request starts; from its first byte the whole header has
    // header_timeout, so a client that trickles bytes cannot hold the slot.
    if (buffer.size() == 0) {
      if (!first) c.deadline.expires_after(limits.idle_timeout);
      auto [fec, fn] = co_await read_some(stream, buffer.prepare(4096), ReadStart::if_reported);
      if (fec) break;
      buffer.commit(fn);
    }
    // A head that arrived whole (the usual case) is parsed here and now;
    // Beast's read would parse the same bytes and then queue its completion
    // as one more handler. Only a head still incomplete is read on.
    beast::error_code hec;
    std::size_t hn = parser.put(buffer.data(), hec);
    buffer.consume(hn);
    if (hec == bhttp::error::need_more) hec = {};
    // The rest of a head read as Beast's async_read_header reads it (the
    // same errors), each read trying the socket at once.
    if (!hec && !parser.is_header_done()) {
      if (!first) c.deadline.expires_after(limits.header_timeout);
      while (!hec && !parser.is_header_done()) {
        const auto rec = co_await read_more(stream, buffer);
        if (rec == asio::error::eof) {  // a head cut short
          hec = parser.got_some() ? beast::error_code(bhttp::error::partial_message)
                                  : beast::error_code(bhttp::error::end_of_stream);
          break;
        }
        if (rec) {
          hec = rec;
          break;
        }
        const std::size_t used = parser.put(buffer.data(), hec);
        buffer.consume(used);
        hn += used;
        if (hec == bhttp::error::need_more) hec = {};
      }
    }
    // Beast's header_limit does not count the lines it parsed whole from its
    // first read; the documented limit is the whole head, request line to
    // blank line, which is what the parser consumed for the header. The
    // buffer's cap is above the header limit, so an overflow is a long head.
    if (!hec && hn > limits.max_header_bytes) hec = bhttp::error::header_limit;
    if (hec) {
      std::optional<Response> reply;
      if (hec == bhttp::error::header_limit || hec == bhttp::error::buffer_overflow)
        reply = too_large("request headers", limits.max_header_bytes);
      else if (hec == bhttp::error::body_limit)  // Content-Length alone already says too much
        reply = too_large("request body", limits.max_body_bytes);
      else if (hec != bhttp::error::end_of_stream && !c.deadline.expired() && !transport_failed(hec) &&
               hec != asio::error::operation_aborted && buffer.size() > 0)
        reply = problem(Code::invalid_request, "malformed HTTP request: " + hec.message());
      if (reply) co_await refuse(c, buffer, std::move(*reply), 11);
      break;
    }
    ++state.active;
    struct ActiveGuard {
      Server::State& s;
      ~ActiveGuard() {
        if (--s.active == 0 && s.idle) s.idle();
      }
    } guard{state};

    Request& request = parser.request;
    request.remote = remote;
    const unsigned version = parser.version;
    // Refused before any body byte is read: the rest of the connection could
    // not be trusted to start where this request ends.
    if (auto why = head_problem(request.target, request.headers)) {
      co_await refuse(c, buffer, problem(Code::invalid_request, "malformed HTTP request: " + *why), version);
      break;
    }
    if (auto length = parser.content_length(); length && *length > limits.max_body_bytes) {
      co_await refuse(c, buffer, too_large("request body", limits.max_body_bytes), version);
      break;
    }
    // No body is read for a request the handler would refuse on its head
    // alone (no route, no token, a tenant the token is not bound to, ...):
    // the screen sees the head, and a refusal is the reply.
    bool screened = false;
    const auto screen = [&]() -> std::optional<Response> {
      screened = true;
      return state.screen ? state.screen(request) : std::nullopt;
    };
    if (auto expect = request.header("Expect"); expect && iequals(*expect, "100-continue")) {
      // The body is invited only for a request that could be served.
      if (auto refusal = screen()) {
        co_await refuse(c, buffer, std::move(*refusal), version);
        break;
      }
      bhttp::response<bhttp::empty_body> cont{bhttp::status::continue_, version};
      c.deadline.expires_after(limits.write_timeout);
      auto [cec, cn] = co_await bhttp::async_write(stream, cont, use_tuple);
      if (cec) break;
    }
    // A request without a body (a GET) is complete with its head. Body bytes
    // that came with the head are parsed first: a body complete in them (the
    // usual small request) needs no screen and no further read.
    beast::error_code bec;
    parser.eager(true);
    // Beast's chunk parser asserts when it is given fewer than 5 bytes after
    // a last-chunk line. A chunked body has at least 5 bytes to come until it
    // is done ("0\r\n\r\n"), so fewer wait for the next read.
    const auto parse_body = [&] {
      if (buffer.size() == 0 || (parser.chunked() && buffer.size() < 5)) return;
      buffer.consume(parser.put(buffer.data(), bec));
      if (bec == bhttp::error::need_more) bec = {};
    };
    if (!parser.is_done()) parse_body();
    if (!bec && !parser.is_done()) {
      if (!screened) {
        if (auto refusal = screen()) {
          co_await refuse(c, buffer, std::move(*refusal), version);
          break;
        }
      }
      // Read here rather than by bhttp::async_read, which would first parse
      // again the bytes put() above has seen: after a last-chunk line with no
      // new byte since, Beast's chunk parser asserts.
      c.deadline.expires_after(limits.read_timeout);
      while (!bec && !parser.is_done()) {
        const auto rec = co_await read_more(stream, buffer);
        if (rec) {
          bec = rec == asio::error::eof ? bhttp::error::partial_message : rec;
          break;
        }
        parse_body();
      }
    }
    if (bec) {
      std::optional<Response> reply;
      if (bec == bhttp::error::body_limit)
        reply = too_large("request body", limits.max_body_bytes);
      else if (bec == bhttp::error::buffer_overflow)  // body bytes never stay: a line that must be whole did
        reply = too_large("chunk extension or trailer", read_buffer_bytes(limits));
      else if (!c.deadline.expired() && !transport_failed(bec) && bec != bhttp::error::partial_message)
        reply = problem(Code::invalid_request, "malformed HTTP request: " + bec.message());
      if (reply) co_await refuse(c, buffer, std::move(*reply), version);
      break;
    }

    const bool head = parser.head;
    const bool client_keep_alive = parser.keep_alive();
    request.keep_alive = client_keep_alive;
    c.deadline.expires_never();  // the handler has its own deadlines
    Response reply = co_await state.handler(std::move(request));
    const bool keep_alive = client_keep_alive && !reply.close && !state.stopping;
    if (!co_await write_reply(c, std::move(reply), {.version = version, .keep_alive = keep_alive, .to_head = head}))
      break;
    if (!keep_alive) break;
  }
}

void close(tcp::socket& socket) {
  beast::error_code ignored;
  socket.shutdown(tcp::socket::shutdown_send, ignored);
  socket.close(ignored);
}

// How long close_notify may take: it is a courtesy to a peer that is done.
constexpr std::chrono::milliseconds close_notify_timeout{1000};

asio::awaitable<void> session(std::shared_ptr<Server::State> state, tcp::socket socket, std::size_t io,
                              std::shared_ptr<ssl::context> tls) {
  ConnectionSlot slot{state, io};
  beast::error_code ignored;
  const std::string remote = socket.remote_endpoint(ignored).address().to_string();
  if (!tls) {
    socket.non_blocking(true, ignored);  // write_reply writes on the spot first
    Deadline deadline(socket.get_executor(), [&socket] {
      beast::error_code e;
      socket.close(e);
    });
    deadline.expires_after(state->limits.header_timeout);  // the first request's head, from the accept
    co_await serve(*state, Connection<tcp::socket>{socket, deadline, state->limits}, remote);
    close(socket);
    co_return;
  }
  // `tls` lives as long as this connection, whatever a reload swaps in.
  beast::ssl_stream<tcp::socket> stream(std::move(socket), *tls);
  auto& lowest = beast::get_lowest_layer(stream);
  Deadline deadline(lowest.get_executor(), [&lowest] {
    beast::error_code e;
    lowest.close(e);
  });
  // A client that sends no ClientHello, or trickles it, is a slow header:
  // the handshake and the first request's head share this deadline.
  deadline.expires_after(state->limits.header_timeout);
  auto [hec] = co_await stream.async_handshake(ssl::stream_base::server, use_tuple);
  if (!hec) {
    co_await serve(*state, Connection<beast::ssl_stream<tcp::socket>>{stream, deadline, state->limits}, remote);
    // A timeout already closed the socket; otherwise end the TLS session
    // with close_notify, so the client can tell a complete reply from a cut
    // one. A peer that never answers it costs at most the short deadline.
    if (lowest.is_open()) {
      deadline.expires_after(std::min(close_notify_timeout, state->limits.write_timeout));
      co_await stream.async_shutdown(use_tuple);
    }
  }
  close(lowest);
}

asio::awaitable<void> accept_loop(std::shared_ptr<Server::State> state) {
  using namespace std::chrono_literals;
  auto backoff = 5ms;
  for (;;) {
    // At the cap, wait for a session to end (it cancels the timer).
    while (state->connections >= state->limits.max_connections && state->acceptor.is_open()) {
      state->slot_freed.expires_at(asio::steady_timer::time_point::max());
      co_await state->slot_freed.async_wait(use_tuple);
    }
    const std::size_t io = state->next_io();
    auto [ec, socket] = co_await state->acceptor.async_accept(*state->ios[io], use_tuple);
    if (ec) {
      if (ec == asio::error::operation_aborted || !state->acceptor.is_open()) co_return;
      // E.g. EMFILE: the pending connection stays queued and would fail
      // again at once. Pause, growing to 1 s, and keep serving the rest.
      ++state->accept_errors;
      state->slot_freed.expires_after(backoff);
      co_await state->slot_freed.async_wait(use_tuple);
      backoff = std::min<std::chrono::milliseconds>(backoff * 2, 1000ms);
      continue;
    }
    backoff = 5ms;
    ++state->connections;
    state->served[io].fetch_add(1, std::memory_order_relaxed);
    socket.set_option(tcp::no_delay(true), ec);
    auto executor = socket.get_executor();
    asio::co_spawn(executor, session(state, std::move(socket), io, state->tls_context()), asio::detached);
  }
}

}  // namespace

Server::Server(asio::io_context& io, ServerLimits limits, Handler handler, Screen screen)
    : Server(std::vector<asio::io_context*>{&io}, limits, std::move(handler), std::move(screen)) {}

Server::Server(std::vector<asio::io_context*> ios, ServerLimits limits, Handler handler, Screen screen)
    : state_(std::make_shared<State>(std::move(ios), limits, std::move(handler), std::move(screen))) {}

Server::~Server() { stop_accepting(); }

void Server::set_tls_context(std::shared_ptr<ssl::context> context) {
  std::lock_guard lock(state_->tls_mutex);
  state_->tls = std::move(context);
}

std::uint16_t Server::listen(const std::string& address, std::uint16_t port) {
  tcp::endpoint endpoint{asio::ip::make_address(address), port};
  auto& acceptor = state_->acceptor;
  acceptor.open(endpoint.protocol());
  acceptor.set_option(asio::socket_base::reuse_address(true));
  acceptor.bind(endpoint);
  acceptor.listen(asio::socket_base::max_listen_connections);
  // Accepted connections inherit it: the wait for each request after the
  // first tries the socket only on the reactor's news (read_some, above).
  report_drain(acceptor.native_handle());
  asio::co_spawn(acceptor.get_executor(), accept_loop(state_), asio::detached);
  return acceptor.local_endpoint().port();
}

void Server::stop_accepting() {
  if (state_->stopping.exchange(true)) return;
  asio::post(state_->acceptor.get_executor(), [state = state_] {
    beast::error_code ignored;
    state->acceptor.close(ignored);
    state->slot_freed.cancel();
  });
}

std::size_t Server::active_requests() const { return state_->active.load(); }

void Server::on_idle(std::function<void()> callback) { state_->idle = std::move(callback); }

std::size_t Server::open_connections() const { return state_->connections.load(); }

std::size_t Server::accept_errors() const { return state_->accept_errors.load(); }

}  // namespace gw::http
