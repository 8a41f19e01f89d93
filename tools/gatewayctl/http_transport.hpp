// The real Transport: one HTTP/1.1 exchange per call over a new TCP
// connection (http:// only), with one deadline from name lookup to the
// reply's last byte. The only place in gatewayctl that knows Asio and Beast.
#pragma once

#include "gatewayctl/cli.hpp"
#include "gatewayctl/transport.hpp"

#include <chrono>
#include <string>

namespace gwctl {

class HttpTransport : public Transport {
 public:
  HttpTransport(Endpoint endpoint, std::string token, std::chrono::milliseconds timeout);
  HttpReply exchange(const HttpRequest& request) override;

 private:
  Endpoint endpoint_;
  std::string token_;
  std::chrono::milliseconds timeout_;
};

}  // namespace gwctl
