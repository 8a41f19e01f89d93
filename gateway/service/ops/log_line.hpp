// A log line formatted in place: the request line is written for nearly
// every request, so it is appended into one reserved string rather than
// built as an nlohmann::json object (a map: an allocation per key and per
// string) and dumped. The bytes are the ones that dump gives, so a reader
// cannot tell the two apart; tests/service/log_line_tests.cpp compares them.
#pragma once

#include "config/config.hpp"
#include "core/json_text.hpp"
#include "core/utc_time.hpp"

#include <chrono>
#include <concepts>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace gw {

// A field's name: a literal checked when the program is compiled.
using LogKey = JsonKey;

// {"time":...,"level":...,"event":...,<fields>}\n
class LogLine {
 public:
  LogLine(std::chrono::system_clock::time_point at, LogLevel level, std::string_view event)
      : LogLine(std::string(), at, level, event) {}
  // Written into `recycled`, cleared first: a buffer handed back by finish()
  // keeps its capacity, so a line per request allocates nothing.
  LogLine(std::string recycled, std::chrono::system_clock::time_point at, LogLevel level, std::string_view event);

  // Fields in ascending key order (how nlohmann prints an object), none
  // named time, level or event.
  LogLine& field(LogKey name, std::string_view value);
  template <std::integral T>
    requires(!std::same_as<T, bool>)
  LogLine& field(LogKey name, T value) {
    char digits[24];
    return raw_field(name, integer_text(digits, value));
  }
  // As nlohmann prints a double: shortest round trip, "1.0" not "1", null if not finite.
  LogLine& field(LogKey name, double value);
  // Milliseconds, as nlohmann prints the double us / 1000.0 ("12.345", "3.0"),
  // written from the integer: a duration costs no floating-point formatting.
  LogLine& field(LogKey name, std::chrono::microseconds value);
  LogLine& field(LogKey name, std::nullptr_t);

  // The line, with its closing brace and newline (moved out: call it last).
  std::string finish();

 private:
  void put(LogKey name, std::string_view value, bool quoted);  // `,"name":` and the value
  LogLine& raw_field(LogKey name, std::string_view json);  // a number or null

  std::string text_;
};

// What a request's line says (App::log_request fills it from the call).
struct RequestLine {
  std::string_view request_id{}, trace_id{}, method{}, route{}, code{};
  unsigned status = 0;
  std::chrono::microseconds duration{}, db_time{};  // logged as duration_ms, db_ms
  // Both or neither: the path's tenant and task, when they are labels.
  std::optional<std::string_view> tenant{}, task{};
  std::string_view operation{}, provider{}, error{};  // empty: not said
  std::optional<int> attempt{};
  std::optional<std::int64_t> epoch{};
  // Only for a request that was forwarded.
  struct Forwarded {
    std::chrono::microseconds upstream_time{};  // logged as upstream_ms
    std::optional<unsigned> provider_status{};  // null: no reply
    std::string_view span_id{};
  };
  std::optional<Forwarded> forwarded{};
  std::optional<std::string_view> parent_span_id{};
};

// The "request" event's line, written into `recycled` (see LogLine).
std::string request_line(std::string recycled, std::chrono::system_clock::time_point at, LogLevel level,
                         const RequestLine& r);
inline std::string request_line(std::chrono::system_clock::time_point at, LogLevel level, const RequestLine& r) {
  return request_line(std::string(), at, level, r);
}

}  // namespace gw
