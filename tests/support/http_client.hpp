// A small synchronous HTTP/1.1 client for tests: real sockets, keep-alive,
// and raw bytes for malformed-input tests.
#pragma once

#include <nlohmann/json.hpp>

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace gw::test {

struct Reply {
  unsigned status = 0;
  std::vector<std::pair<std::string, std::string>> headers;
  std::string body;

  std::optional<std::string> header(const std::string& name) const;
  nlohmann::json json() const;
  // The Gateway-Status header ("" when absent).
  std::string code() const;
};

using Headers = std::vector<std::pair<std::string, std::string>>;

class HttpClient {
 public:
  explicit HttpClient(std::uint16_t port, std::chrono::milliseconds timeout = std::chrono::seconds(30));
  ~HttpClient();
  HttpClient(HttpClient&&) noexcept;

  Reply request(const std::string& method, const std::string& target, const Headers& headers = {},
                const std::string& body = {});
  Reply post_json(const std::string& target, const nlohmann::json& body, const std::string& token);
  Reply get(const std::string& target, const std::string& token);

  // Sends bytes as they are on a new connection; returns everything the
  // server sent until it closed or the timeout passed.
  std::string raw(const std::string& bytes);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace gw::test
