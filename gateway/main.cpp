// write-gateway: wiring only. Loads the config, starts the runtime, waits
// for SIGINT/SIGTERM and stops gracefully; SIGHUP reads the config file again
// for its tokens and the providers' credentials and limits
// (config/reload.hpp), and reloads the TLS files.
#include "config/config.hpp"
#include "config/reload.hpp"
#include "service/ops/event_log.hpp"
#include "service/runtime/runtime.hpp"

#include <algorithm>
#include <csignal>
#include <cstdint>
#include <cstring>
#include <iostream>

#include <sys/resource.h>

namespace {

int usage() {
  std::cerr << "usage: write-gateway --config FILE [--manual-clock] [--migrate-only]\n"
               "  --manual-clock  authority time is set only by POST /v1/admin/clock (tests)\n"
               "  --migrate-only  apply schema migrations and exit\n";
  return 2;
}

// Every inbound, database and provider connection is a descriptor, and the
// usual soft limit (1024) is far below http.max_connections: take the hard
// limit, and say so when even that is short (accept then backs off on EMFILE).
void raise_open_file_limit(const gw::Config& config) {
  rlimit limit{};
  if (getrlimit(RLIMIT_NOFILE, &limit) != 0) return;
  if (limit.rlim_cur < limit.rlim_max) {
    limit.rlim_cur = limit.rlim_max;
    if (setrlimit(RLIMIT_NOFILE, &limit) != 0) getrlimit(RLIMIT_NOFILE, &limit);
  }
  std::uint64_t needed = config.http.max_connections + config.database.pool_size +
                         std::uint64_t{config.http.io_threads} * config.database.direct_connections + 64;
  for (const auto& p : config.providers) needed += p.max_connections;
  if (limit.rlim_cur != RLIM_INFINITY && limit.rlim_cur < needed)
    std::cerr << "warning: the open-file limit (" << limit.rlim_cur << ") is below the " << needed
              << " descriptors this config may use (http.max_connections + database.pool_size + http.io_threads x "
                 "database.direct_connections + each provider's max_connections + 64); past it the listener backs off until a connection closes"
              << std::endl;
}

// Long enough for forwards in progress to finish: the longest provider
// deadline, plus a margin.
std::chrono::milliseconds drain_for(const gw::Config& config) {
  auto drain = std::chrono::milliseconds(2000);
  for (const auto& p : config.providers) drain = std::max(drain, p.request_timeout + std::chrono::milliseconds(2000));
  return drain;
}

// "tokens: 2 agents, 1 operators; providers: booking, crm"
std::string reloaded_summary(const gw::Config& config) {
  std::string out = "tokens: ";
  out += std::to_string(config.agents.size());
  out += " agents, ";
  out += std::to_string(config.operators.size());
  out += " operators; providers: ";
  if (config.providers.empty()) out += "none";
  for (std::size_t i = 0; i < config.providers.size(); ++i) {
    if (i > 0) out += ", ";
    out += config.providers[i].name;
  }
  return out;
}

// SIGHUP: a config that fails validation, or changes more than what a reload
// may change, is refused whole: the running one stays, and the line says why
// (the field, as at start). `file` becomes the new one when it is taken.
void reload_config(const std::string& config_path, gw::ConfigFile& file, gw::Runtime& runtime,
                   std::chrono::milliseconds& drain) {
  try {
    auto next = gw::read_config_file(config_path);
    if (auto changed = gw::fixed_field_changed(file.text, next.text)) {
      std::cout << "write-gateway config reload refused, still serving the previous config: " << *changed
                << " changed; only agents, operators and providers' credentials and limits are reloaded, "
                   "restart for the rest"
                << std::endl;
      gw::log_event(gw::LogLevel::warn, "config_reload_refused", {{"field", *changed}});
      return;
    }
    const auto changed = gw::reloaded_fields_changed(file.config, next.config);
    runtime.reload(next.config, changed);
    // Forwards started under the old timeouts may still be running at a stop.
    drain = std::max(drain, drain_for(next.config));
    std::cout << "write-gateway reloaded its config (" << reloaded_summary(next.config) << ")" << std::endl;
    file = std::move(next);
  } catch (const gw::ConfigError& e) {
    std::cout << "write-gateway config reload failed, still serving the previous config: " << e.what() << std::endl;
    gw::log_event(gw::LogLevel::warn, "config_reload_failed", {{"error", e.what()}});
  }
}

}  // namespace

int main(int argc, char** argv) {
  std::string config_path;
  gw::RuntimeOptions options;
  bool migrate_only = false;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--config" && i + 1 < argc) config_path = argv[++i];
    else if (arg == "--manual-clock") options.manual_clock = true;
    else if (arg == "--migrate-only") migrate_only = true;
    else return usage();
  }
  if (config_path.empty()) return usage();

  // Block the handled signals before any thread starts so only sigwait sees
  // them; a peer closing a socket must not kill the process either.
  std::signal(SIGPIPE, SIG_IGN);
  sigset_t handled;
  sigemptyset(&handled);
  sigaddset(&handled, SIGINT);
  sigaddset(&handled, SIGTERM);
  sigaddset(&handled, SIGHUP);
  pthread_sigmask(SIG_BLOCK, &handled, nullptr);

  try {
    auto file = gw::read_config_file(config_path);
    auto& config = file.config;
    raise_open_file_limit(config);
    if (migrate_only) options.database_wait = std::chrono::milliseconds(5000);
    gw::Runtime runtime(config, options);
    if (migrate_only) {
      runtime.migrate_only();
      std::cout << "migrations applied" << std::endl;
      return 0;
    }
    auto drain = drain_for(config);
    auto port = runtime.start();
    std::cout << "write-gateway listening on port " << port
              << (options.manual_clock ? " (manual clock)" : "") << std::endl;
    int signal = 0;
    for (;;) {
      sigwait(&handled, &signal);
      if (signal != SIGHUP) break;
      reload_config(config_path, file, runtime, drain);
      // A failed reload keeps the running certificate: never stop serving over it.
      auto reload = runtime.reload_tls();
      if (reload.ok)
        std::cout << "write-gateway reloaded its TLS files" << std::endl;
      else
        std::cout << "write-gateway TLS reload failed, still serving the previous files: " << reload.error << std::endl;
    }
    std::cout << "write-gateway stopping (" << strsignal(signal) << ")" << std::endl;
    runtime.stop(drain);
    return 0;
  } catch (const gw::StoppedBeforeStart& e) {
    // The operator's stop, answered: nothing was serving yet.
    std::cout << "write-gateway " << e.what() << std::endl;
    return 0;
  } catch (const gw::ConfigError& e) {
    std::cerr << "config error: " << e.what() << std::endl;
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "write-gateway: " << e.what() << std::endl;
    return 1;
  }
}
