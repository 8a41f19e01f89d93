// The HTTP exchange on one connection (see exchange.hpp). The only Beast
// translation unit of the client.
#include "upstream/exchange.hpp"

#include "upstream/connection.hpp"
#include "upstream/request_rules.hpp"

#include <boost/asio/write.hpp>
#include <boost/beast/core/buffers_suffix.hpp>
#include <boost/beast/core/buffer_traits.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/string_body.hpp>

#include <array>
#include <optional>
#include <string>

namespace gw::upstream::detail {
namespace {

namespace beast = boost::beast;
namespace http = boost::beast::http;

constexpr std::uint32_t header_limit = 64 * 1024;

class exchange : public std::enable_shared_from_this<exchange> {
 public:
  exchange(std::shared_ptr<connection> conn, Request request, const Endpoint& endpoint, exchange_handler done)
      : conn_(std::move(conn)),
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
    if (ec && ec != net::error::would_block) return on_write(ec);
    if (beast::buffer_bytes(rest) == 0) return on_write({});
    net::async_write(stream, rest, [self = shared_from_this()](error_code ec, std::size_t) { self->on_write(ec); });
  }

 private:
  void on_write(error_code ec) {
    if (ec) {
      // The counters, not the error, say whether the provider may have
      // seen the request: the kernel may have taken part of it before the
      // reset or the deadline.
      auto& stream = conn_->stream();
      std::string cause = conn_->timed_out() ? "request_timeout" : ec.message();
      if (!stream.any_request_byte_sent())
        return fail(Failure::write_failed_unsent, false, "write failed before any byte was sent: " + cause);
      return fail(Failure::failed_after_send, true,
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
      return fail(Failure::response_too_large, true, "response body over max_response_body");
    if (ec == http::error::header_limit)
      return fail(Failure::response_too_large, true, "response header over 64 KiB");
    if (ec) {
      std::string cause = conn_->timed_out() ? "no complete response within request_timeout" : ec.message();
      return fail(Failure::failed_after_send, true, "request sent, then: " + cause);
    }

    auto& reply = parser_->get();
    const unsigned status = reply.result_int();
    if (status >= 100 && status < 200 && status != 101) return read_response();  // interim, e.g. 100 Continue

    conn_->disarm_deadline();
    // Reuse needs a complete response that ends by framing (not by EOF),
    // keep-alive on both sides, no unread bytes behind it, and no protocol
    // switch. Anything else closes: a new connection is cheap, a confused
    // one is not.
    const bool reusable = parser_->is_done() && parser_->keep_alive() && !close_after_ &&
                          buffer_.size() == 0 && status != 101 && !conn_->timed_out() && conn_->is_open();
    if (!reusable) conn_->close();

    Response response;
    response.status = status;
    for (const auto& field : reply)
      response.headers.push_back({std::string(field.name_string()), std::string(field.value())});
    response.body = std::move(reply.body());

    Result result;
    result.response = std::move(response);
    result.request_bytes_sent = true;
    auto done = std::move(done_);
    done(std::move(result), reusable);
  }

  void fail(Failure failure, bool sent, std::string detail) {
    conn_->disarm_deadline();
    conn_->close();
    Result result;
    result.failure = failure;
    result.request_bytes_sent = sent;
    result.detail = std::move(detail);
    auto done = std::move(done_);
    done(std::move(result), false);
  }

  std::shared_ptr<connection> conn_;
  bool head_;
  std::size_t body_limit_;
  std::chrono::milliseconds timeout_;
  bool close_after_;        // the request asked for Connection: close
  std::string head_bytes_;  // request line and fields, as written
  std::string body_;
  beast::flat_buffer buffer_;
  std::optional<http::response_parser<http::string_body>> parser_;
  exchange_handler done_;
};

}  // namespace

void run_exchange(std::shared_ptr<connection> conn, Request request, const Endpoint& endpoint,
                  exchange_handler done) {
  std::make_shared<exchange>(std::move(conn), std::move(request), endpoint, std::move(done))->start();
}

}  // namespace gw::upstream::detail
