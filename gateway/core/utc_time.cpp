#include "core/utc_time.hpp"

#include <charconv>

namespace gw {
namespace {

void append_padded(std::string& out, unsigned value, int width) {
  char digits[12];
  const auto end = std::to_chars(digits, digits + sizeof digits, value).ptr;
  for (auto n = end - digits; n < width; ++n) out += '0';
  out.append(digits, end);
}

}  // namespace

void append_utc_timestamp(std::string& out, std::chrono::system_clock::time_point at) {
  // Calendar arithmetic, not gmtime_r: glibc's takes a process-wide lock.
  using namespace std::chrono;
  const auto ms = floor<milliseconds>(at);
  const auto day = floor<days>(ms);
  const year_month_day date(day);
  const hh_mm_ss time(ms - day);
  append_padded(out, static_cast<unsigned>(static_cast<int>(date.year())), 4);
  out += '-';
  append_padded(out, static_cast<unsigned>(date.month()), 2);
  out += '-';
  append_padded(out, static_cast<unsigned>(date.day()), 2);
  out += 'T';
  append_padded(out, static_cast<unsigned>(time.hours().count()), 2);
  out += ':';
  append_padded(out, static_cast<unsigned>(time.minutes().count()), 2);
  out += ':';
  append_padded(out, static_cast<unsigned>(time.seconds().count()), 2);
  out += '.';
  append_padded(out, static_cast<unsigned>(time.subseconds().count()), 3);
  out += 'Z';
}

std::string utc_text(std::int64_t unix_ms) {
  std::string out;
  append_utc_timestamp(out, std::chrono::system_clock::time_point(std::chrono::milliseconds(unix_ms)));
  return out;
}

}  // namespace gw
