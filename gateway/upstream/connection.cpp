// Opening, checking and closing one upstream connection (see connection.hpp).
#include "upstream/connection.hpp"

#include <boost/asio/connect.hpp>
#include <boost/asio/ip/address.hpp>
#include <boost/asio/ssl/host_name_verification.hpp>

#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <sys/socket.h>

#include <cerrno>

namespace gw::upstream::detail {

Connection::Connection(const IoExecutor& executor, std::shared_ptr<net::ssl::context> tls)
    : executor_(executor),
      tls_context_(std::move(tls)),
      transport_(executor, tls_context_.get()),
      resolver_(executor),
      // The connection outlives the deadline (a member), which never calls
      // back once destroyed.
      deadline_(executor, [this] { on_deadline(); }) {}

void Connection::connect(const Endpoint& endpoint, ConnectHandler done) {
  connecting_ = std::move(done);
  host_ = endpoint.host;
  port_ = endpoint.port;
  stage_ = Stage::resolving;
  arm_deadline(endpoint.connect_timeout);
  resolver_.async_resolve(host_, port_,
                          [self = shared_from_this()](error_code ec, Resolver::results_type results) {
                            self->on_resolved(ec, results);
                          });
}

void Connection::on_resolved(error_code ec, const Resolver::results_type& results) {
  if (!connecting_) return;  // the deadline already answered
  if (ec) return finish_connect(Failure::connect_failed, "cannot resolve " + host_ + ": " + ec.message());
  stage_ = Stage::connecting;
  net::async_connect(transport_.socket(), results,
                     [self = shared_from_this()](error_code ec, const net::ip::tcp::endpoint&) {
                       self->on_connected(ec);
                     });
}

void Connection::on_connected(error_code ec) {
  if (!connecting_) return;
  if (ec) {
    return finish_connect(Failure::connect_failed,
                          "cannot connect to " + host_ + ":" + port_ + ": " + ec.message());
  }
  // Requests are small and latency-bound; Nagle would hold a body segment
  // back waiting for the ACK of the headers.
  transport_.socket().set_option(net::ip::tcp::no_delay(true), ec);
  auto* tls = transport_.tls();
  if (!tls) return finish_connect(Failure::none, {});

  stage_ = Stage::handshaking;
  error_code not_an_address;
  net::ip::make_address(host_, not_an_address);
  // SNI carries names only (RFC 6066); an IP literal is verified against the
  // certificate's IP SANs instead.
  if (not_an_address && SSL_set_tlsext_host_name(tls->native_handle(), host_.c_str()) != 1)
    return finish_connect(Failure::tls_failed, "cannot set TLS server name " + host_);
  tls->set_verify_mode(net::ssl::verify_peer, ec);
  if (!ec) tls->set_verify_callback(net::ssl::host_name_verification(host_), ec);
  if (ec) return finish_connect(Failure::tls_failed, "cannot set up TLS verification: " + ec.message());
  tls->async_handshake(net::ssl::stream_base::client,
                       [self = shared_from_this()](error_code ec) { self->on_handshake(ec); });
}

void Connection::on_handshake(error_code ec) {
  if (!connecting_) return;
  if (!ec) return finish_connect(Failure::none, {});
  std::string detail = "TLS handshake with " + host_ + ":" + port_ + " failed: " + ec.message();
  long verify = SSL_get_verify_result(transport_.tls()->native_handle());
  if (verify != X509_V_OK) detail += std::string(" (") + X509_verify_cert_error_string(verify) + ")";
  finish_connect(Failure::tls_failed, std::move(detail));
}

void Connection::finish_connect(Failure failure, std::string detail) {
  auto done = std::move(connecting_);
  connecting_ = nullptr;
  disarm_deadline();
  if (failure != Failure::none) close();
  done(failure, std::move(detail));
}

void Connection::arm_deadline(std::chrono::milliseconds timeout) {
  timed_out_ = false;
  deadline_.expires_after(timeout);
}

void Connection::disarm_deadline() { deadline_.expires_never(); }

void Connection::on_deadline() {
  timed_out_ = true;
  if (connecting_) {
    const char* what = stage_ == Stage::resolving    ? "resolving "
                       : stage_ == Stage::connecting ? "connecting to "
                                                     : "TLS handshake with ";
    return finish_connect(stage_ == Stage::handshaking ? Failure::tls_failed : Failure::connect_failed,
                          std::string(what) + host_ + ":" + port_ + " timed out (connect_timeout)");
  }
  close();
}

bool Connection::peer_closed() {
  auto& socket = transport_.socket();
  if (!socket.is_open()) return true;
  // Bytes waiting on an idle HTTP/1.1 connection are never good news: a 408,
  // a TLS close_notify, or garbage. Any of them makes it unusable. One
  // non-blocking peek answers it; toggling the socket's blocking mode around
  // a peek cost four more system calls on every reused connection.
  char byte = 0;
  const auto n = ::recv(socket.native_handle(), &byte, 1, MSG_PEEK | MSG_DONTWAIT);
  // EAGAIN is the only answer of a live, quiet connection; EOF (0), a byte,
  // or a reset all mean "do not reuse".
  return !(n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK));
}

std::shared_ptr<Connection> Connection::fresh() const {
  return std::make_shared<Connection>(executor_, tls_context_);
}

void Connection::close() {
  resolver_.cancel();
  error_code ignored;
  transport_.socket().close(ignored);
}

}  // namespace gw::upstream::detail
