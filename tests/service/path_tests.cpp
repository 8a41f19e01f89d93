#include "service/api/path.hpp"

#include <doctest/doctest.h>

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
