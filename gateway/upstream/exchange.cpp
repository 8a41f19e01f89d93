// The HTTP exchange on one connection (see exchange.hpp). The only Beast
// translation unit of the client.
#include "upstream/exchange.hpp"

#include "upstream/connection.hpp"
#include "upstream/request_rules.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core/buffers_suffix.hpp>
#include <boost/beast/core/buffer_traits.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http/basic_parser.hpp>
#include <boost/beast/http/read.hpp>

#include <array>
#include <memory>
#include <optional>
#include <string>
#include <tuple>

namespace gw::upstream::detail {
namespace {

namespace beast = boost::beast;
namespace http = boost::beast::http;

constexpr std::uint32_t header_limit = 64 * 1024;
// The most the read buffer holds: a whole head plus one read. A body passes
// through it a read at a time; only what Beast must have whole before it
// parses it can fill it, a chunk header with its extensions or the trailer
// block, which no other limit counts. Past it the read fails (buffer_overflow)
// instead of growing: a provider's reply costs at most this plus
// max_response_body.
constexpr std::size_t read_buffer_limit = header_limit + 16 * 1024;

// Builds the client's Response as it parses: each field is copied once, into
// the client's own type, with no Beast field container in between. Framing,
// limits and the field syntax are basic_parser's. Trailer fields of a chunked
// body come after the head's and are kept with them, in order.
class ResponseParser final : public http::basic_parser<false> {
 public:
  Response response;

