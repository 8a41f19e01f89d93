#include "gatewayctl/http_transport.hpp"

#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>

namespace gwctl {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace bhttp = beast::http;
using tcp = asio::ip::tcp;

namespace {

// The largest reply read: a full page of 500 rows is far below it.
constexpr std::uint64_t max_body_bytes = 16 << 20;

std::string seconds_text(std::chrono::milliseconds t) {
  const auto ms = t.count();
  return ms % 1000 == 0 ? std::to_string(ms / 1000) + "s" : std::to_string(ms) + "ms";
}

}  // namespace

HttpTransport::HttpTransport(Endpoint endpoint, std::string token, std::chrono::milliseconds timeout)
    : endpoint_(std::move(endpoint)), token_(std::move(token)), timeout_(timeout) {}

HttpReply HttpTransport::exchange(const HttpRequest& request) {
  const auto deadline = std::chrono::steady_clock::now() + timeout_;
  const std::string where = endpoint_.host_header;

  bhttp::request<bhttp::string_body> req{bhttp::string_to_verb(request.method), request.target, 11};
  req.set(bhttp::field::host, endpoint_.host_header);
  req.set(bhttp::field::user_agent, "gatewayctl");
  req.set(bhttp::field::accept, "application/json, application/problem+json");
  req.set(bhttp::field::authorization, "Bearer " + token_);
  req.keep_alive(false);
  if (request.body) {
    req.set(bhttp::field::content_type, "application/json");
    req.body() = *request.body;
  }
  req.prepare_payload();

  // Asynchronous operations on a private io_context, so that the stream's
  // deadline applies (Beast's timeouts cover only asynchronous operations);
  // run_until bounds the name lookup, which the stream cannot.
  asio::io_context io;
  tcp::resolver resolver(io);
  beast::tcp_stream stream(io);
  beast::flat_buffer buffer;
  bhttp::response_parser<bhttp::string_body> parser;
  parser.body_limit(max_body_bytes);

  beast::error_code failure;
  std::string stage;
  bool done = false;
  auto fail = [&](std::string at, beast::error_code ec) {
    stage = std::move(at);
    failure = ec;
    done = true;
  };
  resolver.async_resolve(endpoint_.host, endpoint_.port, [&](beast::error_code ec, tcp::resolver::results_type found) {
    if (ec) return fail("resolve", ec);
    stream.expires_at(deadline);
    stream.async_connect(found, [&](beast::error_code ec2, const tcp::endpoint&) {
      if (ec2) return fail("connect", ec2);
      stream.expires_at(deadline);
      bhttp::async_write(stream, req, [&](beast::error_code ec3, std::size_t) {
        if (ec3) return fail("write", ec3);
        stream.expires_at(deadline);
        bhttp::async_read(stream, buffer, parser, [&](beast::error_code ec4, std::size_t) {
          if (ec4) return fail("read", ec4);
          done = true;
        });
      });
    });
  });
  io.run_until(deadline);

  if (!done || failure == beast::error::timeout)
    throw TransportError("timeout", "no reply from " + where + " within " + seconds_text(timeout_));
  if (failure) {
    if (stage == "resolve") throw TransportError("unreachable", "cannot resolve " + endpoint_.host + ": " + failure.message());
    if (stage == "connect") throw TransportError("unreachable", "cannot connect to " + where + ": " + failure.message());
    if (stage == "write") throw TransportError("unreachable", "connection to " + where + " lost while sending: " + failure.message());
    if (failure == bhttp::error::end_of_stream)
      throw TransportError("unreachable", "the connection to " + where + " closed before a reply");
    if (failure.category() == bhttp::make_error_code(bhttp::error::bad_version).category())
      throw TransportError("bad_reply", "the reply from " + where + " is not HTTP/1.1 we can read: " + failure.message());
    throw TransportError("unreachable", "connection to " + where + " ended without a reply: " + failure.message());
  }

  auto res = parser.release();
  HttpReply reply;
  reply.status = res.result_int();
  reply.content_type = std::string(res[bhttp::field::content_type]);
  reply.gateway_status = std::string(res["Gateway-Status"]);
  reply.request_id = std::string(res["X-Request-Id"]);
  reply.body = std::move(res.body());
  beast::error_code ignored;
  stream.socket().shutdown(tcp::socket::shutdown_both, ignored);
  return reply;
}

}  // namespace gwctl
