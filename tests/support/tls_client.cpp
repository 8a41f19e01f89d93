#include "support/tls_client.hpp"

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl/context.hpp>
#include <boost/asio/ssl/host_name_verification.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl/ssl_stream.hpp>

#include <openssl/ssl.h>
#include <openssl/x509.h>

namespace gw::test {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace bhttp = beast::http;
namespace ssl = asio::ssl;
using tcp = asio::ip::tcp;

std::string TlsResult::describe() const {
  if (reply) return "reply " + std::to_string(reply->status);
  return std::string(in_handshake ? "handshake failed: " : "failed: ") + error.message();
}

namespace {

const std::string server_name = "localhost";

void configure(ssl::context& ctx, const TlsClientOptions& o) {
  ctx.set_verify_mode(ssl::verify_peer);
  ctx.load_verify_file(o.ca_file);
  if (o.certificate) {
    ctx.use_certificate_chain_file(o.certificate->cert);
    ctx.use_private_key_file(o.certificate->key, ssl::context::pem);
  }
  if (o.max_version) {
    SSL_CTX* native = ctx.native_handle();
    SSL_CTX_set_max_proto_version(native, o.max_version);
    // OpenSSL 3 only speaks TLS 1.0 and 1.1 at security level 0.
    if (o.max_version < TLS1_2_VERSION) {
      SSL_CTX_set_min_proto_version(native, TLS1_VERSION);
      SSL_CTX_set_security_level(native, 0);
      SSL_CTX_set_cipher_list(native, "DEFAULT:@SECLEVEL=0");
    }
  }
}

}  // namespace

struct TlsConnection::Impl {
  explicit Impl(const TlsClientOptions& o) : options(o), context(ssl::context::tls_client) {
    configure(context, o);
    stream.emplace(io, context);
  }

  // Runs one asynchronous operation on our own io_context to its end.
  template <class Start>
  beast::error_code run(Start start) {
    std::optional<beast::error_code> result;
    start([&result](beast::error_code ec, auto&&...) { result = ec; });
    io.restart();
    while (!result && io.run_one()) {
    }
    return result.value_or(asio::error::operation_aborted);
  }

  TlsClientOptions options;
  asio::io_context io;
  ssl::context context;
  std::optional<beast::ssl_stream<beast::tcp_stream>> stream;
  beast::flat_buffer buffer;
  beast::error_code failed;
  bool in_handshake = false;
};

TlsConnection::TlsConnection(std::uint16_t port, TlsClientOptions options)
    : impl_(std::make_unique<Impl>(options)) {
  auto& m = *impl_;
  auto& tcp_layer = beast::get_lowest_layer(*m.stream);
  tcp_layer.expires_after(m.options.timeout);
  m.failed = m.run([&](auto done) {
    tcp_layer.async_connect(tcp::endpoint(asio::ip::make_address("127.0.0.1"), port), std::move(done));
  });
  if (m.failed) return;
  SSL_set_tlsext_host_name(m.stream->native_handle(), server_name.c_str());
  m.stream->set_verify_callback(ssl::host_name_verification(server_name));
  m.failed = m.run([&](auto done) { m.stream->async_handshake(ssl::stream_base::client, std::move(done)); });
  m.in_handshake = static_cast<bool>(m.failed);
}

TlsConnection::~TlsConnection() = default;

TlsResult TlsConnection::request(const std::string& method, const std::string& target, const Headers& headers,
                                 const std::string& body) {
  auto& m = *impl_;
  TlsResult out;
  if (m.failed) {
    out.error = m.failed;
    out.in_handshake = m.in_handshake;
    return out;
  }
  bhttp::request<bhttp::string_body> req{bhttp::string_to_verb(method), target, 11};
  req.set(bhttp::field::host, server_name);
  for (const auto& [k, v] : headers) req.insert(k, v);
  req.body() = body;
  if (!body.empty() || method == "POST") req.prepare_payload();
  bhttp::response_parser<bhttp::string_body> parser;
  beast::get_lowest_layer(*m.stream).expires_after(m.options.timeout);
  m.failed = m.run([&](auto done) { bhttp::async_write(*m.stream, req, std::move(done)); });
  if (!m.failed) m.failed = m.run([&](auto done) { bhttp::async_read(*m.stream, m.buffer, parser, std::move(done)); });
  if (m.failed) {
    out.error = m.failed;
    return out;
  }
  // The client never pipelines: bytes read past the reply's end are a
  // second reply or junk, and would be taken as the next request's reply.
  if (m.buffer.size() > 0) {
    const auto extra = beast::buffers_to_string(m.buffer.data());
    m.failed = asio::error::operation_aborted;  // every later request fails too
    throw UnexpectedBytes("TlsConnection: " + std::to_string(extra.size()) + " unexpected byte(s) after the " +
                          std::to_string(parser.get().result_int()) + " reply to " + method + " " + target +
                          ", starting " + quoted_start(extra));
  }
  auto res = parser.release();
  Reply r;
  r.status = res.result_int();
  for (const auto& f : res) r.headers.emplace_back(std::string(f.name_string()), std::string(f.value()));
  r.body = std::move(res.body());
  out.reply = std::move(r);
  return out;
}

boost::system::error_code TlsConnection::wait_for_close() {
  auto& m = *impl_;
  if (m.failed) return m.failed;
  beast::get_lowest_layer(*m.stream).expires_after(m.options.timeout);
  char chunk[256];
  beast::error_code ended;
  while (!ended)
    ended = m.run([&](auto done) { m.stream->async_read_some(asio::buffer(chunk), std::move(done)); });
  m.failed = ended;
  return ended;
}

std::uint64_t TlsConnection::peer_serial() const {
  X509* cert = SSL_get1_peer_certificate(impl_->stream->native_handle());
  std::uint64_t serial = 0;
  if (cert) ASN1_INTEGER_get_uint64(&serial, X509_get0_serialNumber(cert));
  X509_free(cert);
  return serial;
}

std::string TlsConnection::peer_issuer() const {
  X509* cert = SSL_get1_peer_certificate(impl_->stream->native_handle());
  std::string issuer;
  if (cert) {
    char buf[256];
    X509_NAME_oneline(X509_get_issuer_name(cert), buf, sizeof buf);
    issuer = buf;
  }
  X509_free(cert);
  return issuer;
}

TlsResult https_request(std::uint16_t port, const TlsClientOptions& options, const std::string& method,
                        const std::string& target, const Headers& headers, const std::string& body) {
  TlsConnection c(port, options);
  return c.request(method, target, headers, body);
}

}  // namespace gw::test
