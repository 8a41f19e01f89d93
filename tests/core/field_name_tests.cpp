#include "core/field_name.hpp"

#include "core/http_syntax.hpp"
#include "core/labels.hpp"
#include "support/near_field_names.hpp"

#include <doctest/doctest.h>

#include <cctype>
#include <random>
#include <string>
#include <vector>

namespace gw {
namespace {

constexpr FieldName last_whole_name = FieldName::set_cookie;

std::vector<FieldName> every_name() {
  std::vector<FieldName> out;
  for (std::size_t i = 1; i < field_name_count; ++i) out.push_back(static_cast<FieldName>(i));
  return out;
}

bool is_family(FieldName name) { return name > last_whole_name; }

// The rule written plainly: a name the same as a spelling when '_' reads as
// '-' and case is folded, else a name under a family's prefix.
FieldClass reference(std::string_view name) {
  for (auto n : every_name())
    if (!is_family(n) && same_field_name(name, canonical_spelling(n)))
      return {n, name.find('_') != std::string_view::npos};
  for (auto n : every_name()) {
    const auto prefix = canonical_spelling(n);
    if (is_family(n) && name.size() >= prefix.size() && same_field_name(name.substr(0, prefix.size()), prefix))
      return {n, name.substr(0, prefix.size()).find('_') != std::string_view::npos};
  }
  return {};
}

}  // namespace

TEST_CASE("field_name: every spelling the rules name is told as itself, in any case") {
  for (auto n : every_name()) {
    std::string spelling(canonical_spelling(n));
    CAPTURE(spelling);
    REQUIRE_FALSE(spelling.empty());
    if (is_family(n)) spelling += "Anything";
    CHECK(classify_field(spelling).name == n);
    CHECK_FALSE(classify_field(spelling).underscore);
    CHECK(classify_field(spelling).exact() == n);
    std::string upper = spelling, lower = spelling;
    for (auto& c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    for (auto& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    CHECK(classify_field(upper).name == n);
    CHECK(classify_field(lower).name == n);
  }
}

TEST_CASE("field_name: '_' for '-' is the same name to a server behind us, but not an exact match") {
  CHECK(classify_field("Fence_Epoch").name == FieldName::fence_epoch);
  CHECK(classify_field("Fence_Epoch").underscore);
  CHECK(classify_field("Fence_Epoch").exact() == FieldName::other);
  CHECK(classify_field("X_HTTP_Method").name == FieldName::x_http_method);
  CHECK(classify_field("content_length").name == FieldName::content_length);
  CHECK(classify_field("Gateway_Status").name == FieldName::gateway_family);
  CHECK(classify_field("Gateway_Status").exact() == FieldName::other);
  // Only the prefix decides a family's spelling: the rest is any name.
  CHECK(classify_field("Gateway-Some_Thing").exact() == FieldName::gateway_family);
  CHECK(classify_field("x_forwarded_for").name == FieldName::x_forwarded_family);
}

TEST_CASE("field_name: near misses are other names") {
  for (std::string_view name :
       {"", "-", "_", "Hos", "Hostt", "Content-Lengthx", "Content Length", "ContentLength", "Fence", "Gateway",
        "Forward", "X-Forwarded", "X-Request-Ids", "TE ", "Trailers", "Authorisation", "X-HTTP-Method-Overrides",
        "Set-Cookie2", "Content-Length\r"}) {
    CAPTURE(name);
    CHECK(classify_field(name).name == FieldName::other);
  }
  // A family's prefix alone is the family, as a longer name is.
  CHECK(classify_field("Fence-").name == FieldName::fence_family);
  CHECK(classify_field("Fence-Epoch2").name == FieldName::fence_family);
  CHECK(classify_field("Fence-Grant-Extra").name == FieldName::fence_family);
  CHECK(classify_field(std::string(300, 'a')).name == FieldName::other);
  CHECK(classify_field("X-Forwarded-" + std::string(300, 'a')).name == FieldName::x_forwarded_family);
}

TEST_CASE("field_name: agrees with the rule written plainly over 50,000 names made to come close") {
  std::mt19937 rng(20261205);
  std::uniform_int_distribution<int> byte(0, 255);
  for (int round = 0; round < 50000; ++round) {
    auto name = test::near_field_name(rng);
    if (round % 10 == 0) name[name.size() / 2] = static_cast<char>(byte(rng));  // any byte, not only a token's
    CAPTURE(name);
    const auto want = reference(name);
    const auto got = classify_field(name);
    REQUIRE(got.name == want.name);
    REQUIRE(got.underscore == want.underscore);
    // exact() is what ascii_iequals against the spelling says.
    if (got.exact() != FieldName::other && !is_family(got.name))
      REQUIRE(ascii_iequals(name, canonical_spelling(got.name)));
  }
}

}  // namespace gw
