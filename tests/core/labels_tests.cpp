#include "core/labels.hpp"

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

using gw::ascii_iequals;
using gw::decimal_integer;
using gw::is_label;
using gw::json_integer;
using nlohmann::json;

TEST_CASE("labels: 1 to 80 printable ASCII characters") {
  CHECK(is_label("a"));
  CHECK(is_label(std::string(80, 'x')));
  CHECK(is_label("!~tenant/with:odd#chars"));
  CHECK_FALSE(is_label(""));
  CHECK_FALSE(is_label(std::string(81, 'x')));
  CHECK_FALSE(is_label("has space"));
  CHECK_FALSE(is_label("tab\there"));
  CHECK_FALSE(is_label("caf\xc3\xa9"));   // non-ASCII byte
  CHECK_FALSE(is_label(std::string("nul\0x", 5)));
  CHECK_FALSE(is_label("del\x7f"));
}

TEST_CASE("integers: 0 to 2^63-1, booleans, floats, strings and negatives are not") {
  CHECK(json_integer(json::parse("0")) == 0);
  CHECK(json_integer(json::parse("9223372036854775807")) == INT64_MAX);
  CHECK_FALSE(json_integer(json::parse("9223372036854775808")));  // 2^63
  CHECK_FALSE(json_integer(json::parse("18446744073709551616")));  // 2^64 parses as a float
  CHECK_FALSE(json_integer(json::parse("true")));
  CHECK_FALSE(json_integer(json::parse("false")));
  CHECK_FALSE(json_integer(json::parse("1.0")));
  CHECK_FALSE(json_integer(json::parse("1e3")));
  CHECK_FALSE(json_integer(json::parse("-1")));
  CHECK_FALSE(json_integer(json::parse("\"5\"")));
  CHECK_FALSE(json_integer(json::parse("null")));
  CHECK_FALSE(json_integer(json::parse("[1]")));
}

TEST_CASE("decimal header integers: digits only, within 2^63-1") {
  CHECK(decimal_integer("0") == 0);
  CHECK(decimal_integer("42") == 42);
  CHECK(decimal_integer("9223372036854775807") == INT64_MAX);
  CHECK_FALSE(decimal_integer("9223372036854775808"));
  CHECK_FALSE(decimal_integer("99999999999999999999"));
  CHECK_FALSE(decimal_integer(""));
  CHECK_FALSE(decimal_integer("-1"));
  CHECK_FALSE(decimal_integer("+1"));
  CHECK_FALSE(decimal_integer(" 1"));
  CHECK_FALSE(decimal_integer("1.0"));
  CHECK_FALSE(decimal_integer("0x10"));
}

TEST_CASE("checked_add stays within 2^63-1") {
  CHECK(gw::checked_add(1, 2) == 3);
  CHECK(gw::checked_add(INT64_MAX - 1, 1) == INT64_MAX);
  CHECK_FALSE(gw::checked_add(INT64_MAX, 1));
  CHECK_FALSE(gw::checked_add(-1, 1));
}

TEST_CASE("ascii_iequals: ASCII letters match in any case, nothing else does") {
  CHECK(ascii_iequals("Transfer-Encoding", "transfer-encoding"));
  CHECK(ascii_iequals("TRACE", "trace"));
  CHECK(ascii_iequals("", ""));
  CHECK_FALSE(ascii_iequals("TRACE", "TRACES"));
  CHECK_FALSE(ascii_iequals("a-b", "a_b"));
  CHECK_FALSE(ascii_iequals("\xc3\xa9", "\xc3\x89"));  // é and É: bytes, not letters
  CHECK_FALSE(ascii_iequals("@", "`"));                // 0x40 and 0x60 differ by the case bit only
}

TEST_CASE("ascii_iequals: every pair of bytes, against folding A-Z alone") {
  const auto fold = [](unsigned char c) { return c >= 'A' && c <= 'Z' ? static_cast<unsigned char>(c + 32) : c; };
  int mismatches = 0;
  for (int x = 0; x < 256; ++x)
    for (int y = 0; y < 256; ++y) {
      const char a[] = {'k', static_cast<char>(x)}, b[] = {'K', static_cast<char>(y)};
      const bool expected = fold(static_cast<unsigned char>(x)) == fold(static_cast<unsigned char>(y));
      mismatches += ascii_iequals({a, 2}, {b, 2}) != expected;
    }
  CHECK(mismatches == 0);
}
