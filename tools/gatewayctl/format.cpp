#include "gatewayctl/format.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <limits>
#include <stdexcept>

namespace gwctl {
namespace {

constexpr std::uint64_t ms_per_s = 1000, ms_per_m = 60 * ms_per_s, ms_per_h = 60 * ms_per_m, ms_per_d = 24 * ms_per_h;

// 0000-01-01T00:00:00.000Z and 9999-12-31T23:59:59.999Z.
constexpr std::int64_t earliest_ms = -62167219200000;
constexpr std::int64_t latest_ms = 253402300799999;

}  // namespace

std::string format_duration_ms(std::int64_t ms) {
  // Through unsigned, so that INT64_MIN has a magnitude too.
  const std::uint64_t v = ms < 0 ? 0 - static_cast<std::uint64_t>(ms) : static_cast<std::uint64_t>(ms);
  const std::string sign = ms < 0 ? "-" : "";
  auto two = [&](std::uint64_t big, const char* big_unit, std::uint64_t small, const char* small_unit) {
    std::string out = sign + std::to_string(v / big) + big_unit;
    if (auto rest = (v % big) / small; rest != 0) out += std::to_string(rest) + small_unit;
    return out;
  };
  if (v < ms_per_s) return sign + std::to_string(v) + "ms";
  if (v < ms_per_m) return sign + std::to_string(v / ms_per_s) + "s";
  if (v < ms_per_h) return two(ms_per_m, "m", ms_per_s, "s");
  if (v < ms_per_d) return two(ms_per_h, "h", ms_per_m, "m");
  return two(ms_per_d, "d", ms_per_h, "h");
}

std::optional<std::int64_t> parse_duration_ms(std::string_view text) {
  if (text.empty()) return std::nullopt;
  std::int64_t total = 0;
  while (!text.empty()) {
    std::size_t digits = 0;
    while (digits < text.size() && text[digits] >= '0' && text[digits] <= '9') ++digits;
    if (digits == 0) return std::nullopt;
    std::int64_t number = 0;
    for (std::size_t i = 0; i < digits; ++i)
      if (__builtin_mul_overflow(number, 10, &number) || __builtin_add_overflow(number, text[i] - '0', &number))
        return std::nullopt;
    text.remove_prefix(digits);
    std::int64_t unit = 0;
    for (auto [name, ms] : {std::pair<std::string_view, std::int64_t>{"ms", 1}, {"s", 1000}, {"m", 60'000},
                            {"h", 3'600'000}, {"d", 86'400'000}}) {
      // "ms" before "m", so that "5ms" is not read as five minutes and an "s".
      if (text.substr(0, name.size()) == name) {
        unit = ms;
        text.remove_prefix(name.size());
        break;
      }
    }
    if (unit == 0) return std::nullopt;
    if (__builtin_mul_overflow(number, unit, &number) || __builtin_add_overflow(total, number, &total))
      return std::nullopt;
  }
  return total;
}

std::string format_time_ms(std::int64_t ms) {
  if (ms < earliest_ms || ms > latest_ms) return std::to_string(ms) + "ms";
  using namespace std::chrono;
  const sys_time<milliseconds> at{milliseconds{ms}};
  const auto day = floor<days>(at);
  const year_month_day ymd{day};
  const hh_mm_ss time{at - day};
  char out[64];  // 25 bytes in range; room for what the compiler cannot prove about the fields
  std::snprintf(out, sizeof out, "%04d-%02u-%02uT%02d:%02d:%02d.%03dZ", static_cast<int>(ymd.year()),
                static_cast<unsigned>(ymd.month()), static_cast<unsigned>(ymd.day()),
                static_cast<int>(time.hours().count()), static_cast<int>(time.minutes().count()),
                static_cast<int>(time.seconds().count()), static_cast<int>(time.subseconds().count()));
  return out;
}

std::optional<std::int64_t> parse_time_ms(std::string_view text) {
  // Exactly `n` digits at the front of `text`, consumed.
  auto digits = [&](std::size_t n) -> std::optional<int> {
    if (text.size() < n) return std::nullopt;
    int v = 0;
    for (std::size_t i = 0; i < n; ++i) {
      if (text[i] < '0' || text[i] > '9') return std::nullopt;
      v = v * 10 + (text[i] - '0');
    }
    text.remove_prefix(n);
    return v;
  };
  auto literal = [&](char ch) {
    if (text.empty() || text.front() != ch) return false;
    text.remove_prefix(1);
    return true;
  };
  const auto y = digits(4);
  if (!y || !literal('-')) return std::nullopt;
  const auto mo = digits(2);
  if (!mo || !literal('-')) return std::nullopt;
  const auto d = digits(2);
  if (!d) return std::nullopt;
  using namespace std::chrono;
  const year_month_day date{year{*y}, month{static_cast<unsigned>(*mo)}, day{static_cast<unsigned>(*d)}};
  if (!date.ok()) return std::nullopt;
  std::int64_t ms = duration_cast<milliseconds>(sys_days{date}.time_since_epoch()).count();
  if (text.empty()) return ms;  // a date alone: its midnight, UTC
  if (!literal('T') && !literal(' ')) return std::nullopt;
  const auto h = digits(2);
  if (!h || *h > 23 || !literal(':')) return std::nullopt;
  const auto mi = digits(2);
  if (!mi || *mi > 59) return std::nullopt;
  int s = 0, frac = 0;
  if (literal(':')) {
    const auto sec = digits(2);
    if (!sec || *sec > 59) return std::nullopt;
    s = *sec;
    if (literal('.')) {
      const auto f = digits(3);
      if (!f) return std::nullopt;
      frac = *f;
    }
  }
  if (text != "Z" && text != "+00:00") return std::nullopt;
  return ms + ((*h * 60 + *mi) * 60 + s) * std::int64_t{1000} + frac;
}

std::string escape_for_terminal(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (unsigned char c : text) {
    if (c >= 0x20 && c < 0x7f && c != '\\') {
      out += static_cast<char>(c);
    } else if (c == '\\') {
      out += "\\\\";  // so that a literal "\x1b" in a value is told apart from an escaped byte
    } else {
      char hex[5];
      std::snprintf(hex, sizeof hex, "\\x%02x", c);
      out += hex;
    }
  }
  return out;
}

Table::Table(std::vector<std::string> headers) { rows_.push_back(std::move(headers)); }

void Table::add(std::vector<std::string> row) {
  if (row.size() != rows_.front().size()) throw std::logic_error("table row has the wrong number of cells");
  for (auto& cell : row) cell = escape_for_terminal(cell);
  rows_.push_back(std::move(row));
}

std::string Table::str() const {
  std::vector<std::size_t> width(rows_.front().size(), 0);
  for (const auto& row : rows_)
    for (std::size_t i = 0; i < row.size(); ++i) width[i] = std::max(width[i], row[i].size());
  std::string out;
  for (const auto& row : rows_) {
    std::string line;
    for (std::size_t i = 0; i < row.size(); ++i) {
      line += row[i];
      if (i + 1 < row.size()) line.append(width[i] - row[i].size() + 2, ' ');
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();  // an empty last cell
    out += line + "\n";
  }
  return out;
}

std::string key_values(const std::vector<std::pair<std::string, std::string>>& lines) {
  std::size_t width = 0;
  for (const auto& [key, value] : lines) width = std::max(width, key.size());
  std::string out;
  for (const auto& [key, value] : lines)
    out += key + std::string(width - key.size() + 2, ' ') + escape_for_terminal(value) + "\n";
  return out;
}

}  // namespace gwctl
