#include "support/http_client.hpp"

#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>

#include <strings.h>

#include <cstdio>
#include <functional>
#include <string_view>
#include <variant>

#include <sys/socket.h>

#include <cerrno>

namespace gw::test {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace bhttp = beast::http;
using tcp = asio::ip::tcp;

std::optional<std::string> Reply::header(const std::string& name) const {
  for (const auto& [k, v] : headers)
    if (strcasecmp(k.c_str(), name.c_str()) == 0) return v;
  return std::nullopt;
}

std::string quoted_start(std::string_view bytes) {
  constexpr std::size_t shown = 80;
  std::string out = "\"";
  for (unsigned char ch : bytes.substr(0, shown)) {
    if (ch == '\r') out += "\\r";
    else if (ch == '\n') out += "\\n";
    else if (ch == '"' || ch == '\\') (out += '\\') += static_cast<char>(ch);
    else if (ch < 0x20 || ch >= 0x7f) {
      char hex[8];
      std::snprintf(hex, sizeof hex, "\\x%02x", ch);
      out += hex;
    } else {
      out += static_cast<char>(ch);
    }
  }
  out += '"';
  if (bytes.size() > shown) out += "...";
  return out;
}

nlohmann::json Reply::json() const { return nlohmann::json::parse(body, nullptr, false); }

std::string Reply::code() const { return header("Gateway-Status").value_or(""); }

namespace {

// How a failed exchange ended, to decide whether resending is harmless.
struct Failure {
  beast::error_code ec;
  bool reused = false;       // the connection had served an earlier request
  bool got_bytes = false;    // any byte of a response arrived
};

// The server ended the connection (EOF or reset), as opposed to our deadline.
bool closed_by_server(const beast::error_code& ec) {
  return ec == bhttp::error::end_of_stream || ec == asio::error::eof ||
         ec == asio::error::connection_reset || ec == asio::error::broken_pipe;
}

bool header_present(const bhttp::request<bhttp::string_body>& req, const char* name) {
  return req.find(name) != req.end();
}

// Only a safe read that carries no protected header may be resent.
bool may_resend(const bhttp::request<bhttp::string_body>& req) {
  const auto m = req.method();
  return (m == bhttp::verb::get || m == bhttp::verb::head) && !header_present(req, "Idempotency-Key") &&
         !header_present(req, "Fence-Grant");
}

// What a kept-alive connection holds before the next request is sent.
enum class Idle { open, closed };

}  // namespace

struct HttpClient::Impl {
  std::uint16_t port;
  std::chrono::milliseconds timeout;
  asio::io_context io;
  std::optional<beast::tcp_stream> stream;
  bool reused = false;
  beast::flat_buffer buffer;
  std::size_t connections = 0;
  std::size_t reconnects = 0;
  // The last exchange on this connection, for the message about bytes after it.
  std::string last_exchange;

  void connect() {
    ++connections;
    stream.emplace(io);
    reused = false;
    buffer.clear();
    last_exchange.clear();
    stream->expires_after(timeout);
    stream->connect(tcp::endpoint(asio::ip::make_address("127.0.0.1"), port));
  }

  // Peeks at what the socket has received and nobody read yet, without
  // waiting or consuming: > 0 bytes waiting, 0 the server closed, < 0 with
  // errno EAGAIN nothing yet (any other errno: reset).
  ssize_t peek(char* into, std::size_t size) {
    return ::recv(stream->socket().native_handle(), into, size, MSG_PEEK | MSG_DONTWAIT);
  }

  // The bytes waiting on the socket (up to 64 KiB).
  std::string pending() {
    std::string bytes(64 << 10, '\0');
    const auto n = peek(bytes.data(), bytes.size());
    bytes.resize(n > 0 ? static_cast<std::size_t>(n) : 0);
    return bytes;
  }

  // Drops the connection and throws: `bytes` came from the server with no
  // request to answer. Reconnecting past them would hide a gateway that
  // wrote two replies to one request.
  [[noreturn]] void unexpected(const std::string& bytes, const std::string& when) {
    const auto message = "HttpClient: " + std::to_string(bytes.size()) + " unexpected byte(s) from 127.0.0.1:" +
                         std::to_string(port) + " " + when + " (connection " + std::to_string(connections) +
                         "), starting " + quoted_start(bytes);
    drop();
    throw UnexpectedBytes(message);
  }

  // Whether the server already ended the kept-alive connection (its idle
  // timeout): then the request goes out on a new connection instead, as
  // curl and browsers do. Nothing was sent on the old one, so this is not a
  // resend; a close that races the send is still reported, never retried.
  // A byte waiting here answers no request: it fails the test, even when
  // the server closed the connection after it.
  Idle idle_state() {
    char byte;
    const auto n = peek(&byte, 1);
    if (n > 0) unexpected(pending(), "waiting before the next request, after " + last_exchange);
    if (n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK)) return Idle::closed;
    return Idle::open;
  }

  void drop() {
    stream.reset();
    reused = false;
    buffer.clear();
  }

