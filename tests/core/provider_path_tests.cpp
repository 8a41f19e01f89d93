// provider_path_problem as a table: agent paths that could leave the
// provider's base path, in any spelling, are refused; ordinary paths pass.
#include "core/provider_path.hpp"

#include <doctest/doctest.h>

using namespace gw;

TEST_CASE("provider_path_problem: ordinary paths pass") {
  for (const char* path : {"", "/", "/bookings", "/bookings/bk_1", "/a/b/c/", "/a//b", "/bookings/bk%5F1",
                           "/x/.well-known", "/x/..y", "/x/y..", "/x/...", "/%41%42", "/a%2eb"}) {
    CAPTURE(path);
    CHECK_FALSE(provider_path_problem(path));
  }
}

TEST_CASE("provider_path_problem: dot-segments, raw or encoded, anywhere") {
  for (const char* path : {"/..", "/.", "/../admin", "/a/../../b", "/a/./b", "/a/..", "/%2e%2e/admin", "/%2E%2e",
                           "/a/%2e/b", "/.%2e/x", "/%2e./x"}) {
    CAPTURE(path);
    auto why = provider_path_problem(path);
    REQUIRE(why);
    CHECK(why->find("dot-segments") != std::string::npos);
  }
}

TEST_CASE("provider_path_problem: encoded slashes, backslashes, NUL and a leading //") {
  for (const char* path : {"/a%2fb", "/a%2F..%2Fb", "/a\\b", "/a%5cb", "/a%5C..", "/a%00", "//evil.example/x", "//"}) {
    CAPTURE(path);
    CHECK(provider_path_problem(path));
  }
}
