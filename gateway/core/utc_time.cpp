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

// Calendar arithmetic on milliseconds, not gmtime_r: glibc's takes a
// process-wide lock.
void append_utc_ms(std::string& out, std::chrono::sys_time<std::chrono::milliseconds> ms) {
  using namespace std::chrono;
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

}  // namespace

void append_utc_timestamp(std::string& out, std::chrono::system_clock::time_point at) {
  append_utc_ms(out, std::chrono::floor<std::chrono::milliseconds>(at));
}

std::string utc_text(std::int64_t unix_ms) {
  // Authority times are any integer up to 2^63-1 ms: only what a calendar can
  // name (years 1970 to 9999) becomes a date, and is never converted to the
  // system clock's nanoseconds, which would overflow past the year 2262.
  constexpr std::int64_t last_ms_of_9999 = 253'402'300'799'999;
  if (unix_ms < 0 || unix_ms > last_ms_of_9999) return std::to_string(unix_ms) + " ms since 1970";
  std::string out;
  append_utc_ms(out, std::chrono::sys_time<std::chrono::milliseconds>(std::chrono::milliseconds(unix_ms)));
  return out;
}

}  // namespace gw
