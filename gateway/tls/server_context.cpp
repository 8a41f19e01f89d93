// TLS server context construction (see tls_context.hpp).
#include "tls/server_context.hpp"

#include <boost/asio/ssl/context.hpp>

#include <openssl/bio.h>
#include <openssl/bn.h>
#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>

#include <fstream>

namespace gw::tls {

namespace {

namespace ssl = boost::asio::ssl;

template <class T, void (*Free)(T*)>
struct Deleter {
  void operator()(T* p) const { Free(p); }
};
using Bio = std::unique_ptr<BIO, Deleter<BIO, BIO_free_all>>;
using Key = std::unique_ptr<EVP_PKEY, Deleter<EVP_PKEY, EVP_PKEY_free>>;
using Bignum = std::unique_ptr<BIGNUM, Deleter<BIGNUM, BN_free>>;

// The reason of OpenSSL's latest error, and a clean queue for the next call.
std::string openssl_error() {
  const char* reason = ERR_reason_error_string(ERR_peek_last_error());
  ERR_clear_error();
  return reason ? reason : "unknown OpenSSL error";
}

// Never asks for a passphrase (OpenSSL's default would prompt on the
// terminal): an encrypted key fails to load instead.
int no_passphrase(char*, int, int, void*) { return 0; }

std::string memory_text(BIO* bio) {
  char* data = nullptr;
  const long n = BIO_get_mem_data(bio, &data);
  return n > 0 ? std::string(data, static_cast<std::size_t>(n)) : std::string();
}

std::string describe(X509* cert) {
  Bio subject(BIO_new(BIO_s_mem()));
  X509_NAME_print_ex(subject.get(), X509_get_subject_name(cert), 0, XN_FLAG_RFC2253);
  Bio expiry(BIO_new(BIO_s_mem()));
  ASN1_TIME_print(expiry.get(), X509_get0_notAfter(cert));
  std::string serial = "?";
  if (Bignum bn{ASN1_INTEGER_to_BN(X509_get0_serialNumber(cert), nullptr)}) {
    char* hex = BN_bn2hex(bn.get());
    serial = hex;
    OPENSSL_free(hex);
  }
  return "subject " + memory_text(subject.get()) + ", serial " + serial + ", expires " + memory_text(expiry.get());
}

}  // namespace

TlsContextResult make_server_tls_context(const TlsFiles& files) {
  TlsContextResult r;
  auto fail = [&r](const char* field, std::string why) {
    r.field = field;
    r.error = std::move(why);
    r.context.reset();
    return r;
  };
  for (auto [field, path] : {std::pair{"cert_file", &files.cert_file}, {"key_file", &files.key_file}})
    if (!std::ifstream(*path)) return fail(field, "cannot read " + *path);
  if (files.client_ca_file && !std::ifstream(*files.client_ca_file))
    return fail("client_ca_file", "cannot read " + *files.client_ca_file);

  ERR_clear_error();
  r.context = std::make_shared<ssl::context>(ssl::context::tls_server);
  SSL_CTX* native = r.context->native_handle();
  // Renegotiation (TLS 1.2) lets a client restart the costly handshake at
  // will inside one connection; compression leaks secrets (CRIME).
  SSL_CTX_set_options(native, SSL_OP_NO_RENEGOTIATION | SSL_OP_NO_COMPRESSION | SSL_OP_CIPHER_SERVER_PREFERENCE);
  if (SSL_CTX_set_min_proto_version(native, files.min_version == TlsVersion::v1_3 ? TLS1_3_VERSION
                                                                                   : TLS1_2_VERSION) != 1)
    return fail("min_version", "cannot set the minimum TLS version: " + openssl_error());

  boost::system::error_code ec;
  r.context->use_certificate_chain_file(files.cert_file, ec);
  if (ec) return fail("cert_file", "not a PEM certificate chain (" + files.cert_file + "): " + ec.message());
  X509* leaf = SSL_CTX_get0_certificate(native);
  if (!leaf) return fail("cert_file", "holds no certificate: " + files.cert_file);

  Key key;
  if (Bio in{BIO_new_file(files.key_file.c_str(), "r")})
    key.reset(PEM_read_bio_PrivateKey(in.get(), nullptr, no_passphrase, nullptr));
  if (!key)
    return fail("key_file", "not an unencrypted PEM private key (" + files.key_file + "): " + openssl_error());
  if (X509_check_private_key(leaf, key.get()) != 1) {
    ERR_clear_error();
    return fail("key_file", "does not match the certificate in cert_file (" + files.key_file + ")");
  }
  if (SSL_CTX_use_PrivateKey(native, key.get()) != 1 || SSL_CTX_check_private_key(native) != 1)
    return fail("key_file", "cannot use the key in " + files.key_file + ": " + openssl_error());

  if (files.client_ca_file) {
    const auto& ca = *files.client_ca_file;
    r.context->load_verify_file(ca, ec);
    if (ec) return fail("client_ca_file", "not a PEM certificate bundle (" + ca + "): " + ec.message());
    // The names sent in the CertificateRequest, so a client with several
    // certificates picks one that this CA issued.
    STACK_OF(X509_NAME)* names = SSL_load_client_CA_file(ca.c_str());
    if (!names) return fail("client_ca_file", "holds no certificate: " + ca);
    SSL_CTX_set_client_CA_list(native, names);
    r.context->set_verify_mode(ssl::verify_peer | ssl::verify_fail_if_no_peer_cert, ec);
    if (ec) return fail("client_ca_file", "cannot require client certificates: " + ec.message());
  }
  // Resumed sessions must stay within this context's verification; OpenSSL
  // refuses resumption under verify_peer without an id context.
  static constexpr unsigned char session_context[] = "write-gateway";
  SSL_CTX_set_session_id_context(native, session_context, sizeof session_context - 1);
  r.certificate = describe(leaf);
  ERR_clear_error();
  return r;
}

}  // namespace gw::tls
