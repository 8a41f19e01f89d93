// tools/gatewayctl/format.hpp: durations both ways, ISO times at their
// edges, terminal escaping, and the aligned table.
#include "gatewayctl/format.hpp"

#include <doctest/doctest.h>

#include <limits>
#include <stdexcept>

using namespace gwctl;

TEST_CASE("format_duration_ms: the two largest units, the second left out when zero") {
  struct Case {
    std::int64_t ms;
    const char* text;
  };
  for (auto [ms, text] : {Case{0, "0ms"}, Case{1, "1ms"}, Case{999, "999ms"}, Case{1000, "1s"}, Case{1999, "1s"},
                          Case{59'999, "59s"}, Case{60'000, "1m"}, Case{252'000, "4m12s"}, Case{245'000, "4m5s"},
                          Case{3'599'999, "59m59s"}, Case{3'600'000, "1h"}, Case{3'600'000 + 7 * 60'000, "1h7m"},
                          Case{86'399'999, "23h59m"}, Case{86'400'000, "1d"}, Case{2 * 86'400'000 + 5 * 3'600'000, "2d5h"},
                          Case{-252'000, "-4m12s"}, Case{-5, "-5ms"},
                          Case{std::numeric_limits<std::int64_t>::max(), "106751991167d7h"},
                          Case{std::numeric_limits<std::int64_t>::min(), "-106751991167d7h"}}) {
    CAPTURE(ms);
    CHECK(format_duration_ms(ms) == text);
  }
}

TEST_CASE("parse_duration_ms: units and sums, anything else refused") {
  struct Case {
    const char* text;
    std::int64_t ms;
  };
  for (auto [text, ms] : {Case{"0s", 0}, Case{"500ms", 500}, Case{"90s", 90'000}, Case{"10m", 600'000},
                          Case{"2h", 7'200'000}, Case{"1d", 86'400'000}, Case{"1h30m", 5'400'000},
                          Case{"1m5ms", 60'005}, Case{"5ms1s", 1005}, Case{"9223372036854775807ms", INT64_MAX}}) {
    CAPTURE(text);
    CHECK(parse_duration_ms(text) == ms);
  }
  for (const char* bad : {"", "5", "ms", "s5", "-5s", "+5s", "5 s", "5S", "1.5h", "5sec", "5m ", "1w",
                          "9223372036854775808ms", "106751991167d8h", "99999999999999999999s"}) {
    CAPTURE(bad);
    CHECK_FALSE(parse_duration_ms(bad));
  }
}

TEST_CASE("format_time_ms: ISO-8601 UTC with milliseconds, years 0000-9999, else the number") {
  CHECK(format_time_ms(0) == "1970-01-01T00:00:00.000Z");
  CHECK(format_time_ms(10) == "1970-01-01T00:00:00.010Z");
  CHECK(format_time_ms(1764543600000) == "2025-11-30T23:00:00.000Z");
  CHECK(format_time_ms(1764547200123) == "2025-12-01T00:00:00.123Z");
  CHECK(format_time_ms(951782400000) == "2000-02-29T00:00:00.000Z");  // a leap day
  CHECK(format_time_ms(-1) == "1969-12-31T23:59:59.999Z");
  CHECK(format_time_ms(253402300799999) == "9999-12-31T23:59:59.999Z");
  CHECK(format_time_ms(253402300800000) == "253402300800000ms");
  CHECK(format_time_ms(-62167219200000) == "0000-01-01T00:00:00.000Z");
  CHECK(format_time_ms(-62167219200001) == "-62167219200001ms");
  CHECK(format_time_ms(INT64_MAX) == "9223372036854775807ms");
  CHECK(format_time_ms(INT64_MIN) == "-9223372036854775808ms");
}

TEST_CASE("escape_for_terminal: control bytes, DEL, non-ASCII and backslash are escaped") {
  CHECK(escape_for_terminal("plain /bookings?a=1") == "plain /bookings?a=1");
  CHECK(escape_for_terminal("a\tb\nc\x1b[31m") == "a\\x09b\\x0ac\\x1b[31m");
  CHECK(escape_for_terminal("\x7f") == "\\x7f");
  CHECK(escape_for_terminal("caf\xc3\xa9") == "caf\\xc3\\xa9");
  CHECK(escape_for_terminal("a\\x1b") == "a\\\\x1b");
  CHECK(escape_for_terminal(std::string("a\0b", 3)) == "a\\x00b");
}

TEST_CASE("Table: left-aligned columns two spaces apart, no trailing spaces, cells escaped") {
  Table t({"TENANT", "TASK", "NOTE"});
  t.add({"tenant-a", "t", "x"});
  t.add({"b", "task-long", ""});
  t.add({"c", "k", "tab\there"});
  CHECK(t.str() ==
        "TENANT    TASK       NOTE\n"
        "tenant-a  t          x\n"
        "b         task-long\n"
        "c         k          tab\\x09here\n");
  CHECK_THROWS_AS(t.add({"too", "few"}), std::logic_error);
  CHECK(Table({"A"}).str() == "A\n");
}

TEST_CASE("key_values: keys padded to the longest, values escaped") {
  CHECK(key_values({{"state", "unknown"}, {"upstream_key", "gw1-x"}, {"detail", "line\nbreak"}}) ==
        "state         unknown\n"
        "upstream_key  gw1-x\n"
        "detail        line\\x0abreak\n");
}

TEST_CASE("parse_time_ms: UTC times as format_time_ms writes them, or shorter") {
  CHECK(parse_time_ms("2025-12-01T09:00:00.000Z") == 1764579600000);
  CHECK(parse_time_ms("2025-12-01T09:00:00Z") == 1764579600000);
  CHECK(parse_time_ms("2025-12-01T09:00Z") == 1764579600000);
  CHECK(parse_time_ms("2025-12-01 09:00+00:00") == 1764579600000);
  CHECK(parse_time_ms("2025-12-01") == 1764547200000);
  CHECK(parse_time_ms("1970-01-01T00:00:00.001Z") == 1);
  CHECK(parse_time_ms("2024-02-29") == 1709164800000);
  for (auto ms : {std::int64_t{0}, std::int64_t{1764579600123}, std::int64_t{253402300799999}})
    CHECK(parse_time_ms(format_time_ms(ms)) == ms);
  for (const char* bad : {"", "2025", "2025-12-01T", "2025-12-01T09:00", "2025-12-01T09:00+01:00", "2025-13-01",
                          "2025-02-29", "2025-12-01T24:00Z", "2025-12-01T09:60Z", "2025-12-01T09:00:00.5Z",
                          "2025-12-01T09:00:00.000Zjunk", "10m", " 2025-12-01"}) {
    CAPTURE(bad);
    CHECK_FALSE(parse_time_ms(bad));
  }
}
