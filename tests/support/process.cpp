#include "support/process.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <sstream>

#include <array>
#include <atomic>
#include <cerrno>
#include <cstdlib>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <stdexcept>
#include <thread>

extern char** environ;

namespace gw::test {
namespace {

std::runtime_error system_error(const std::string& what, int error) {
  return std::runtime_error(what + ": " + std::strerror(error));
}

// The children still running, so that a test binary that aborts (a failed
// check in a destructor, std::terminate) takes them with it: an orphaned
// provider keeps ctest's output pipe open, and ctest then waits for it
// forever. Slots of plain atomics, read from a signal handler.
std::array<std::atomic<pid_t>, 512> live_children{};

void on_abort(int signal) {
  for (auto& slot : live_children)
    if (const pid_t pid = slot.load(); pid > 0) ::kill(pid, SIGKILL);
  ::signal(signal, SIG_DFL);
  ::raise(signal);
}

// Installed before any test case runs: doctest's own handler, installed per
// test case, reports the crash first and then hands the signal back here.
const bool abort_handler_installed = (kill_children_on_abort(), true);

void track_child(pid_t pid) {
  for (auto& slot : live_children) {
    pid_t empty = 0;
    if (slot.compare_exchange_strong(empty, pid)) return;
  }
}

void untrack_child(pid_t pid) {
  for (auto& slot : live_children) {
    pid_t mine = pid;
    if (slot.compare_exchange_strong(mine, 0)) return;
  }
}

}  // namespace

std::string test_binary(const std::string& name) {
  const char* dir = std::getenv("GATEWAY_TEST_BIN_DIR");
  if (!dir || !*dir)
    throw std::runtime_error("GATEWAY_TEST_BIN_DIR is not set: run the tests through scripts/test.sh");
  return std::string(dir) + "/" + name;
}

std::uint16_t free_tcp_port() {
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) throw system_error("socket", errno);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t length = sizeof addr;
  if (::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 ||
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &length) != 0) {
    int error = errno;
    ::close(fd);
    throw system_error("bind 127.0.0.1:0", error);
  }
  ::close(fd);
  return ntohs(addr.sin_port);
}

int connect_loopback(std::uint16_t port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) throw system_error("socket", errno);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(port);
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    const int error = errno;
    ::close(fd);
    throw system_error("connect 127.0.0.1:" + std::to_string(port), error);
  }
  return fd;
}

TempDir::TempDir() {
  auto pattern = (std::filesystem::temp_directory_path() / "gw-test-XXXXXX").string();
  if (!::mkdtemp(pattern.data())) throw system_error("mkdtemp", errno);
  path_ = pattern;
}

TempDir::~TempDir() {
  std::error_code ignored;
  std::filesystem::remove_all(path_, ignored);
}

std::string TempDir::write(const std::string& name, const std::string& text) const {
  auto file = path_ + "/" + name;
  std::ofstream out(file, std::ios::binary | std::ios::trunc);
  out << text;
  if (!out) throw std::runtime_error("cannot write " + file);
  // Owner only, as the gateway demands of a credential file (and so of any
  // file a test might name as one).
  std::filesystem::permissions(file, std::filesystem::perms::owner_read | std::filesystem::perms::owner_write);
  return file;
}

ChildProcess::ChildProcess(Options options) {
  // Our environment with the options' variables set over it.
  std::map<std::string, std::string> env;
  for (char** e = environ; *e; ++e) {
    std::string_view entry(*e);
    auto eq = entry.find('=');
    if (eq != std::string_view::npos) env[std::string(entry.substr(0, eq))] = std::string(entry.substr(eq + 1));
  }
  for (const auto& [k, v] : options.env) env[k] = v;
  std::vector<std::string> env_strings;
  for (const auto& [k, v] : env) env_strings.push_back(k + "=" + v);
  std::vector<char*> envp;
  for (auto& s : env_strings) envp.push_back(s.data());
  envp.push_back(nullptr);

  std::vector<std::string> args{options.program};
  args.insert(args.end(), options.args.begin(), options.args.end());
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);

  // Close-on-exec, so no other child spawned meanwhile inherits our end.
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) throw system_error("pipe2", errno);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, fds[1], STDOUT_FILENO);
  if (!options.stderr_file.empty())
    posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, options.stderr_file.c_str(),
                                     O_WRONLY | O_CREAT | O_APPEND, 0600);
  posix_spawn_file_actions_addclosefrom_np(&actions, STDERR_FILENO + 1);
  int error = ::posix_spawn(&pid_, options.program.c_str(), &actions, nullptr, argv.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  ::close(fds[1]);
  if (error != 0) {
    ::close(fds[0]);
    throw system_error("posix_spawn " + options.program, error);
  }
  track_child(pid_);
  stdout_fd_ = fds[0];
}

