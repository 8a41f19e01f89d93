// Text for people: durations ("4m12s"), ISO-8601 UTC times from epoch
// milliseconds, aligned tables and key/value blocks, and the escaping that
// keeps what the gateway sends from steering the terminal. No I/O.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace gwctl {

// The two largest units, the second left out when zero: "350ms", "42s",
// "4m12s", "4m", "3h7m", "2d5h". Negative values get a leading '-'.
std::string format_duration_ms(std::int64_t ms);

// "500ms", "90s", "10m", "2h", "1d" and sums of them ("1h30m"); nullopt for
// anything else: no unit, a bare unit, a sign, or a value past 2^63-1 ms.
std::optional<std::int64_t> parse_duration_ms(std::string_view text);

// "2025-12-01T09:00:00.000Z". Outside years 0000-9999 the number itself
// with "ms" ("99999999999999999ms"): never a wrong date.
std::string format_time_ms(std::int64_t ms);

// A UTC time as format_time_ms writes it, or shorter: "2025-12-01",
// "2025-12-01T09:00Z", "2025-12-01T09:00:00Z", "2025-12-01T09:00:00.250Z"
// ('T' or a space between date and time; "Z" or "+00:00" at the end of a
// time). Epoch milliseconds; nullopt for anything else, an impossible date
// (2025-02-30) or a year outside 0000-9999.
std::optional<std::int64_t> parse_time_ms(std::string_view text);

// Printable ASCII as is; any other byte as \xNN, so a tab, an escape
// sequence or a newline in a value can neither break a table's columns nor
// reach the terminal.
std::string escape_for_terminal(std::string_view text);

// Columns left-aligned, two spaces apart, headers first; no trailing spaces.
// Cells are escaped with escape_for_terminal.
class Table {
 public:
  explicit Table(std::vector<std::string> headers);
  void add(std::vector<std::string> row);  // as many cells as headers
  std::string str() const;

 private:
  std::vector<std::vector<std::string>> rows_;
};

// "key  value" lines, keys padded to the longest; values escaped.
std::string key_values(const std::vector<std::pair<std::string, std::string>>& lines);

}  // namespace gwctl
