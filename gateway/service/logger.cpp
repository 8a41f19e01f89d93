#include "service/logger.hpp"

#include <cerrno>
#include <cstdio>
#include <ctime>

#include <unistd.h>

namespace gw {

std::string utc_timestamp(std::chrono::system_clock::time_point at) {
  const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(at.time_since_epoch()).count();
  std::time_t seconds = static_cast<std::time_t>(ms / 1000);
  if (ms < 0 && ms % 1000 != 0) --seconds;
  std::tm tm{};
  gmtime_r(&seconds, &tm);
  char text[96];  // room for any int the format could print (-Wformat-truncation)
  std::snprintf(text, sizeof text, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", tm.tm_year + 1900, tm.tm_mon + 1,
                tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, static_cast<int>(((ms % 1000) + 1000) % 1000));
  return text;
}

std::string log_line(std::chrono::system_clock::time_point at, LogLevel level, std::string_view event,
                     nlohmann::json fields) {
  if (!fields.is_object()) fields = nlohmann::json::object();
  fields.erase("time");
  fields.erase("level");
  fields.erase("event");
  // Invalid UTF-8 (a provider's reason phrase, say) becomes U+FFFD, never an exception.
  const auto replace = nlohmann::json::error_handler_t::replace;
  std::string line = "{\"time\":\"";
  line += utc_timestamp(at);
  line += "\",\"level\":\"";
  line += name(level);
  line += "\",\"event\":";
  line += nlohmann::json(std::string(event)).dump(-1, ' ', false, replace);
  const std::string rest = fields.dump(-1, ' ', false, replace);
  if (rest.size() > 2) {
    line += ',';
    line.append(rest, 1, std::string::npos);
  } else {
    line += '}';
  }
  line += '\n';
  return line;
}

Logger::Logger(int fd, std::size_t capacity) : fd_(fd), capacity_(capacity), writer_([this] { run(); }) {}

Logger::~Logger() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_one();
  writer_.join();
}

Logger& Logger::process() {
  static Logger logger(STDERR_FILENO);
  return logger;
}

void Logger::configure(const LogConfig& config) {
  level_ = config.level;
  access_ = config.access;
}

void Logger::write(LogLevel level, std::string_view event, nlohmann::json fields) {
  if (!enabled(level)) return;
  auto line = log_line(std::chrono::system_clock::now(), level, event, std::move(fields));
  {
    std::lock_guard lock(mutex_);
    if (queue_.size() >= capacity_) {
      ++dropped_;
      return;
    }
    queue_.push_back(std::move(line));
    ++queued_total_;
  }
  wake_.notify_one();
}

void Logger::flush() {
  std::unique_lock lock(mutex_);
  const auto target = queued_total_;
  written_.wait(lock, [&] { return written_total_ >= target; });
}

void Logger::run() {
  std::uint64_t reported_drops = 0;
  std::unique_lock lock(mutex_);
  for (;;) {
    wake_.wait(lock, [&] { return stopping_ || !queue_.empty(); });
    if (queue_.empty() && stopping_) return;
    std::deque<std::string> batch;
    batch.swap(queue_);
    lock.unlock();
    std::string text;
    for (auto& line : batch) text += line;
    // Said once the writer has room again, so a flood's loss is on record.
    if (const auto drops = dropped_.load(); drops > reported_drops) {
      text += log_line(std::chrono::system_clock::now(), LogLevel::warn, "log_lines_dropped",
                       {{"dropped", drops - reported_drops}, {"dropped_total", drops}});
      reported_drops = drops;
    }
    for (std::size_t at = 0; at < text.size();) {
      const auto n = ::write(fd_, text.data() + at, text.size() - at);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) break;  // stderr closed: nothing more can be said
      at += static_cast<std::size_t>(n);
    }
    lock.lock();
    written_total_ += batch.size();
    written_.notify_all();
  }
}

}  // namespace gw
