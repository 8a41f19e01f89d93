// A throwaway self-signed certificate for the TLS tests, made once per run
// with the openssl CLI in a temporary directory (removed at exit). Its only
// name is DNS:localhost, so connecting by IP must fail verification.
#pragma once

#include <string>

namespace gw::upstream::test {

struct TlsFiles {
  std::string cert;  // PEM; also the CA bundle that trusts it
  std::string key;

  static const TlsFiles& get();  // throws when openssl fails
};

}  // namespace gw::upstream::test
