// Test certificates from the openssl CLI (see tls_certs.hpp).
#include "support/tls_certs.hpp"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <stdexcept>
#include <string_view>

namespace gw::test {

namespace {

// Runs one openssl command; its output is kept only for the error message.
void openssl(const std::string& dir, const std::string& args) {
  const std::string log = dir + "/openssl.log";
  const std::string command = "openssl " + args + " >'" + log + "' 2>&1";
  if (std::system(command.c_str()) != 0) {
    std::ifstream in(log);
    std::string output((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    throw std::runtime_error("openssl failed: " + command + "\n" + output);
  }
}

const char* const new_key = "-newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 2";

// One string from its parts, appended in place: a long chain of operator+
// trips GCC 12's -Warray-bounds false positive at -O3.
std::string joined(std::initializer_list<std::string_view> parts) {
  std::string out;
  for (auto part : parts) out += part;
  return out;
}

}  // namespace

CertDir::CertDir() {
  auto pattern = (std::filesystem::temp_directory_path() / "gw-tls-XXXXXX").string();
  if (!::mkdtemp(pattern.data())) throw std::runtime_error("mkdtemp failed");
  path_ = pattern;
}

CertDir::~CertDir() {
  std::error_code ignored;
  std::filesystem::remove_all(path_, ignored);
}

CertFiles CertDir::ca(const std::string& name) const {
  CertFiles f{path_ + "/" + name + ".pem", path_ + "/" + name + ".key"};
  openssl(path_, joined({"req -x509 ", new_key, " -subj '/CN=Test CA ", name, "' -keyout '", f.key, "' -out '",
                          f.cert, "'"}));
  return f;
}

CertFiles CertDir::issue(const CertFiles& issuer, const std::string& name, std::uint32_t serial,
                         bool server) const {
  CertFiles f{path_ + "/" + name + ".pem", path_ + "/" + name + ".key"};
  const std::string role =
      server ? " -subj /CN=localhost -addext subjectAltName=DNS:localhost -addext extendedKeyUsage=serverAuth"
             : joined({" -subj '/CN=", name, "' -addext extendedKeyUsage=clientAuth"});
  openssl(path_, joined({"req -x509 ", new_key, role, " -addext basicConstraints=critical,CA:FALSE -set_serial ",
                         std::to_string(serial), " -CA '", issuer.cert, "' -CAkey '", issuer.key, "' -keyout '", f.key,
                         "' -out '", f.cert, "'"}));
  return f;
}

std::string CertDir::write(const std::string& name, const std::string& text) const {
  auto file = path_ + "/" + name;
  std::ofstream out(file, std::ios::binary | std::ios::trunc);
  out << text;
  if (!out) throw std::runtime_error("cannot write " + file);
  return file;
}

std::string CertDir::copy(const std::string& from, const std::string& name) const {
  auto file = path_ + "/" + name;
  std::filesystem::copy_file(from, file, std::filesystem::copy_options::overwrite_existing);
  return file;
}

}  // namespace gw::test
