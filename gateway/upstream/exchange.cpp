// The HTTP exchange on one connection (see exchange.hpp). The only Beast
// translation unit of the client.
#include "upstream/exchange.hpp"

#include "upstream/connection.hpp"
#include "upstream/request_rules.hpp"

#include <boost/asio/write.hpp>
#include <boost/beast/core/buffers_suffix.hpp>
#include <boost/beast/core/buffer_traits.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http/basic_parser.hpp>
#include <boost/beast/http/read.hpp>

#include <array>
#include <optional>
#include <string>

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
    response.headers.push_back({std::string(name), std::string(value)});
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

class Exchange : public std::enable_shared_from_this<Exchange> {
 public:
  Exchange(std::shared_ptr<Connection> conn, Request request, const Endpoint& endpoint, ConnectionUse use,
           ExchangeHandler done)
      : conn_(std::move(conn)),
        endpoint_(&endpoint),
        may_resend_(use == ConnectionUse::reused && request.resend_if_stale),
        head_(request.method == "HEAD"),
        body_limit_(endpoint.max_response_body),
        timeout_(endpoint.request_timeout),
        close_after_(asks_close(request.headers)),
        head_bytes_(wire_head(request, endpoint)),
        body_(std::move(request.body)),
        done_(std::move(done)) {}

  void start() {
    auto& stream = conn_->stream();
    stream.start_counting();
    conn_->arm_deadline(timeout_);
    // The head is serialized here (request_rules.hpp), not by Beast: the
    // fields are written as they are, with no second copy into a Beast
    // message; head and body go out in one gathered write. Over plain TCP
    // it is first written on the spot: a request that fits the socket's
    // buffer (nearly all) goes straight on to reading the response, with no
    // completion queued in between.
    const std::array<net::const_buffer, 2> wire{net::buffer(head_bytes_), net::buffer(body_)};
    beast::buffers_suffix<std::array<net::const_buffer, 2>> rest(wire);
    error_code ec;
    rest.consume(stream.write_now(wire, ec));
    if (ec && ec != net::error::would_block) {
      // Through the queue: the caller is never answered from inside start().
      return net::post(stream.get_executor(), [self = shared_from_this(), ec] { self->on_write(ec); });
    }
    if (beast::buffer_bytes(rest) == 0) return on_write({});
    net::async_write(stream, rest, [self = shared_from_this()](error_code ec, std::size_t) { self->on_write(ec); });
  }

 private:
  void on_write(error_code ec) {
    if (ec) {
      if (resend()) return;
      // The counters, not the error, say whether the provider may have
      // seen the request: the kernel may have taken part of it before the
      // reset or the deadline.
      auto& stream = conn_->stream();
      std::string cause = conn_->timed_out() ? "request_timeout" : ec.message();
      if (!stream.any_request_byte_sent())
        return fail(Failure::write_failed_unsent, Sent::no, "write failed before any byte was sent: " + cause);
      return fail(Failure::failed_after_send, Sent::yes,
                  "write failed after " + std::to_string(stream.raw_bytes_sent()) + " bytes: " + cause);
    }
    read_response();
  }

  void read_response() {
    // A fresh parser per message: limits and state never leak between
    // responses (or from an interim 1xx into the final one).
    parser_.emplace();
    parser_->body_limit(body_limit_);
    parser_->header_limit(header_limit);
    if (head_) parser_->skip(true);
    http::async_read(conn_->stream(), buffer_, *parser_,
                     [self = shared_from_this()](error_code ec, std::size_t) { self->on_read(ec); });
  }