ChildProcess::~ChildProcess() {
  try {
    if (!exited_) stop(SIGTERM);
  } catch (...) {
    // A destructor must not throw; the child is killed in stop() anyway.
  }
  if (stdout_fd_ >= 0) ::close(stdout_fd_);
}

void kill_children_on_abort() {
  struct sigaction action {};
  action.sa_handler = on_abort;
  sigemptyset(&action.sa_mask);
  ::sigaction(SIGABRT, &action, nullptr);
}

std::optional<std::string> ChildProcess::read_line(std::chrono::milliseconds timeout) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    if (auto nl = buffer_.find('\n'); nl != std::string::npos) {
      auto line = buffer_.substr(0, nl);
      buffer_.erase(0, nl + 1);
      return line;
    }
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0 || stdout_fd_ < 0) return std::nullopt;
    pollfd p{stdout_fd_, POLLIN, 0};
    int ready = ::poll(&p, 1, static_cast<int>(left.count()));
    if (ready < 0 && errno == EINTR) continue;
    if (ready <= 0) return std::nullopt;
    char chunk[4096];
    auto n = ::read(stdout_fd_, chunk, sizeof chunk);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return std::nullopt;  // EOF: the child closed stdout or exited
    buffer_.append(chunk, static_cast<std::size_t>(n));
  }
}

std::string ChildProcess::wait_for_line(std::string_view needle, std::chrono::milliseconds timeout) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    auto line = read_line(std::max(left, std::chrono::milliseconds(0)));
    if (!line)
      throw std::runtime_error("child " + std::to_string(pid_) + " did not print a line containing '" +
                               std::string(needle) + "'");
    if (line->find(needle) != std::string::npos) return *line;
  }
}

int ChildProcess::stop(int signal, std::chrono::milliseconds grace) {
  if (exited_) return status_;
  ::kill(pid_, signal);
  auto deadline = std::chrono::steady_clock::now() + grace;
  for (;;) {
    pid_t done = ::waitpid(pid_, &status_, WNOHANG);
    if (done == pid_ || (done < 0 && errno != EINTR)) break;
    if (std::chrono::steady_clock::now() >= deadline) {
      ::kill(pid_, SIGKILL);
      while (::waitpid(pid_, &status_, 0) < 0 && errno == EINTR) {
      }
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  untrack_child(pid_);
  exited_ = true;
  return status_;
}

GatewayProcess::GatewayProcess(const nlohmann::json& config, bool manual_clock,
                               std::vector<std::pair<std::string, std::string>> env, bool capture_log,
                               const std::vector<std::pair<std::string, std::string>>& files) {
  for (const auto& [name, content] : files) dir_.write(name, content);
  config_file_ = dir_.write("gateway.json", config.dump(2));
  std::vector<std::string> args{"--config", config_file_};
  if (manual_clock) args.emplace_back("--manual-clock");
  if (capture_log) log_file_ = dir_.write("gateway.log", "");
  process_ = std::make_unique<ChildProcess>(
      ChildProcess::Options{test_binary("write-gateway"), args, std::move(env), log_file_});
  // "write-gateway listening on port N[ (manual clock)]"
  const std::string marker = "listening on port ";
  auto line = process_->wait_for_line(marker, std::chrono::seconds(60));
  port_ = static_cast<std::uint16_t>(std::stoi(line.substr(line.find(marker) + marker.size())));
}

std::string GatewayProcess::log() const {
  if (log_file_.empty()) return {};
  std::ifstream in(log_file_, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

std::vector<nlohmann::json> GatewayProcess::events(std::string_view event) const {
  std::vector<nlohmann::json> out;
  std::istringstream lines(log());
  for (std::string line; std::getline(lines, line);) {
    auto j = nlohmann::json::parse(line, nullptr, false);
    if (j.is_object() && j.value("event", "") == event) out.push_back(std::move(j));
  }
  return out;
}

void GatewayProcess::write_config(const nlohmann::json& config) const { dir_.write("gateway.json", config.dump(2)); }

void GatewayProcess::kill_now() { process_->stop(SIGKILL); }

int GatewayProcess::terminate(std::chrono::milliseconds grace) { return process_->stop(SIGTERM, grace); }

void GatewayProcess::signal(int number) { ::kill(process_->pid(), number); }

std::string GatewayProcess::wait_for_line(std::string_view needle, std::chrono::milliseconds timeout) {
  return process_->wait_for_line(needle, timeout);
}

}  // namespace gw::test
