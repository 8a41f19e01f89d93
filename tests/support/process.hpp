// Child processes for integration tests: the real write-gateway and
// demo-provider binaries, spawned with posix_spawn, their stdout read line by
// line (startup lines name the bound ports), stopped by signal and reaped.
// No Asio or Beast here: plain POSIX. The demo provider's wrapper is in
// provider_process.hpp; the gateway's is GatewayProcess below.
#pragma once

#include "support/http_client.hpp"

#include <nlohmann/json.hpp>

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace gw::test {

// GATEWAY_TEST_BIN_DIR/name; fails the test run when the variable is unset.
std::string test_binary(const std::string& name);

// SIGABRT kills every child still running (ChildProcess) before the test
// binary dies: an orphaned provider would keep ctest's output pipe open, and
// ctest would wait for it forever. Installed when the binary starts; a test
// calls it again to take the handler back from doctest's.
void kill_children_on_abort();

// A port nothing listens on right now (bound to 127.0.0.1:0, then closed).
std::uint16_t free_tcp_port();

// A blocking TCP socket connected to 127.0.0.1:port (the caller closes it);
// throws when the connect fails.
int connect_loopback(std::uint16_t port);

// A fresh directory under the system temp dir, removed with its contents.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  const std::string& path() const { return path_; }
  // Writes `text` to path()/name and returns the file's path.
  std::string write(const std::string& name, const std::string& text) const;

 private:
  std::string path_;
};

class ChildProcess {
 public:
  struct Options {
    std::string program;            // absolute path
    std::vector<std::string> args;  // without argv[0]
    // Set in the child's environment, on top of (or replacing) ours.
    std::vector<std::pair<std::string, std::string>> env;
    // Non-empty: the child's stderr goes to this file instead of ours.
    std::string stderr_file{};
  };

  // Spawns; stderr is inherited (it shows in the test output), stdout is a
  // pipe read by read_line. Only fds 0-2 reach the child, so sockets of
  // in-process gateways never leak into it.
  explicit ChildProcess(Options options);
  // SIGTERM if still running, then reaps (SIGKILL after `stop_grace`).
  ~ChildProcess();
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;

  pid_t pid() const { return pid_; }
  bool exited() const { return exited_; }

  // The next stdout line, or nullopt on EOF or when `timeout` passes first.
  std::optional<std::string> read_line(std::chrono::milliseconds timeout);
  // Reads lines until one contains `needle`; throws on EOF or timeout.
  std::string wait_for_line(std::string_view needle, std::chrono::milliseconds timeout);

  // Sends `signal`, then reaps the child; returns its wait status.
  int stop(int signal, std::chrono::milliseconds grace = std::chrono::seconds(40));

 private:
  pid_t pid_ = -1;
  int stdout_fd_ = -1;
  std::string buffer_;
  bool exited_ = false;
  int status_ = 0;
};

// The write-gateway binary with a config file of its own, for what an
// in-process Runtime cannot show (SIGKILL). `config` is written to a temp
// file as given; its listen port should be 0.
class GatewayProcess {
 public:
  // `capture_log`: its stderr (the JSON log) goes to a file, read by log().
  // `files`: written into its directory before it starts (name, content),
  // e.g. credential files the config names.
  GatewayProcess(const nlohmann::json& config, bool manual_clock,
                 std::vector<std::pair<std::string, std::string>> env = {}, bool capture_log = false,
                 const std::vector<std::pair<std::string, std::string>>& files = {});

  // Everything written to stderr so far ("" unless capture_log).
  std::string log() const;
  // Its log lines with this event, parsed (none unless capture_log).
  std::vector<nlohmann::json> events(std::string_view event) const;

  std::uint16_t port() const { return port_; }
  pid_t pid() const { return process_->pid(); }
  HttpClient client() const { return HttpClient(port_); }
  // SIGKILL: no drain, no outcome recording; returns once the process is reaped.
  void kill_now();
  // SIGTERM: the gateway drains; returns the wait status once it is reaped
  // (SIGKILL only if it is still running after `grace`).
  int terminate(std::chrono::milliseconds grace);
  // Sends `signal` (SIGHUP: reload the TLS files) and leaves it running.
  void signal(int number);
  // Reads its stdout until a line contains `needle`; throws on EOF or timeout.
  std::string wait_for_line(std::string_view needle, std::chrono::milliseconds timeout);

  // The config file it runs with, in a directory of its own (for files the
  // config names by relative path), and a way to replace it before a SIGHUP.
  const std::string& config_file() const { return config_file_; }
  const std::string& dir() const { return dir_.path(); }
  void write_config(const nlohmann::json& config) const;

 private:
  TempDir dir_;
  std::string config_file_;
  std::string log_file_;
  std::unique_ptr<ChildProcess> process_;
  std::uint16_t port_ = 0;
};

}  // namespace gw::test
