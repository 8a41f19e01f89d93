// A TCP proxy in front of a real server that can stop forwarding without
// closing anything: the kernel still acknowledges every byte, so the client
// sees a peer that is there and never answers (a stalled pooler or proxy),
// which no TCP timeout detects. Runs on its own I/O thread.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

namespace gw::test {

class StallingProxy {
 public:
  StallingProxy(std::string upstream_host, std::uint16_t upstream_port);
  ~StallingProxy();
  StallingProxy(const StallingProxy&) = delete;
  StallingProxy& operator=(const StallingProxy&) = delete;

  std::uint16_t port() const;
  // Bytes read from then on are held, in both directions and for new
  // connections too, until thaw().
  void freeze();
  void thaw();

  struct State;

 private:
  std::shared_ptr<State> state_;
};

}  // namespace gw::test
