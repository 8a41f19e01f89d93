// Headless Chromium (Debian's /usr/bin/chromium) driven over the DevTools
// protocol on a pipe (--remote-debugging-pipe: commands on the child's fd 3,
// replies and events on its fd 4, each message JSON ending in a NUL byte):
// no WebSocket, no npm, no driver binary. Only what the operator page's tests
// need: a tab of a fixed size, navigation, script evaluation, screenshots.
#pragma once

#include <nlohmann/json.hpp>

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <deque>
#include <string>

namespace gw::test {

class Browser {
 public:
  // Starts Chromium with a fresh profile in `profile_dir`; its own output
  // goes to `log_file`. Throws if it cannot be started.
  Browser(const std::string& profile_dir, const std::string& log_file);
  // Browser.close, then reaps it (SIGKILL if it does not exit).
  ~Browser();
  Browser(const Browser&) = delete;
  Browser& operator=(const Browser&) = delete;

  // One DevTools command; its result, or throws with the protocol's error.
  // `session` empty: the browser itself; else an attached tab.
  nlohmann::json call(const std::string& method, const nlohmann::json& params = nlohmann::json::object(),
                      const std::string& session = "");
  // Reads until the event `method` of `session` arrives (or one already
  // arrived); returns its params. The limit only bounds a hang.
  nlohmann::json wait_event(const std::string& method, const std::string& session);

 private:
  nlohmann::json read_message();

  pid_t pid_ = -1;
  int to_browser_ = -1;
  int from_browser_ = -1;
  std::int64_t next_id_ = 1;
  std::string buffer_;
  std::deque<nlohmann::json> events_;
  std::chrono::milliseconds limit_{60'000};
};

// One tab of the browser, `width` x `height` CSS pixels at scale 1.
class Tab {
 public:
  Tab(Browser& browser, int width, int height);

  // Navigates and returns once the load event fired.
  void open(const std::string& url);
  // Evaluates `expression` in the page (a promise is awaited) and returns its
  // value as JSON; throws with the page's exception text if it threw.
  nlohmann::json eval(const std::string& expression);
  // The viewport as PNG bytes.
  std::string screenshot();

 private:
  Browser& browser_;
  std::string session_;
};

}  // namespace gw::test
