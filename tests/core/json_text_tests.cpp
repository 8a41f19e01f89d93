// JSON written in place gives the bytes nlohmann's dump gives for the same
// values: strings (with error_handler_t::replace), integers, objects in the
// order given.
#include "core/json_text.hpp"

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include <limits>
#include <random>

using namespace gw;

namespace {

std::string nlohmann_dump(const std::string& value) {
  return nlohmann::json(value).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

std::string json_written(std::string_view value) {
  std::string out;
  append_json_replacing(out, value);
  return out;
}

}  // namespace

TEST_CASE("JSON text: strings are escaped as nlohmann escapes them") {
  for (const std::string& value :
       {std::string(), std::string("plain"), std::string("quote \" and backslash \\ and slash /"),
        std::string("\b\t\n\f\r"), std::string("nul \0 in the middle", 19), std::string("\x01\x1f\x7f"),
        std::string("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80"), std::string("\xef\xbb\xbf bom"),
        std::string("lone continuation \x80"), std::string("truncated \xe2\x82"), std::string("\xe2\x82"),
        std::string("\xf0\x9f\x98"), std::string("overlong \xc0\xaf \xe0\x80\xaf \xf0\x80\x80\xaf"),
        std::string("surrogates \xed\xa0\x80 \xed\xbf\xbf"), std::string("past U+10FFFF \xf4\x90\x80\x80 \xf5\x80"),
        std::string("\xff\xfe"), std::string("broken then ascii \xe2\x28\xa1"), std::string("\xc3\x22")})
    CHECK(json_written(value) == nlohmann_dump(value));
  for (int byte = 0; byte < 256; ++byte) {
    const std::string value(1, static_cast<char>(byte));
    CHECK(json_written(value) == nlohmann_dump(value));
  }
  // Every pair of bytes, and every triple of the bytes where UTF-8's rules change.
  bool pairs_agree = true;
  for (int a = 0; a < 256; ++a)
    for (int b = 0; b < 256; ++b) {
      const std::string value{static_cast<char>(a), static_cast<char>(b)};
      pairs_agree = pairs_agree && json_written(value) == nlohmann_dump(value);
    }
  CHECK(pairs_agree);
  const std::string edges("\x00\x1f\x22\x41\x5c\x7f\x80\x8f\x90\x9f\xa0\xbf\xc0\xc1\xc2\xdf\xe0\xe1\xec\xed\xee"
                          "\xef\xf0\xf1\xf3\xf4\xf5\xff",
                          28);
  for (char a : edges)
    for (char b : edges)
      for (char c : edges) {
        const std::string value{a, b, c, 'x'};
        if (json_written(value) != nlohmann_dump(value)) {
          CHECK(json_written(value) == nlohmann_dump(value));
        }
      }
  // Each of them at every place of a longer ASCII text: plain runs are
  // scanned sixteen and then eight bytes at a time, so every place in two
  // blocks of sixteen, a word and past it.
  // The plain prefix ends exactly at the first byte that needs a look.
  bool placed_agree = true, prefix_exact = true;
  for (int byte = 0; byte < 256; ++byte)
    for (std::size_t at = 0; at < 41; ++at) {
      std::string value(41, 'k');
      value[at] = static_cast<char>(byte);
      placed_agree = placed_agree && json_written(value) == nlohmann_dump(value);
      const bool plain = byte >= 0x20 && byte < 0x80 && byte != '"' && byte != '\\';
      prefix_exact = prefix_exact && json_plain_prefix(value) == (plain ? value.size() : at);
    }
  CHECK(placed_agree);
  CHECK(prefix_exact);
  // Longer random mixes of the same bytes and ASCII runs.
  std::mt19937 random(30);
  for (int i = 0; i < 20000; ++i) {
    std::string value;
    for (auto n = random() % 40; n > 0; --n)
      value += random() % 3 == 0 ? 'a' : edges[random() % edges.size()];
    if (json_written(value) != nlohmann_dump(value)) {
      CHECK(json_written(value) == nlohmann_dump(value));
    }
  }
}

TEST_CASE("JSON text: an object's members, nested objects and integers as nlohmann prints them") {
  constexpr auto low = std::numeric_limits<std::int64_t>::min(), high = std::numeric_limits<std::int64_t>::max();
  constexpr auto top = std::numeric_limits<std::uint64_t>::max();
  std::string out = "kept:";
  JsonObjectWriter object(out);
  object.member("a", "text \"quoted\" \x01");
  object.object("b").member("high", high).member("low", low).member("zero", 0).close();
  object.object("c").close();
  object.member("d", top).member("e", std::string("caf\xc3\xa9 \xff")).close();
  nlohmann::json expected{{"a", "text \"quoted\" \x01"},
                          {"b", {{"low", low}, {"high", high}, {"zero", 0}}},
                          {"c", nlohmann::json::object()},
                          {"d", top},
                          {"e", "caf\xc3\xa9 \xff"}};
  CHECK(out == "kept:" + expected.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));

  std::string empty;
  JsonObjectWriter(empty).close();
  CHECK(empty == "{}");
}
