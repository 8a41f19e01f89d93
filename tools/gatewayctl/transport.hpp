// One HTTP exchange with the gateway, as the rest of gatewayctl sees it: a
// narrow interface, so everything above the socket is tested with a fake
// (tests/gatewayctl) and only http_transport.cpp knows Beast.
#pragma once

#include <optional>
#include <stdexcept>
#include <string>

namespace gwctl {

struct HttpRequest {
  std::string method;               // GET or POST
  std::string target;               // origin-form, already percent-encoded
  std::optional<std::string> body;  // JSON; sent with Content-Type: application/json
};

struct HttpReply {
  unsigned status = 0;
  std::string content_type;
  std::string gateway_status;  // the Gateway-Status header, "" when absent
  std::string request_id;      // the X-Request-Id header, "" when absent
  std::string body;
};

// No usable HTTP reply. `kind` is what the operator is told first:
// "unreachable" (name, connect, or the connection lost), "timeout", or
// "bad_reply" (the bytes were not an HTTP reply, or too large).
class TransportError : public std::runtime_error {
 public:
  TransportError(std::string kind, const std::string& detail) : std::runtime_error(detail), kind_(std::move(kind)) {}
  const std::string& kind() const { return kind_; }

 private:
  std::string kind_;
};

class Transport {
 public:
  virtual ~Transport() = default;
  // The reply, whatever its status; throws TransportError when there is none.
  virtual HttpReply exchange(const HttpRequest& request) = 0;
};

}  // namespace gwctl
