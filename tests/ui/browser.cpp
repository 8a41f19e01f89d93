#include "ui/browser.hpp"

#include "core/base64url.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <vector>

extern char** environ;

namespace gw::test {
namespace {

std::runtime_error system_error(const std::string& what, int error) {
  return std::runtime_error(what + ": " + std::strerror(error));
}

// A pipe whose ends are above the fds the child's file actions use (0-4), so
// dup2 onto 3 and 4 never lands on one of them. Close-on-exec for everyone else.
void high_pipe(int fds[2]) {
  int raw[2];
  if (::pipe2(raw, O_CLOEXEC) != 0) throw system_error("pipe2", errno);
  for (int i = 0; i < 2; ++i) {
    fds[i] = ::fcntl(raw[i], F_DUPFD_CLOEXEC, 10);
    ::close(raw[i]);
    if (fds[i] < 0) throw system_error("fcntl F_DUPFD_CLOEXEC", errno);
  }
}

}  // namespace

Browser::Browser(const std::string& profile_dir, const std::string& log_file) {
  // The flags this closed network needs (/work/.library/env/machines/cpp.md): without the
  // background-networking ones Chromium keeps trying hosts it cannot reach. --no-sandbox:
  // tests run as root, where Chromium's sandbox refuses to start.
  std::vector<std::string> args{"/usr/bin/chromium",
                                "--headless",
                                "--no-sandbox",
                                "--disable-gpu",
                                "--disable-quic",
                                "--no-first-run",
                                "--no-default-browser-check",
                                "--disable-background-networking",
                                "--disable-component-update",
                                "--disable-sync",
                                "--disable-extensions",
                                "--disable-dev-shm-usage",
                                "--hide-scrollbars",
                                "--mute-audio",
                                "--user-data-dir=" + profile_dir,
                                "--remote-debugging-pipe",
                                "about:blank"};
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);

  int commands[2], replies[2];
  high_pipe(commands);
  high_pipe(replies);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, log_file.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_adddup2(&actions, STDOUT_FILENO, STDERR_FILENO);
  posix_spawn_file_actions_adddup2(&actions, commands[0], 3);
  posix_spawn_file_actions_adddup2(&actions, replies[1], 4);
  posix_spawn_file_actions_addclosefrom_np(&actions, 5);
  const int error = ::posix_spawn(&pid_, argv[0], &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  ::close(commands[0]);
  ::close(replies[1]);
  to_browser_ = commands[1];
  from_browser_ = replies[0];
  if (error != 0) {
    ::close(to_browser_);
    ::close(from_browser_);
    throw system_error("posix_spawn /usr/bin/chromium (scripts/deps.sh installs it)", error);
  }
}

Browser::~Browser() {
  try {
    call("Browser.close");
  } catch (...) {
    // Already gone, or not answering: killed below.
  }
  ::close(to_browser_);
  // Chromium closes its end of the reply pipe as it exits: wait for that EOF, bounded.
  pollfd p{from_browser_, POLLIN, 0};
  for (;;) {
    if (::poll(&p, 1, 20'000) <= 0) break;
    char chunk[4096];
    if (::read(from_browser_, chunk, sizeof chunk) <= 0) break;
  }
  ::close(from_browser_);
  int status = 0;
  if (::waitpid(pid_, &status, WNOHANG) == 0) {
    ::kill(pid_, SIGKILL);
    ::waitpid(pid_, &status, 0);
  }
}

nlohmann::json Browser::read_message() {
  const auto deadline = std::chrono::steady_clock::now() + limit_;
  for (;;) {
    if (auto end = buffer_.find('\0'); end != std::string::npos) {
      auto message = nlohmann::json::parse(buffer_.substr(0, end));
      buffer_.erase(0, end + 1);
      return message;
    }
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) throw std::runtime_error("Chromium did not answer within the limit");
    pollfd p{from_browser_, POLLIN, 0};
    int ready = ::poll(&p, 1, static_cast<int>(left.count()));
    if (ready < 0 && errno == EINTR) continue;
    if (ready <= 0) continue;
    char chunk[65536];
    auto n = ::read(from_browser_, chunk, sizeof chunk);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) throw std::runtime_error("Chromium closed its DevTools pipe (see its log)");
    buffer_.append(chunk, static_cast<std::size_t>(n));
  }
}

nlohmann::json Browser::call(const std::string& method, const nlohmann::json& params, const std::string& session) {
  const auto id = next_id_++;
  nlohmann::json message{{"id", id}, {"method", method}, {"params", params}};
  if (!session.empty()) message["sessionId"] = session;
  std::string bytes = message.dump();
  bytes.push_back('\0');
  for (std::size_t sent = 0; sent < bytes.size();) {
    auto n = ::write(to_browser_, bytes.data() + sent, bytes.size() - sent);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw system_error("write to Chromium", errno);
    sent += static_cast<std::size_t>(n);
  }
  for (;;) {
    auto reply = read_message();
    if (!reply.contains("id")) {
      events_.push_back(std::move(reply));
      continue;
    }
    if (reply["id"] != id) continue;
    if (reply.contains("error")) throw std::runtime_error(method + ": " + reply["error"].dump());
    return reply.value("result", nlohmann::json::object());
  }
}

nlohmann::json Browser::wait_event(const std::string& method, const std::string& session) {
  auto matches = [&](const nlohmann::json& e) {
    return e.value("method", "") == method && e.value("sessionId", "") == session;
  };
  for (auto it = events_.begin(); it != events_.end(); ++it)
    if (matches(*it)) {
      auto params = (*it)["params"];
      events_.erase(events_.begin(), it + 1);
      return params;
    }
  events_.clear();
  for (;;) {
    auto message = read_message();
    if (matches(message)) return message["params"];
  }
}

Tab::Tab(Browser& browser, int width, int height) : browser_(browser) {
  auto target = browser_.call("Target.createTarget", {{"url", "about:blank"}});
  auto attached = browser_.call("Target.attachToTarget", {{"targetId", target["targetId"]}, {"flatten", true}});
  session_ = attached["sessionId"].get<std::string>();
  browser_.call("Page.enable", nlohmann::json::object(), session_);
  browser_.call("Emulation.setDeviceMetricsOverride",
                {{"width", width}, {"height", height}, {"deviceScaleFactor", 1}, {"mobile", false}}, session_);
}

void Tab::open(const std::string& url) {
  auto r = browser_.call("Page.navigate", {{"url", url}}, session_);
  if (r.contains("errorText")) throw std::runtime_error("navigate " + url + ": " + r["errorText"].get<std::string>());
  // A load event of the blank page before it may still be queued: wait until it is this one.
  do browser_.wait_event("Page.loadEventFired", session_);
  while (eval("document.readyState === 'complete' ? location.href : ''") != url);
}

nlohmann::json Tab::eval(const std::string& expression) {
  auto r = browser_.call("Runtime.evaluate",
                         {{"expression", expression}, {"awaitPromise", true}, {"returnByValue", true}}, session_);
  if (r.contains("exceptionDetails")) {
    const auto& d = r["exceptionDetails"];
    std::string why = d.contains("exception") ? d["exception"].value("description", d.dump()) : d.dump();
    throw std::runtime_error("in the page: " + why);
  }
  return r["result"].value("value", nlohmann::json());
}

std::string Tab::screenshot() {
  auto r = browser_.call("Page.captureScreenshot", {{"format", "png"}}, session_);
  auto bytes = base64_decode(r["data"].get<std::string>());
  if (!bytes) throw std::runtime_error("Page.captureScreenshot: the data is not base64");
  return *bytes;
}

}  // namespace gw::test
