// Tokens and field values as every HTTP writer here checks them.
#include "core/http_syntax.hpp"

#include <doctest/doctest.h>

#include <string>

namespace gw {

TEST_CASE("is_http_token: one or more tchar, nothing else") {
  for (const char* ok : {"GET", "X-Request-Id", "a!#$%&'*+-.^_`|~9"}) {
    CAPTURE(ok);
    CHECK(is_http_token(ok));
  }
  for (const char* bad : {"", "X A", "X-A:", "X\r\nY", "X\t", "(x)", "caf\xc3\xa9"}) {
    CAPTURE(bad);
    CHECK_FALSE(is_http_token(bad));
  }
}

TEST_CASE("is_http_token: every byte, against RFC 9110's tchar spelt out") {
  const std::string specials = "!#$%&'*+-.^_`|~";
  for (int b = 0; b < 256; ++b) {
    const char c = static_cast<char>(b);
    const bool tchar = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                       specials.find(c) != std::string::npos;
    CAPTURE(b);
    CHECK(is_http_token(std::string(1, c)) == tchar);
    CHECK(is_http_token(std::string("X-") + c) == tchar);
  }
}

TEST_CASE("is_field_value: HTAB, visible ASCII and obs-text, never a control") {
  CHECK(is_field_value(""));
  CHECK(is_field_value("a b\tc"));
  CHECK(is_field_value("caf\xc3\xa9"));
  CHECK_FALSE(is_field_value("a\r\nInjected: 1"));
  CHECK_FALSE(is_field_value("a\nb"));
  CHECK_FALSE(is_field_value(std::string("a\0b", 3)));
  CHECK_FALSE(is_field_value("a\x7f"));
  CHECK_FALSE(is_field_value("a\x01"));
}

TEST_CASE("is_field_value: every byte, alone and after a valid prefix") {
  for (int c = 0; c < 256; ++c) {
    const auto u = static_cast<unsigned char>(c);
    const bool expected = u == '\t' || (u >= 0x20 && u != 0x7f);
    const std::string alone(1, static_cast<char>(c)), late = "value " + alone + " tail";
    CAPTURE(c);
    CHECK(is_field_value(alone) == expected);
    CHECK(is_field_value(late) == expected);
  }
}

// The check reads eight bytes at a time, then the tail byte by byte: every
// byte at every offset of a value long enough for two words and a tail, in
// a value of otherwise allowed bytes (low, high, HTAB and obs-text alike).
TEST_CASE("is_field_value: every byte at every offset of a 22-byte value") {
  const std::string base = "\t ~az" "\x80" "\xff" " 0\t!Zz~ " "\x7e" "\x80" "a\tb " "\xc3";
  REQUIRE(base.size() == 22);
  REQUIRE(is_field_value(base));
  for (std::size_t at = 0; at < base.size(); ++at)
    for (int c = 0; c < 256; ++c) {
      const auto u = static_cast<unsigned char>(c);
      const bool expected = u == '\t' || (u >= 0x20 && u != 0x7f);
      std::string value = base;
      value[at] = static_cast<char>(c);
      CAPTURE(at);
      CAPTURE(c);
      CHECK(is_field_value(value) == expected);
    }
}

}  // namespace gw
