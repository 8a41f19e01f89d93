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

class Connection : public std::enable_shared_from_this<Connection> {
 public:
  // Failure::none on success; otherwise connect_failed or tls_failed.
  using ConnectHandler = std::function<void(Failure, std::string detail)>;

  // `tls` null means plain TCP.
  Connection(const IoExecutor& executor, std::shared_ptr<net::ssl::context> tls);
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;

  // Resolves, connects and handshakes within endpoint.connect_timeout. The
  // deadline completes `done` itself, so a DNS lookup stuck in getaddrinfo
  // cannot hold the caller past it. Completes on the io_context, never inline.
  void connect(const Endpoint& endpoint, ConnectHandler done);

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
  std::shared_ptr<Connection> fresh() const;
  Transport& stream() { return transport_; }

 private:
  enum class Stage { resolving, connecting, handshaking };

  void on_deadline();
  void on_resolved(error_code ec, const Resolver::results_type& results);
  void on_connected(error_code ec);
  void on_handshake(error_code ec);
  void finish_connect(Failure failure, std::string detail);

  IoExecutor executor_;
  std::shared_ptr<net::ssl::context> tls_context_;  // outlives transport_'s SSL stream
  Transport transport_;
  Resolver resolver_;
  Deadline deadline_;
  bool timed_out_ = false;
  ConnectHandler connecting_;  // set while connect() is in progress
  Stage stage_ = Stage::resolving;
  std::string host_, port_;
};

}  // namespace gw::upstream::detail