  // One blocking exchange with deadlines, driven by run_one on our own io.
  // Returns the reply, or how it failed.
  std::variant<Reply, Failure> exchange(bhttp::request<bhttp::string_body>& req) {
    if (stream && reused && idle_state() == Idle::closed) {
      drop();
      ++reconnects;
    }
    if (!stream) connect();
    Failure failure{{}, reused, false};
    stream->expires_after(timeout);
    bhttp::response_parser<bhttp::string_body> parser;
    parser.body_limit(64 << 20);
    if (req.method() == bhttp::verb::head) parser.skip(true);  // its Content-Length announces no body
    bool done = false;
    bhttp::async_write(*stream, req, [&](beast::error_code e, std::size_t) {
      if (e) {
        failure.ec = e;
        done = true;
        return;
      }
      bhttp::async_read(*stream, buffer, parser, [&](beast::error_code e2, std::size_t) {
        failure.ec = e2;
        done = true;
      });
    });
    io.restart();
    while (!done && io.run_one()) {
    }
    if (failure.ec) {
      failure.got_bytes = parser.got_some() || buffer.size() > 0;
      drop();
      return failure;
    }
    auto res = parser.release();
    last_exchange = "the " + std::to_string(res.result_int()) + " reply to " + std::string(req.method_string()) +
                    " " + std::string(req.target());
    // The reply is complete and nothing else was asked: whatever the read
    // took in past its end, or has arrived since, is a second reply or junk,
    // whether or not the connection is to be kept.
    char byte;
    if (buffer.size() > 0 || peek(&byte, 1) > 0) {
      const auto extra = beast::buffers_to_string(buffer.data()) + pending();
      unexpected(extra, "right after " + last_exchange);
    }
    Reply r;
    r.status = res.result_int();
    for (const auto& f : res) r.headers.emplace_back(std::string(f.name_string()), std::string(f.value()));
    r.body = std::move(res.body());
    if (res.keep_alive()) {
      reused = true;
    } else {
      drop();
    }
    return r;
  }
};

std::size_t HttpClient::connections_opened() const { return impl_->connections; }
std::size_t HttpClient::reconnects() const { return impl_->reconnects; }

HttpClient::HttpClient(std::uint16_t port, std::chrono::milliseconds timeout)
    : impl_(std::make_unique<Impl>()) {
  impl_->port = port;
  impl_->timeout = timeout;
}

HttpClient::~HttpClient() = default;
HttpClient::HttpClient(HttpClient&&) noexcept = default;

Reply HttpClient::request(const std::string& method, const std::string& target, const Headers& headers,
                          const std::string& body) {
  bhttp::request<bhttp::string_body> req{bhttp::string_to_verb(method), target, 11};
  if (req.method() == bhttp::verb::unknown) req.method_string(method);
  req.set(bhttp::field::host, "127.0.0.1");
  for (const auto& [k, v] : headers) req.insert(k, v);
  req.body() = body;
  if (!body.empty() || method == "POST" || method == "PUT" || method == "PATCH") req.prepare_payload();
  auto result = impl_->exchange(req);
  if (auto* failed = std::get_if<Failure>(&result)) {
    // The server closed a connection it had kept alive, before any reply
    // byte: the usual idle close racing our write. Only a safe read may be
    // sent again, since the server may have seen it.
    if (failed->reused && !failed->got_bytes && closed_by_server(failed->ec) && may_resend(req)) {
      ++impl_->reconnects;
      result = impl_->exchange(req);
    }
  }
  if (auto* failed = std::get_if<Failure>(&result)) throw beast::system_error(failed->ec);
  return std::get<Reply>(std::move(result));
}

Reply HttpClient::post_json(const std::string& target, const nlohmann::json& body, const std::string& token) {
  Headers h{{"Content-Type", "application/json"}};
  if (!token.empty()) h.emplace_back("Authorization", "Bearer " + token);
  return request("POST", target, h, body.dump());
}

Reply HttpClient::get(const std::string& target, const std::string& token) {
  Headers h;
  if (!token.empty()) h.emplace_back("Authorization", "Bearer " + token);
  return request("GET", target, h);
}

RawReply HttpClient::raw(const std::string& bytes) {
  asio::io_context io;
  beast::tcp_stream s(io);
  s.expires_after(impl_->timeout);
  s.connect(tcp::endpoint(asio::ip::make_address("127.0.0.1"), impl_->port));
  s.expires_after(impl_->timeout);
  beast::error_code ignored;
  // A write cut short by the server closing shows up in the read below.
  asio::write(s.socket(), asio::buffer(bytes), ignored);
  RawReply out;
  char chunk[4096];
  beast::error_code ended;
  std::function<void()> read_more = [&] {
    s.async_read_some(asio::buffer(chunk), [&](beast::error_code e, std::size_t n) {
      out.bytes.append(chunk, n);
      if (e) {
        ended = e;
        return;
      }
      read_more();
    });
  };
  read_more();
  while (!ended && io.run_one()) {
  }
  out.timed_out = ended == beast::error::timeout;
  out.closed_by_peer = ended == asio::error::eof || ended == asio::error::connection_reset;
  if (!out.timed_out && !out.closed_by_peer) throw beast::system_error(ended);
  return out;
}

}  // namespace gw::test