  void on_read(error_code ec) {
    // From here on the whole request was accepted by the socket.
    if (ec == http::error::body_limit)
      return fail(Failure::response_too_large, Sent::yes, "response body over max_response_body");
    if (ec == http::error::header_limit)
      return fail(Failure::response_too_large, Sent::yes, "response header over 64 KiB");
    if (ec == http::error::buffer_overflow)
      return fail(Failure::response_too_large, Sent::yes,
                  "response chunk extension or trailer over " + std::to_string(read_buffer_limit) + " bytes");
    if (ec) {
      if (!responded_ && !parser_->got_some() && buffer_.size() == 0 && resend()) return;
      std::string cause = conn_->timed_out() ? "no complete response within request_timeout" : ec.message();
      return fail(Failure::failed_after_send, Sent::yes, "request sent, then: " + cause);
    }

    const unsigned status = parser_->response.status;
    // The gateway never asks for an upgrade (Upgrade is hop-by-hop and
    // dropped), so a switch of protocols is a provider gone wrong: nothing of
    // it is relayed, and the connection is closed.
    if (status == 101)
      return fail(Failure::failed_after_send, Sent::yes, "request sent, then an unrequested 101 Switching Protocols");
    if (status >= 100 && status < 200) {  // interim, e.g. 100 Continue
      responded_ = true;
      // Only 100 is common; a provider that sends others (102, 103) is one
      // whose framing the gateway trusts less, so its connection is not kept.
      if (status != 100) odd_interim_ = true;
      return read_response();
    }

    conn_->disarm_deadline();
    // Reuse needs a complete response that ends by framing (not by EOF),
    // keep-alive on both sides, no interim reply but 100, and no unread bytes behind it. Never after a
    // HEAD: its reply announces a body that must not come, and a careless
    // provider that sends it anyway, now or later, would have it read as the
    // next request's reply (maybe another tenant's). Anything else closes: a
    // new connection is cheap, a confused one is not.
    const bool reusable = !head_ && !odd_interim_ && parser_->is_done() && parser_->keep_alive() && !close_after_ &&
                          buffer_.size() == 0 && !conn_->timed_out() && conn_->is_open();
    if (!reusable) conn_->close();

    Result result;
    result.response = std::move(parser_->response);
    result.request_bytes_sent = true;
    auto done = std::move(done_);
    done(std::move(result), reusable ? conn_ : nullptr);
  }

  // Request::resend_if_stale, on a reused connection that failed before any
  // byte of a response and not by the deadline: sent once more, the same
  // bytes, on a new connection. False when it may not be.
  bool resend() {
    if (!may_resend_ || conn_->timed_out()) return false;
    may_resend_ = false;
    sent_before_ = conn_->stream().any_request_byte_sent();
    conn_->disarm_deadline();
    conn_->close();
    conn_ = conn_->fresh();
    conn_->connect(*endpoint_, [self = shared_from_this()](Failure failure, std::string detail) {
      if (failure != Failure::none) return self->fail(failure, Sent::no, "after a kept-alive connection failed: " + detail);
      self->start();
    });
    return true;
  }

  // `sent`: whether a byte of this request had left (else only an earlier
  // attempt's may have, sent_before_).
  enum class Sent { no, yes };
  void fail(Failure failure, Sent sent, std::string detail) {
    conn_->disarm_deadline();
    conn_->close();
    Result result;
    result.failure = failure;
    result.request_bytes_sent = sent == Sent::yes || sent_before_;
    result.detail = std::move(detail);
    auto done = std::move(done_);
    done(std::move(result), nullptr);
  }

  std::shared_ptr<Connection> conn_;
  const Endpoint* endpoint_;
  bool may_resend_;           // Request::resend_if_stale on a reused connection, not yet spent
  bool sent_before_ = false;  // a byte of the request left on the connection given up for a resend
  bool responded_ = false;    // an interim (1xx) response came
  bool odd_interim_ = false;  // ... one other than 100 Continue
  bool head_;
  std::size_t body_limit_;
  std::chrono::milliseconds timeout_;
  bool close_after_;        // the request asked for Connection: close
  std::string head_bytes_;  // request line and fields, as written
  std::string body_;
  beast::flat_buffer buffer_{read_buffer_limit};
  std::optional<ResponseParser> parser_;
  ExchangeHandler done_;
};

}  // namespace

void run_exchange(std::shared_ptr<Connection> conn, Request request, const Endpoint& endpoint, ConnectionUse use,
                  ExchangeHandler done) {
  std::make_shared<Exchange>(std::move(conn), std::move(request), endpoint, use, std::move(done))->start();
}

}  // namespace gw::upstream::detail
