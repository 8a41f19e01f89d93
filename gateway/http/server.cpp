#include "http/server.hpp"

#include "http/framing.hpp"
#include "http/problem.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>

#include <iostream>

namespace gw::http {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace bhttp = beast::http;
using tcp = asio::ip::tcp;
constexpr auto use_tuple = asio::as_tuple(asio::use_awaitable);

struct Server::State : std::enable_shared_from_this<Server::State> {
  State(asio::io_context& io, ServerLimits l, Handler h)
      : io(io), limits(l), handler(std::move(h)), acceptor(asio::make_strand(io)) {}

  asio::io_context& io;
  ServerLimits limits;
  Handler handler;
  tcp::acceptor acceptor;
  std::atomic<bool> stopping{false};
  std::atomic<std::size_t> active{0};
};

namespace {

Fields header_fields(const bhttp::request_header<>& h) {
  Fields out;
  for (const auto& f : h) out.emplace_back(std::string(f.name_string()), std::string(f.value()));
  return out;
}

Request to_request(bhttp::request<bhttp::string_body>&& m, const std::string& remote) {
  Request r;
  r.method = std::string(m.method_string());
  r.target = std::string(m.target());
  r.keep_alive = m.keep_alive();
  for (const auto& f : m) r.headers.emplace_back(std::string(f.name_string()), std::string(f.value()));
  r.body = std::move(m.body());
  r.remote = remote;
  return r;
}

bhttp::response<bhttp::string_body> to_message(Response&& r, unsigned version, bool keep_alive,
                                               bool head) {
  bhttp::response<bhttp::string_body> m{static_cast<bhttp::status>(r.status), version};
  for (auto& [k, v] : r.headers) m.insert(k, v);
  m.body() = std::move(r.body);
  m.keep_alive(keep_alive);
  if (head && r.content_length_override) {
    m.set(bhttp::field::content_length, *r.content_length_override);
  } else {
    m.prepare_payload();
  }
  if (head) m.body().clear();
  return m;
}

asio::awaitable<bool> write_reply(beast::tcp_stream& stream, Response reply, unsigned version,
                                  bool keep_alive, bool head, const ServerLimits& limits) {
  auto message = to_message(std::move(reply), version, keep_alive, head);
  bhttp::serializer<false, bhttp::string_body> sr{message};
  if (head) sr.split(true);
  stream.expires_after(limits.write_timeout);
  if (head) {
    auto [ec, n] = co_await bhttp::async_write_header(stream, sr, use_tuple);
    co_return !ec;
  }
  auto [ec, n] = co_await bhttp::async_write(stream, sr, use_tuple);
  co_return !ec;
}

asio::awaitable<void> session(std::shared_ptr<Server::State> state, tcp::socket socket) {
  beast::error_code ignored;
  auto peer = socket.remote_endpoint(ignored);
  const std::string remote = peer.address().to_string();
  beast::tcp_stream stream(std::move(socket));
  beast::flat_buffer buffer;
  const auto& limits = state->limits;

  for (;;) {
    // A fresh parser per request: limits and state never leak across requests.
    bhttp::request_parser<bhttp::string_body> parser;
    parser.header_limit(static_cast<std::uint32_t>(limits.max_header_bytes));
    parser.body_limit(limits.max_body_bytes);

    stream.expires_after(limits.idle_timeout);
    auto [hec, hn] = co_await bhttp::async_read_header(stream, buffer, parser, use_tuple);
    // Beast's header_limit does not count the lines it parsed whole from its
    // first read; the documented limit is the whole head, request line to
    // blank line, which is what the parser consumed for the header.
    if (!hec && hn > limits.max_header_bytes) hec = bhttp::error::header_limit;
    if (hec) {
      std::optional<Response> reply;
      if (hec == bhttp::error::header_limit)
        reply = problem(Code::payload_too_large,
                        "request headers exceed " + std::to_string(limits.max_header_bytes) + " bytes");
      else if (hec == bhttp::error::body_limit)  // Content-Length alone already says too much
        reply = problem(Code::payload_too_large,
                        "request body exceeds " + std::to_string(limits.max_body_bytes) + " bytes");
      else if (hec != bhttp::error::end_of_stream && hec != beast::error::timeout &&
               hec != asio::error::eof && hec != asio::error::connection_reset &&
               hec != asio::error::operation_aborted && buffer.size() > 0)
        reply = problem(Code::invalid_request, "malformed HTTP request: " + hec.message());
      if (reply) {
        reply->close = true;
        co_await write_reply(stream, std::move(*reply), 11, false, false, limits);
      }
      break;
    }
    ++state->active;
    struct ActiveGuard {
      std::atomic<std::size_t>& n;
      ~ActiveGuard() { --n; }
    } guard{state->active};

    auto& header = parser.get();
    const unsigned version = header.version();
    // Refused before any body byte is read: the rest of the connection could
    // not be trusted to start where this request ends.
    const auto target = header.target();
    if (auto why = head_problem(std::string_view(target.data(), target.size()), header_fields(header))) {
      auto reply = problem(Code::invalid_request, "malformed HTTP request: " + *why);
      reply.close = true;
      co_await write_reply(stream, std::move(reply), version, false, false, limits);
      break;
    }
    if (auto length = parser.content_length(); length && *length > limits.max_body_bytes) {
      auto reply = problem(Code::payload_too_large,
                           "request body exceeds " + std::to_string(limits.max_body_bytes) + " bytes");
      co_await write_reply(stream, std::move(reply), version, false, false, limits);
      break;
    }
    if (beast::iequals(header[bhttp::field::expect], "100-continue")) {
      bhttp::response<bhttp::empty_body> cont{bhttp::status::continue_, version};
      stream.expires_after(limits.write_timeout);
      auto [cec, cn] = co_await bhttp::async_write(stream, cont, use_tuple);
      if (cec) break;
    }
    stream.expires_after(limits.read_timeout);
    auto [bec, bn] = co_await bhttp::async_read(stream, buffer, parser, use_tuple);
    if (bec) {
      if (bec == bhttp::error::body_limit) {
        auto reply = problem(Code::payload_too_large,
                             "request body exceeds " + std::to_string(limits.max_body_bytes) + " bytes");
        co_await write_reply(stream, std::move(reply), version, false, false, limits);
      } else if (bec != beast::error::timeout && bec != asio::error::eof &&
                 bec != asio::error::connection_reset && bec != bhttp::error::partial_message) {
        auto reply = problem(Code::invalid_request, "malformed HTTP request: " + bec.message());
        co_await write_reply(stream, std::move(reply), version, false, false, limits);
      }
      break;
    }

    auto message = parser.release();
    const bool head = message.method() == bhttp::verb::head;
    auto request = to_request(std::move(message), remote);
    const bool client_keep_alive = request.keep_alive;
    stream.expires_never();  // the handler has its own deadlines
    Response reply = co_await state->handler(std::move(request));
    const bool keep_alive = client_keep_alive && !reply.close && !state->stopping;
    if (!co_await write_reply(stream, std::move(reply), version, keep_alive, head, limits)) break;
    if (!keep_alive) break;
  }
  stream.socket().shutdown(tcp::socket::shutdown_send, ignored);
  stream.close();
}

asio::awaitable<void> accept_loop(std::shared_ptr<Server::State> state) {
  for (;;) {
    auto [ec, socket] = co_await state->acceptor.async_accept(asio::make_strand(state->io), use_tuple);
    if (ec) {
      if (ec == asio::error::operation_aborted || !state->acceptor.is_open()) co_return;
      continue;  // e.g. EMFILE: keep serving the connections we have
    }
    socket.set_option(tcp::no_delay(true), ec);
    auto executor = socket.get_executor();
    asio::co_spawn(executor, session(state, std::move(socket)), asio::detached);
  }
}

}  // namespace

Server::Server(asio::io_context& io, ServerLimits limits, Handler handler)
    : state_(std::make_shared<State>(io, limits, std::move(handler))) {}

Server::~Server() { stop_accepting(); }

std::uint16_t Server::listen(const std::string& address, std::uint16_t port) {
  tcp::endpoint endpoint{asio::ip::make_address(address), port};
  auto& acceptor = state_->acceptor;
  acceptor.open(endpoint.protocol());
  acceptor.set_option(asio::socket_base::reuse_address(true));
  acceptor.bind(endpoint);
  acceptor.listen(asio::socket_base::max_listen_connections);
  asio::co_spawn(acceptor.get_executor(), accept_loop(state_), asio::detached);
  return acceptor.local_endpoint().port();
}

void Server::stop_accepting() {
  if (state_->stopping.exchange(true)) return;
  asio::post(state_->acceptor.get_executor(), [state = state_] {
    beast::error_code ignored;
    state->acceptor.close(ignored);
  });
}

std::size_t Server::active_requests() const { return state_->active.load(); }

}  // namespace gw::http
