// provider_path_problem as a table: agent paths that could leave the
// provider's base path, in any spelling, are refused; ordinary paths pass.
#include "core/provider_path.hpp"

#include <doctest/doctest.h>

using namespace gw;

TEST_CASE("provider_path_problem: ordinary paths pass") {
  for (const char* path : {"", "/", "/bookings", "/bookings/bk_1", "/a/b/c/", "/a//b", "/bookings/bk%5F1",
                           "/x/.well-known", "/x/..y", "/x/y..", "/x/...", "/%41%42", "/a%2eb", "/a;v=1/b", "/x/...;y"}) {
    CAPTURE(path);
    CHECK_FALSE(provider_path_problem(path));
  }
}

TEST_CASE("provider_path_problem: dot-segments, raw or encoded, anywhere") {
  for (const char* path : {"/..", "/.", "/../admin", "/a/../../b", "/a/./b", "/a/..", "/%2e%2e/admin", "/%2E%2e",
                           "/a/%2e/b", "/.%2e/x", "/%2e./x", "/..;x/admin", "/a/.;/b", "/%2e%2e;jsessionid=1/x"}) {
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

TEST_CASE("provider_path_problem: a provider may opt in to each form") {
  PathForms all;
  for (const char* name : {"dot_segments", "encoded_slash", "backslash", "leading_double_slash"})
    CHECK(allow_path_form(all, name));
  PathForms none;
  CHECK_FALSE(allow_path_form(none, "encoded_nul"));
  CHECK_FALSE(allow_path_form(none, "DOT_SEGMENTS"));

  PathForms dots;
  allow_path_form(dots, "dot_segments");
  CHECK_FALSE(provider_path_problem("/a/./b", dots));
  CHECK_FALSE(provider_path_problem("/a/b/../c", dots));
  CHECK_FALSE(provider_path_problem("/a/%2e%2e", dots));
  // Only the form opted in to: the others are still refused.
  CHECK(provider_path_problem("/a%2fb", dots));
  CHECK(provider_path_problem("/a\\b", dots));
  CHECK(provider_path_problem("//x", dots));

  PathForms slash;
  allow_path_form(slash, "encoded_slash");
  CHECK_FALSE(provider_path_problem("/files/a%2Fb.txt", slash));
  CHECK(provider_path_problem("/files/../b", slash));

  PathForms back;
  allow_path_form(back, "backslash");
  CHECK_FALSE(provider_path_problem("/win\\share", back));
  CHECK_FALSE(provider_path_problem("/win%5Cshare", back));

  // A leading "//" spelt with another separator is still one, unless that form is allowed too.
  PathForms separators;
  allow_path_form(separators, "backslash");
  allow_path_form(separators, "encoded_slash");
  for (const char* path : {"/\\x", "/%2Fx", "/%5c/x"}) {
    CAPTURE(path);
    CHECK(provider_path_problem(path, separators));
  }
  CHECK_FALSE(provider_path_problem("/x\\y", separators));
  // Nor once dot-segments are resolved: "/.\/x" and "/x/..//y" are "//x" and "//y" to the provider.
  allow_path_form(separators, "dot_segments");
  for (const char* path : {"/.\\/x", "/./%2Fx", "/x/..//y"}) {
    CAPTURE(path);
    CHECK(provider_path_problem(path, separators));
  }

  PathForms twice;
  allow_path_form(twice, "leading_double_slash");
  CHECK_FALSE(provider_path_problem("//x/y", twice));
}

TEST_CASE("provider_path_problem: even when allowed, no path climbs above the base path") {
  PathForms all;
  for (const char* name : {"dot_segments", "encoded_slash", "backslash", "leading_double_slash"})
    allow_path_form(all, name);
  for (const char* path : {"/..", "/../admin", "/a/../..", "/a/..;x/..;y", "/a/%2e%2e/%2E%2E/x", "/a%2f..%2f..", "/a\\..\\..",
                           "/a%5C..%5c..", "//../x", "/a//../..", "/./.."}) {
    CAPTURE(path);
    auto why = provider_path_problem(path, all);
    REQUIRE(why);
    CHECK(why->find("climbs above") != std::string::npos);
  }
  for (const char* path : {"/a/..", "/a/b/../../c", "/a%2fb%2f..", "/a\\b\\..", "/./a"}) {
    CAPTURE(path);
    CHECK_FALSE(provider_path_problem(path, all));
  }
  // NUL is never allowed.
  CHECK(provider_path_problem("/a%00", all));
}
