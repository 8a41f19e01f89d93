// parse_strict_json: valid JSON parses as nlohmann would, except that an
// object with the same member twice, at any depth, is discarded.
#include "core/strict_json.hpp"

#include <doctest/doctest.h>

using namespace gw;

TEST_CASE("parse_strict_json: ordinary JSON is unchanged") {
  for (const char* text : {R"({"a":1,"b":[1,2,{"a":3}],"c":{"a":{"a":4}}})", "[]", "{}", "7", R"("x")", "null",
                           R"([{"a":1},{"a":2}])"}) {
    CAPTURE(text);
    auto j = parse_strict_json(text);
    REQUIRE_FALSE(j.is_discarded());
    CHECK(j == nlohmann::json::parse(text));
  }
}

TEST_CASE("parse_strict_json: a repeated member at any depth is discarded") {
  for (const char* text : {R"({"a":1,"a":2})", R"({"a":1,"a":1})", R"({"x":{"a":1,"b":2,"a":3}})",
                           R"([0,{"k":[{"z":1,"z":1}]}])", R"({"owner":"a","lease_ms":10,"owner":"b"})",
                           R"({"a\u0062":1,"ab":2})"}) {  // an escape spelling the same name
    CAPTURE(text);
    CHECK(parse_strict_json(text).is_discarded());
  }
}

TEST_CASE("parse_strict_json: invalid JSON is discarded, never thrown") {
  for (const char* text : {"", "{", R"({"a":})", "[1,]", "nul", R"({"a":1}x)"}) {
    CAPTURE(text);
    CHECK(parse_strict_json(text).is_discarded());
  }
}
