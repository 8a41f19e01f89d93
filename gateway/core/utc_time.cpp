#include "core/utc_time.hpp"

#include <charconv>
#include <cstring>

namespace gw {
namespace {

// `value`'s last `width` digits at `at`, zero-padded. Years have four: the
// callers stop at 9999 (utc_text) or at the system clock's range (2262).
void put_digits(char* at, unsigned value, int width) {
  for (int i = width - 1; i >= 0; --i, value /= 10) at[i] = static_cast<char>('0' + value % 10);
}

// Calendar arithmetic, not gmtime_r: glibc's takes a process-wide lock. The
// date and time to the second change once a second while every log line
// starts with them, so each thread keeps the last second's text and writes
// only the milliseconds anew.
void append_utc_ms(std::string& out, std::chrono::sys_time<std::chrono::milliseconds> ms) {
  using namespace std::chrono;
  struct Second {
    sys_seconds at = sys_seconds::min();
    char text[20] = "0000-00-00T00:00:00";
  };
  thread_local Second last;
  const auto second = floor<seconds>(ms);
  if (second != last.at) {
    const auto day = floor<days>(second);
    const year_month_day date(day);
    const hh_mm_ss time(second - day);
    put_digits(last.text, static_cast<unsigned>(static_cast<int>(date.year())), 4);
    put_digits(last.text + 5, static_cast<unsigned>(date.month()), 2);
    put_digits(last.text + 8, static_cast<unsigned>(date.day()), 2);
    put_digits(last.text + 11, static_cast<unsigned>(time.hours().count()), 2);
    put_digits(last.text + 14, static_cast<unsigned>(time.minutes().count()), 2);
    put_digits(last.text + 17, static_cast<unsigned>(time.seconds().count()), 2);
    last.at = second;
  }
  char text[] = "0000-00-00T00:00:00.000Z";
  std::memcpy(text, last.text, 19);
  put_digits(text + 20, static_cast<unsigned>((ms - second).count()), 3);
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
