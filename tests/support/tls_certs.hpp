// Throwaway certificates for TLS tests, made with the openssl CLI in a
// temporary directory that is removed with its contents: CAs, server
// certificates for DNS:localhost, client certificates. No Asio here, so
// the pure config tests can use it too.
#pragma once

#include <cstdint>
#include <string>

namespace gw::test {

struct CertFiles {
  std::string cert;  // PEM
  std::string key;   // PEM, unencrypted
};

class CertDir {
 public:
  CertDir();  // throws when mkdtemp fails
  ~CertDir();
  CertDir(const CertDir&) = delete;
  CertDir& operator=(const CertDir&) = delete;

  const std::string& path() const { return path_; }
  // A self-signed CA, CN "Test CA <name>", in <name>.pem and <name>.key.
  CertFiles ca(const std::string& name) const;
  // A certificate signed by `issuer` with the given serial, in <name>.pem
  // and <name>.key: for a server, CN and subjectAltName DNS:localhost; for
  // a client, CN <name>. Throws when openssl fails.
  CertFiles issue(const CertFiles& issuer, const std::string& name, std::uint32_t serial, bool server = true) const;
  // Writes `text` to path()/name, replacing it; returns the file's path.
  std::string write(const std::string& name, const std::string& text) const;
  // Replaces path()/name with a copy of `from`; returns the file's path.
  std::string copy(const std::string& from, const std::string& name) const;

 private:
  std::string path_;
};

}  // namespace gw::test
