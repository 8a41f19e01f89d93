// The listener's TLS server context: the certificate chain and its key,
// optionally the CA that every client certificate must chain to (mutual
// TLS), TLS 1.2 or 1.3 at least, no compression, no renegotiation. Built at
// config load (to refuse bad files early), at start, and on each reload. A
// library of its own (OpenSSL through Asio's ssl::context), so that the
// config depends on it and not on the HTTP server's folder.
#pragma once

#include <memory>
#include <optional>
#include <string>

namespace boost::asio::ssl {
class context;
}

namespace gw::tls {

enum class TlsVersion { v1_2, v1_3 };

struct TlsFiles {
  std::string cert_file;  // PEM: the server certificate first, then its chain
  std::string key_file;   // PEM, not encrypted
  // PEM bundle. Set: a client must present a certificate that chains to it,
  // or its handshake fails.
  std::optional<std::string> client_ca_file;
  TlsVersion min_version = TlsVersion::v1_2;
};

// A ready context, or which member of TlsFiles failed ("cert_file",
// "key_file", "client_ca_file", "min_version") and why.
struct TlsContextResult {
  std::shared_ptr<boost::asio::ssl::context> context;
  std::string field;
  std::string error;
  std::string certificate;  // the leaf's subject, serial and expiry, for the log
};

// Reads every file now; nothing is read again later.
TlsContextResult make_server_tls_context(const TlsFiles& files);

}  // namespace gw::tls
