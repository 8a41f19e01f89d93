#include "core/utc_time.hpp"

#include <charconv>

namespace gw {
namespace {

// `value`'s last `width` digits at `at`, zero-padded. Years have four: the
// callers stop at 9999 (utc_text) or at the system clock's range (2262).
void put_digits(char* at, unsigned value, int width) {
  for (int i = width - 1; i >= 0; --i, value /= 10) at[i] = static_cast<char>('0' + value % 10);
}

// Calendar arithmetic on milliseconds, not gmtime_r: glibc's takes a
// process-wide lock. Written into a fixed layout and appended once: every
// log line starts with one.
void append_utc_ms(std::string& out, std::chrono::sys_time<std::chrono::milliseconds> ms) {
  using namespace std::chrono;
  const auto day = floor<days>(ms);
  const year_month_day date(day);
  const hh_mm_ss time(ms - day);
  char text[] = "0000-00-00T00:00:00.000Z";
  put_digits(text, static_cast<unsigned>(static_cast<int>(date.year())), 4);
  put_digits(text + 5, static_cast<unsigned>(date.month()), 2);
  put_digits(text + 8, static_cast<unsigned>(date.day()), 2);
  put_digits(text + 11, static_cast<unsigned>(time.hours().count()), 2);
  put_digits(text + 14, static_cast<unsigned>(time.minutes().count()), 2);
  put_digits(text + 17, static_cast<unsigned>(time.seconds().count()), 2);
  put_digits(text + 20, static_cast<unsigned>(time.subseconds().count()), 3);
  out.append(text, sizeof text - 1);
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
