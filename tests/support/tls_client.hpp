// A small synchronous HTTPS client for the listener's TLS tests: Beast over
// asio::ssl, trusting one CA file and verifying the name "localhost" (also
// sent as SNI), optionally with a client certificate or a capped protocol
// version. Keep-alive on one connection. Failures are returned, not thrown:
// many of these tests expect one.
#pragma once

#include "support/http_client.hpp"
#include "support/tls_certs.hpp"

#include <boost/system/error_code.hpp>

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

namespace gw::test {

struct TlsClientOptions {
  std::string ca_file;                   // the only CA trusted
  std::optional<CertFiles> certificate;  // presented when the server asks for one
  int max_version = 0;                   // e.g. TLS1_1_VERSION; 0: OpenSSL's newest
  std::chrono::milliseconds timeout{10000};
};

// How an exchange ended: a whole reply, or the first error.
struct TlsResult {
  std::optional<Reply> reply;
  boost::system::error_code error;
  bool in_handshake = false;  // the error came from the handshake itself
  std::string describe() const;
};

class TlsConnection {
 public:
  // Connects and does the handshake; a failure is kept for the first request.
  TlsConnection(std::uint16_t port, TlsClientOptions options);
  ~TlsConnection();
  TlsConnection(const TlsConnection&) = delete;
  TlsConnection& operator=(const TlsConnection&) = delete;

  // On this connection (never a new one). After any failure every later
  // request fails with the same error. Throws UnexpectedBytes when bytes
  // follow the reply (a second reply to one request): never expected.
  TlsResult request(const std::string& method, const std::string& target, const Headers& headers = {},
                    const std::string& body = {});
  // Reads until the server ends the connection (or the timeout passes):
  // asio::error::eof when it sent close_notify first,
  // asio::ssl::error::stream_truncated when it just closed the socket.
  boost::system::error_code wait_for_close();
  // The server certificate's serial and issuer ("/CN=Test CA a"); 0 and ""
  // before a handshake succeeded.
  std::uint64_t peer_serial() const;
  std::string peer_issuer() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// One request on a new connection.
TlsResult https_request(std::uint16_t port, const TlsClientOptions& options, const std::string& method,
                        const std::string& target, const Headers& headers = {}, const std::string& body = {});

}  // namespace gw::test
