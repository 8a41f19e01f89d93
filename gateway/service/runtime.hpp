// A whole gateway in one object: config in, a listening server out. Used by
// main.cpp and by the integration tests, so both run the same wiring.
#pragma once

#include "config/config.hpp"

#include <chrono>
#include <cstdint>
#include <memory>

namespace gw {

struct RuntimeOptions {
  bool manual_clock = false;  // SPEC section 6: only when explicitly asked for
  // How long start() keeps retrying migrations while the database is away.
  std::chrono::milliseconds database_wait{30000};
};

class Runtime {
 public:
  Runtime(Config config, RuntimeOptions options);
  ~Runtime();
  Runtime(const Runtime&) = delete;
  Runtime& operator=(const Runtime&) = delete;

  // Applies migrations, starts workers and I/O threads, listens; returns the
  // bound port. Throws if the database stays unreachable or the port is taken.
  std::uint16_t start();
  // Applies pending migrations and returns; nothing else is started.
  void migrate_only();
  // Graceful stop: refuse new connections, let requests in progress finish
  // (up to `drain`), then stop the workers and I/O threads.
  void stop(std::chrono::milliseconds drain = std::chrono::milliseconds(10000));

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace gw