 private:
  void on_request_impl(http::verb, beast::string_view, beast::string_view, int, error_code&) override {}
  void on_response_impl(int code, beast::string_view, int, error_code&) override {
    response.status = static_cast<unsigned>(code);
    response.headers.reserve(16);  // one allocation for a usual head, none regrown
  }
  void on_field_impl(http::field, beast::string_view name, beast::string_view value, error_code&) override {
    response.headers.emplace_back(std::in_place, std::string_view(name.data(), name.size()),
                                  std::string_view(value.data(), value.size()));
  }
  void on_header_impl(error_code&) override {}
  void on_body_init_impl(const boost::optional<std::uint64_t>& length, error_code&) override {
    // basic_parser has refused a length over body_limit already.
    if (length) response.body.reserve(static_cast<std::size_t>(*length));
  }
  std::size_t on_body_impl(beast::string_view bytes, error_code&) override {
    response.body.append(bytes.data(), bytes.size());
    return bytes.size();
  }
  void on_chunk_header_impl(std::uint64_t, beast::string_view, error_code&) override {}
  std::size_t on_chunk_body_impl(std::uint64_t, beast::string_view bytes, error_code&) override {
    response.body.append(bytes.data(), bytes.size());
    return bytes.size();
  }
  void on_finish_impl(error_code&) override {}
};

constexpr auto as_result = net::as_tuple(net::use_awaitable);

// Connection::connect, awaited.
net::awaitable<std::tuple<Failure, std::string>> connect(Connection& conn, const Endpoint& endpoint) {
  return net::async_initiate<const net::use_awaitable_t<>&, void(Failure, std::string)>(
      [&conn, &endpoint](auto handler) {
        // The connect handler is a std::function, which needs a copyable callable.
        auto shared = std::make_shared<decltype(handler)>(std::move(handler));
        conn.connect(endpoint, [shared](Failure failure, std::string detail) {
          std::move (*shared)(failure, std::move(detail));
        });
      },
      net::use_awaitable);
}

}  // namespace

Exchanged out_of_memory() {
  Exchanged out;
  out.result.failure = Failure::failed_after_send;
  out.result.request_bytes_sent = true;
  out.result.detail = "the exchange ran out of memory; the request may have been sent";
  return out;
}

net::awaitable<Exchanged> exchange(std::shared_ptr<Connection> conn, Request request, const Endpoint& endpoint,
                                   ConnectionUse use) {
  const bool head = request.method == "HEAD";
  const bool close_after = asks_close(request.headers);  // the request asked for Connection: close
  // The head is serialized here (request_rules.hpp), not by Beast: the
  // fields are written as they are, with no second copy into a Beast
  // message; head and body go out in one gathered write.
  const std::string head_bytes = wire_head(request, endpoint);
  const std::string body = std::move(request.body);
  bool may_resend = use != ConnectionUse::fresh && request.resend_if_stale;  // not yet spent
  // The connection was found quiet on this turn of the event loop: while the
  // request is written on the spot, nothing can have been reported since.
  bool quiet_since_check = use == ConnectionUse::reused_just_checked;
  bool sent_before = false;  // a byte of the request left on a connection given up for a resend

  // `sent`: whether a byte of this attempt had left (else only an earlier
  // attempt's may have, sent_before).
  const auto fail = [&](Failure failure, bool sent, std::string detail) {
    conn->disarm_deadline();
    conn->close();
    Exchanged out;
    out.result.failure = failure;
    out.result.request_bytes_sent = sent || sent_before;
    out.result.detail = std::move(detail);
    return out;
  };
  // Request::resend_if_stale, on a reused connection that failed before any
  // byte of a response and not by the deadline: the same bytes once more,
  // on a new connection.
  const auto may_resend_now = [&] { return may_resend && !conn->timed_out(); };

  beast::flat_buffer buffer{read_buffer_limit};
  std::optional<ResponseParser> parser;
  for (;;) {
    auto& stream = conn->stream();
    stream.start_counting();
    conn->arm_deadline(endpoint.request_timeout);
    // Over plain TCP the request is first written on the spot: one that fits
    // the socket's buffer (nearly all) goes straight on to reading the
    // response, with no completion queued in between.
    const std::array<net::const_buffer, 2> wire{net::buffer(head_bytes), net::buffer(body)};
    beast::buffers_suffix<std::array<net::const_buffer, 2>> rest(wire);
    error_code ec;
    rest.consume(stream.write_now(wire, ec));
    if (ec == net::error::would_block) ec = {};
    const bool written_now = !ec && beast::buffer_bytes(rest) == 0;
    if (written_now && quiet_since_check)
      stream.wait_before_next_read();  // the reply cannot be there yet: no recv to find that out
    quiet_since_check = false;  // a wait for the write below, or a resend: the loop turns
    if (!ec && !written_now) std::tie(ec, std::ignore) = co_await net::async_write(stream, rest, as_result);

    bool resend = false;
    if (ec) {
      resend = may_resend_now();
      if (!resend) {
        // The counters, not the error, say whether the provider may have
        // seen the request: the kernel may have taken part of it before the
        // reset or the deadline.
        std::string cause = conn->timed_out() ? "request_timeout" : ec.message();
        if (!stream.any_request_byte_sent())
          co_return fail(Failure::write_failed_unsent, false, "write failed before any byte was sent: " + cause);
        co_return fail(Failure::failed_after_send, true,
                       "write failed after " + std::to_string(stream.raw_bytes_sent()) + " bytes: " + cause);
      }
    }

    // Interim responses (1xx), then the final one.
    bool responded = false;    // an interim response came
    bool odd_interim = false;  // ... one other than 100 Continue
    while (!resend) {
      // A fresh parser per message: limits and state never leak between
      // responses (or from an interim 1xx into the final one).
      parser.emplace();
      parser->body_limit(endpoint.max_response_body);
      parser->header_limit(header_limit);
      if (head) parser->skip(true);
      std::tie(ec, std::ignore) = co_await http::async_read(stream, buffer, *parser, as_result);
      // From here on the whole request was accepted by the socket.
      if (ec == http::error::body_limit)
        co_return fail(Failure::response_too_large, true, "response body over max_response_body");
      if (ec == http::error::header_limit) co_return fail(Failure::response_too_large, true, "response header over 64 KiB");
      if (ec == http::error::buffer_overflow)
        co_return fail(Failure::response_too_large, true,
                       "response chunk extension or trailer over " + std::to_string(read_buffer_limit) + " bytes");
      if (ec) {
        resend = !responded && !parser->got_some() && buffer.size() == 0 && may_resend_now();
        if (resend) break;
        std::string cause = conn->timed_out() ? "no complete response within request_timeout" : ec.message();
        co_return fail(Failure::failed_after_send, true, "request sent, then: " + cause);
      }
      const unsigned status = parser->response.status;
      // The gateway never asks for an upgrade (Upgrade is hop-by-hop and
      // dropped), so a switch of protocols is a provider gone wrong: nothing
      // of it is relayed, and the connection is closed.
      if (status == 101)
        co_return fail(Failure::failed_after_send, true, "request sent, then an unrequested 101 Switching Protocols");
      if (status >= 100 && status < 200) {  // interim, e.g. 100 Continue
        responded = true;
        // Only 100 is common; a provider that sends others (102, 103) is one
        // whose framing the gateway trusts less, so its connection is not kept.
        if (status != 100) odd_interim = true;
        continue;
      }

      conn->disarm_deadline();
      // Reuse needs a complete response that ends by framing (not by EOF),
      // keep-alive on both sides, no interim reply but 100, and no unread
      // bytes behind it. Never after a HEAD: its reply announces a body that
      // must not come, and a careless provider that sends it anyway, now or
      // later, would have it read as the next request's reply (maybe another
      // tenant's). Anything else closes: a new connection is cheap, a
      // confused one is not.
      const bool reusable = !head && !odd_interim && parser->is_done() && parser->keep_alive() && !close_after &&
                            buffer.size() == 0 && !conn->timed_out() && conn->is_open();
      if (!reusable) conn->close();
      Exchanged out;
      out.result.response = std::move(parser->response);
      out.result.request_bytes_sent = true;
      if (reusable) out.reusable = std::move(conn);
      co_return out;
    }

    // The resend: once, on a new connection.
    may_resend = false;
    sent_before = stream.any_request_byte_sent();
    conn->disarm_deadline();
    conn->close();
    conn = conn->fresh();
    auto [failure, detail] = co_await connect(*conn, endpoint);
    if (failure != Failure::none) co_return fail(failure, false, "after a kept-alive connection failed: " + detail);
  }
}

}  // namespace gw::upstream::detail
