#include "service/ops/logger.hpp"

#include "service/ops/log_line.hpp"

#include <cerrno>
#include <utility>

#include <unistd.h>

namespace gw {

std::string utc_timestamp(std::chrono::system_clock::time_point at) {
  std::string text;
  append_utc_timestamp(text, at);
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
  append_utc_timestamp(line, at);
  line += "\",\"level\":\"";
  line += name(level);
  line += "\",\"event\":";
  append_json_replacing(line, event);
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

namespace {

// Less than a full batch (log_batch_full) waits at most this long.
constexpr auto gather_time = std::chrono::milliseconds(5);

}  // namespace

bool log_batch_full(std::size_t bytes, std::size_t lines, std::size_t capacity) {
  return bytes >= 256 * 1024 || lines >= capacity / 2;
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
  queue(log_line(std::chrono::system_clock::now(), level, event, std::move(fields)));
}

void Logger::write_line(LogLevel level, std::string_view line) {
  if (enabled(level)) queue(line);
}

void Logger::queue(std::string_view line) {
  bool wake = false;
  {
    std::lock_guard lock(mutex_);
    if (queued_lines_ >= capacity_) {
      ++dropped_;
      return;
    }
    queue_ += line;
    ++queued_lines_;
    ++queued_total_;
    // The first line after a quiet spell starts the gathering; after that
    // only a full batch cuts it short.
    if (writer_state_ == Writer::idle ||
        (writer_state_ == Writer::gathering && log_batch_full(queue_.size(), queued_lines_, capacity_))) {
      writer_state_ = Writer::busy;
      wake = true;
    }
  }
  if (wake) wake_.notify_one();
}

void Logger::flush() {
  std::unique_lock lock(mutex_);
  const auto target = queued_total_;
  if (written_total_ >= target) return;
  ++flushing_;
  wake_.notify_one();  // a gathering writer writes at once
  written_.wait(lock, [&] { return written_total_ >= target; });
  --flushing_;
}

void Logger::run() {
  std::uint64_t reported_drops = 0;
  std::string batch;
  std::unique_lock lock(mutex_);
  for (;;) {
    if (queued_lines_ == 0) {
      if (stopping_) return;
      writer_state_ = Writer::idle;
      wake_.wait(lock, [&] { return stopping_ || queued_lines_ > 0; });
      continue;
    }
    writer_state_ = Writer::gathering;
    wake_.wait_for(lock, gather_time, [&] {
      return stopping_ || flushing_ > 0 || log_batch_full(queue_.size(), queued_lines_, capacity_);
    });
    writer_state_ = Writer::busy;
    batch.swap(queue_);
    const auto lines = std::exchange(queued_lines_, 0);
    lock.unlock();
    // Said once the writer has room again, so a flood's loss is on record.
    if (const auto drops = dropped_.load(); drops > reported_drops) {
      batch += log_line(std::chrono::system_clock::now(), LogLevel::warn, "log_lines_dropped",
                        {{"dropped", drops - reported_drops}, {"dropped_total", drops}});
      reported_drops = drops;
    }
    for (std::size_t at = 0; at < batch.size();) {
      const auto n = ::write(fd_, batch.data() + at, batch.size() - at);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) break;  // stderr closed: nothing more can be said
      at += static_cast<std::size_t>(n);
    }
    batch.clear();
    lock.lock();
    written_total_ += lines;
    if (flushing_ > 0) written_.notify_all();
  }
}

}  // namespace gw
