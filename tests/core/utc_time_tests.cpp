// Times as people read them (core/utc_time.hpp): authority milliseconds as
// ISO 8601 UTC, and the integers no calendar names, up to 2^63-1, as numbers
// rather than an overflow.
#include "core/utc_time.hpp"

#include <doctest/doctest.h>

#include <cstdint>
#include <limits>

using namespace gw;

TEST_CASE("utc_text: authority milliseconds as ISO 8601 UTC, and past the year 9999 as a number") {
  CHECK(utc_text(0) == "1970-01-01T00:00:00.000Z");
  CHECK(utc_text(1796281558354) == "2026-12-03T07:05:58.354Z");
  CHECK(utc_text(951782400000) == "2000-02-29T00:00:00.000Z");
  CHECK(utc_text(253'402'300'799'999) == "9999-12-31T23:59:59.999Z");
  CHECK(utc_text(253'402'300'800'000) == "253402300800000 ms since 1970");
  const auto last = std::numeric_limits<std::int64_t>::max();
  CHECK(utc_text(last) == std::to_string(last) + " ms since 1970");
  CHECK(utc_text(-1) == "-1 ms since 1970");
}
