#include "service/api/path.hpp"

#include <doctest/doctest.h>

#include <optional>
#include <random>
#include <string>
#include <vector>

using namespace gw;

TEST_CASE("split_target: segments are percent-decoded, query kept raw") {
  auto t = split_target("/v1/tenants/ten%20ant/tasks/a%2Fb?x=1&y=%20");
  REQUIRE(t);
  REQUIRE(t->segments.size() == 5);
  CHECK(t->segments[2] == "ten ant");
  CHECK(t->segments[4] == "a/b");
  CHECK(t->query == "x=1&y=%20");
  CHECK(t->raw_path == "/v1/tenants/ten%20ant/tasks/a%2Fb");
}

TEST_CASE("split_target: refuses what is not an origin-form path") {
  CHECK_FALSE(split_target(""));
  CHECK_FALSE(split_target("http://host/x"));
  CHECK_FALSE(split_target("*"));
  CHECK_FALSE(split_target("/bad%zzescape"));
  CHECK_FALSE(split_target("/cut%2"));
  CHECK(split_target("/")->segments.empty());
}

TEST_CASE("split_target: a path with no escape and one with escapes split by the same rule") {
  auto plain = split_target("/a//b/");
  REQUIRE(plain);
  CHECK(plain->segments == std::vector<std::string>{"a", "", "b", ""});
  auto one = split_target("/v1/x%41/y?q=%zz");
  REQUIRE(one);
  CHECK(one->segments == std::vector<std::string>{"v1", "xA", "y"});

  // Against the rule written plainly: cut the path at each '/', decode each piece.
  const std::string alphabet = "/%a4F-z";
  std::mt19937 random(30);
  for (int i = 0; i < 20000; ++i) {
    std::string target = "/";
    for (int n = static_cast<int>(random() % 12); n > 0; --n) target += alphabet[random() % alphabet.size()];
    CAPTURE(target);
    std::optional<std::vector<std::string>> expected = std::vector<std::string>{};
    std::string_view rest = std::string_view(target).substr(1);
    for (;;) {
      const auto slash = rest.find('/');
      auto decoded = percent_decode(rest.substr(0, slash));
      if (!decoded) {
        expected.reset();
        break;
      }
      expected->push_back(*decoded);
      if (slash == std::string_view::npos) break;
      rest.remove_prefix(slash + 1);
    }
    if (expected && expected->size() == 1 && expected->front().empty()) expected->clear();
    const auto got = split_target(target);
    REQUIRE(got.has_value() == expected.has_value());
    if (got) CHECK(got->segments == *expected);
  }
}
