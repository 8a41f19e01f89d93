// A whole gateway in one object: config in, a listening server out. Used by
// main.cpp and by the integration tests, so both run the same wiring.
#pragma once

#include "config/config.hpp"

#include <chrono>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace gw {

struct RuntimeOptions {
  bool manual_clock = false;  // spec section 6: only when explicitly asked for
  // How long start() keeps retrying migrations while the database is away.
  std::chrono::milliseconds database_wait{30000};
};

// SIGINT or SIGTERM arrived while start() or migrate_only() waited for the
// database: nothing was started.
struct StoppedBeforeStart : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// What a TLS reload did: `ok`, or why the old files stay in use.
struct TlsReload {
  bool ok = false;
  std::string error;
};

class Runtime {
 public:
  Runtime(Config config, RuntimeOptions options);
  ~Runtime();
  Runtime(const Runtime&) = delete;
  Runtime& operator=(const Runtime&) = delete;

  // Applies migrations, starts workers and I/O threads, listens; returns the
  // bound port. Throws if the database stays unreachable or the port is taken.
  // Between tries to reach the database it waits for SIGINT or SIGTERM (which
  // main.cpp blocks in every thread, so they queue): one ends the wait with
  // StoppedBeforeStart instead of leaving the operator's stop unanswered.
  std::uint16_t start();
  // Reads listen.tls's files again (same paths) and serves new connections
  // with them; open connections keep what they started with. On any
  // failure the running context stays and the reason is returned (and
  // logged). main.cpp calls it on SIGHUP.
  TlsReload reload_tls();
  // Serves the agent and operator tokens and the providers' credentials and
  // limits of `config` from now on (SIGHUP, after config/reload.hpp found
  // nothing else changed), and logs config_reloaded with `changed` (field
  // paths, config/reload.hpp reloaded_fields_changed). Connections, upstream
  // pools and requests in progress are untouched: each request keeps the
  // tokens and provider settings it started with.
  void reload(const Config& config, const std::vector<std::string>& changed);
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
