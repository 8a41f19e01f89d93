// The gateway's log: one JSON object per line on stderr, written by a thread
// of its own. A caller (an Asio I/O thread, a database worker) only formats
// its line and appends it to the queue under a short lock; a slow or blocked
// stderr fills the bounded queue, and lines past it are dropped and counted
// (gateway_log_lines_dropped_total, and a log_lines_dropped line once the
// writer catches up) rather than stalling a request.
//
// The writer is not woken per line: with the access log on that would be a
// futex wake and a context switch per request. It gathers lines for a few
// milliseconds (or until a batch is full) and writes them with one write(2).
//
// Why not a library: the lines are already JSON made with nlohmann, so a
// logging library (spdlog's async logger was the candidate) would add only
// this queue and thread, plus a runtime package in the image.
#pragma once

#include "config/config.hpp"

#include <nlohmann/json.hpp>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>

namespace gw {

// "2024-05-01T12:00:00.123Z"
std::string utc_timestamp(std::chrono::system_clock::time_point at);

// {"time":...,"level":...,"event":...,<fields in key order>}\n. Fields named
// time, level or event are replaced by these.
std::string log_line(std::chrono::system_clock::time_point at, LogLevel level, std::string_view event,
                     nlohmann::json fields);

// Whether a queue of `lines` lines, `bytes` long, is a full batch, which
// wakes the writer at once rather than at its timer: 256 KiB, or half the
// lines the queue may hold, so that a queue of short lines is written before
// it fills and drops.
bool log_batch_full(std::size_t bytes, std::size_t lines, std::size_t capacity);

class Logger {
 public:
  // Writes to `fd`, queueing at most `capacity` lines.
  explicit Logger(int fd, std::size_t capacity = 8192);
  // Writes what is queued, then stops the writer.
  ~Logger();
  Logger(const Logger&) = delete;
  Logger& operator=(const Logger&) = delete;

  // The process's log, on stderr.
  static Logger& process();

  void configure(const LogConfig& config);
  bool enabled(LogLevel level) const { return level >= level_.load(std::memory_order_relaxed); }
  LogLevel level() const { return level_.load(std::memory_order_relaxed); }
  bool access() const { return access_.load(std::memory_order_relaxed); }

  // Queues one line if `level` is enabled.
  void write(LogLevel level, std::string_view event, nlohmann::json fields);
  // The same for a line already formatted (service/ops/log_line.hpp), newline included.
  void write_line(LogLevel level, std::string_view line);
  // Returns once every line queued before the call is written.
  void flush();
  std::uint64_t dropped() const { return dropped_.load(); }

 private:
  void queue(std::string_view line);
  void run();

  const int fd_;
  const std::size_t capacity_;
  std::atomic<LogLevel> level_{LogLevel::info};
  std::atomic<bool> access_{true};
  std::atomic<std::uint64_t> dropped_{0};
  std::mutex mutex_;
  std::condition_variable wake_, written_;
  // Under mutex_. The queued lines, back to back in one buffer the writer
  // swaps for its own: both keep their capacity, so queueing rarely allocates.
  std::string queue_;
  std::size_t queued_lines_ = 0;
  std::uint64_t queued_total_ = 0, written_total_ = 0;
  // idle: nothing queued, waiting for a line. gathering: waiting up to the
  // gather time for a full batch. busy: writing, or already woken.
  enum class Writer { busy, idle, gathering } writer_state_ = Writer::busy;
  int flushing_ = 0;  // callers waiting in flush()
  bool stopping_ = false;
  std::thread writer_;
};

}  // namespace gw
