// One upstream connection: how it is opened (DNS, TCP, TLS within one
// deadline), how an idle one is checked before reuse, and the deadline timer
// its exchanges run under. Lives on the io_context it was opened on, and is
// only touched from that io_context's thread.
#pragma once

#include "upstream/asio_types.hpp"
#include "upstream/client.hpp"
#include "upstream/transport.hpp"

#include "deadline.hpp"

#include <functional>
#include <memory>
#include <string>

namespace gw::upstream::detail {

class connection : public std::enable_shared_from_this<connection> {
 public:
  // Failure::none on success; otherwise connect_failed or tls_failed.
  using connect_handler = std::function<void(Failure, std::string detail)>;

  // `tls` null means plain TCP.
  connection(const io_executor& executor, std::shared_ptr<net::ssl::context> tls);
  connection(const connection&) = delete;
  connection& operator=(const connection&) = delete;

  // Resolves, connects and handshakes within endpoint.connect_timeout. The
  // deadline completes `done` itself, so a DNS lookup stuck in getaddrinfo
  // cannot hold the caller past it. Completes on the io_context, never inline.
  void connect(const Endpoint& endpoint, connect_handler done);

  // For an idle pooled connection: true when it must not be reused because
  // the peer closed it (EOF), reset it, or sent bytes nobody asked for.
  // Non-blocking; looks at the TCP socket even under TLS.
  bool peer_closed();

  // On expiry the socket is closed, so pending I/O completes with an error
  // and reports, itself, how many bytes it moved: an exchange's result is
  // decided by its I/O handlers, never by the timer, because a write the
  // kernel has accepted may not have reported its bytes yet.
  void arm_deadline(std::chrono::milliseconds timeout);
  void disarm_deadline();
  bool timed_out() const { return timed_out_; }

  bool is_open() { return transport_.socket().is_open(); }
  void close();
  // A new, unopened connection on the same io_context with the same TLS settings.
  std::shared_ptr<connection> fresh() const;
  transport& stream() { return transport_; }

 private:
  enum class stage { resolving, connecting, handshaking };

  void on_deadline();
  void on_resolved(error_code ec, const resolver_type::results_type& results);
  void on_connected(error_code ec);
  void on_handshake(error_code ec);
  void finish_connect(Failure failure, std::string detail);

  io_executor executor_;
  std::shared_ptr<net::ssl::context> tls_context_;  // outlives transport_'s SSL stream
  transport transport_;
  resolver_type resolver_;
  Deadline deadline_;
  bool timed_out_ = false;
  connect_handler connecting_;  // set while connect() is in progress
  stage stage_ = stage::resolving;
  std::string host_, port_;
};

}  // namespace gw::upstream::detail
