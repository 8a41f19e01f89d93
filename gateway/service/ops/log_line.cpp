#include "service/ops/log_line.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <charconv>
#include <cmath>

namespace gw {

LogLine::LogLine(std::string recycled, std::chrono::system_clock::time_point at, LogLevel level,
                 std::string_view event)
    : text_(std::move(recycled)) {
  text_.clear();
  text_.reserve(512);  // a request line with its ids and timings fits
  text_ += "{\"time\":\"";
  append_utc_timestamp(text_, at);
  text_ += "\",\"level\":\"";
  text_ += name(level);
  text_ += "\",\"event\":";
  append_json_replacing(text_, event);
}

// `,"name":` and the value. Short values that need no escape (ids, routes,
// numbers: nearly all) go through a buffer on the stack in one append; the
// name needs no look, LogKey checked it when the program was compiled.
// `quoted`: the value is a string.
void LogLine::put(LogKey name, std::string_view value, bool quoted) {
  constexpr std::size_t room = 128;
  const auto key = name.name();
  if (key.size() + value.size() + 6 > room || (quoted && json_plain_prefix(value) != value.size())) {
    text_ += ",\"";
    text_ += key;
    text_ += "\":";
    if (quoted)
      append_json_replacing(text_, value);
    else
      text_ += value;
    return;
  }
  char piece[room];
  char* at = piece;
  *at++ = ',';
  *at++ = '"';
  at = std::copy(key.begin(), key.end(), at);
  *at++ = '"';
  *at++ = ':';
  if (quoted) *at++ = '"';
  at = std::copy(value.begin(), value.end(), at);
  if (quoted) *at++ = '"';
  text_.append(piece, static_cast<std::size_t>(at - piece));
}

LogLine& LogLine::field(LogKey name, std::string_view value) {
  put(name, value, true);
  return *this;
}

LogLine& LogLine::raw_field(LogKey name, std::string_view json) {
  put(name, json, false);
  return *this;
}

LogLine& LogLine::field(LogKey name, double value) {
  if (!std::isfinite(value)) return raw_field(name, "null");
  // nlohmann's own formatter (grisu2, then its %g-like layout): std::to_chars
  // lays out some values differently.
  char digits[64];
  const auto end = nlohmann::detail::to_chars(digits, digits + sizeof digits, value);
  return raw_field(name, {digits, static_cast<std::size_t>(end - digits)});
}

LogLine& LogLine::field(LogKey name, std::chrono::microseconds value) {
  // Below 10^15 microseconds (31 years) the milliseconds have at most 15
  // significant digits, so us / 1000.0 is the double nearest to them, and
  // the shortest decimal that reads back as that double (what nlohmann
  // prints) is those digits: the integer part, then three decimals less
  // their trailing zeros, one kept ("3.0").
  constexpr std::int64_t exact = 1'000'000'000'000'000;
  const std::int64_t us = value.count();
  if (us <= -exact || us >= exact) return field(name, static_cast<double>(us) / 1000.0);
  const std::uint64_t magnitude = us < 0 ? static_cast<std::uint64_t>(-us) : static_cast<std::uint64_t>(us);
  char text[32];
  char* at = text;
  if (us < 0) *at++ = '-';
  at = std::to_chars(at, text + sizeof text, magnitude / 1000).ptr;
  *at++ = '.';
  const auto thousandths = static_cast<unsigned>(magnitude % 1000);
  at[0] = static_cast<char>('0' + thousandths / 100);
  at[1] = static_cast<char>('0' + thousandths / 10 % 10);
  at[2] = static_cast<char>('0' + thousandths % 10);
  std::size_t decimals = 3;
  while (decimals > 1 && at[decimals - 1] == '0') --decimals;
  at += decimals;
  return raw_field(name, {text, static_cast<std::size_t>(at - text)});
}

LogLine& LogLine::field(LogKey name, std::nullptr_t) { return raw_field(name, "null"); }

std::string LogLine::finish() {
  text_ += "}\n";
  return std::move(text_);
}

std::string request_line(std::string recycled, std::chrono::system_clock::time_point at, LogLevel level,
                         const RequestLine& r) {
  // Keys in the order nlohmann sorts them.
  LogLine line(std::move(recycled), at, level, "request");
  if (r.attempt) line.field("attempt", *r.attempt);
  line.field("code", r.code).field("db_ms", r.db_time).field("duration_ms", r.duration);
  if (r.epoch) line.field("epoch", *r.epoch);
  if (!r.error.empty()) line.field("error", r.error);
  line.field("method", r.method);
  if (!r.operation.empty()) line.field("operation", r.operation);
  if (r.parent_span_id) line.field("parent_span_id", *r.parent_span_id);
  if (!r.provider.empty()) line.field("provider", r.provider);
  if (r.forwarded) {
    if (r.forwarded->provider_status)
      line.field("provider_status", *r.forwarded->provider_status);
    else
      line.field("provider_status", nullptr);
  }
  line.field("request_id", r.request_id).field("route", r.route);
  if (r.forwarded) line.field("span_id", r.forwarded->span_id);
  line.field("status", r.status);
  if (r.tenant && r.task) line.field("task", *r.task).field("tenant", *r.tenant);
  line.field("trace_id", r.trace_id);
  if (r.forwarded) line.field("upstream_ms", r.forwarded->upstream_time);
  return line.finish();
}

}  // namespace gw
