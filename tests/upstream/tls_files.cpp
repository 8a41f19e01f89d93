// Self-signed certificate generation (see tls_files.hpp).
#include "tls_files.hpp"

#include <cstdlib>
#include <filesystem>
#include <stdexcept>

namespace gw::upstream::test {
namespace {

struct TempDir {
  std::filesystem::path path;
  TempDir() {
    std::string pattern = (std::filesystem::temp_directory_path() / "gw-upstream-tls-XXXXXX").string();
    if (!::mkdtemp(pattern.data())) throw std::runtime_error("mkdtemp failed");
    path = pattern;
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path, ec);
  }
};

}  // namespace

const TlsFiles& TlsFiles::get() {
  static TempDir dir;
  static TlsFiles files = [] {
    TlsFiles f{(dir.path / "cert.pem").string(), (dir.path / "key.pem").string()};
    std::string command =
        "openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 2"
        " -subj /CN=localhost -addext subjectAltName=DNS:localhost"
        " -keyout '" + f.key + "' -out '" + f.cert + "' >/dev/null 2>&1";
    if (std::system(command.c_str()) != 0) throw std::runtime_error("openssl could not make a certificate");
    return f;
  }();
  return files;
}

}  // namespace gw::upstream::test
