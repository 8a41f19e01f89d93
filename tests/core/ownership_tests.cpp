// SPEC section 2's rules as tables over (stored row, presented grant, time).
#include "core/digest.hpp"
#include "core/ownership.hpp"

#include <doctest/doctest.h>

using namespace gw;

namespace {
const TaskScope scope{"tenant-a", "task-a"};
OwnerRow row(std::string owner, std::int64_t epoch, std::string secret, std::int64_t expires) {
  return {std::move(owner), epoch, sha256(secret), expires};
}
GrantToken grant(std::string realm, TaskScope s, std::string owner, std::int64_t epoch, std::string secret) {
  return {{std::move(realm), std::move(s), std::move(owner), epoch}, std::move(secret)};
}
}  // namespace

TEST_CASE("check_grant: rules 2, 4, 5, 6 in order") {
  const auto current = row("region-b", 2, "sb", 20);
  struct Case {
    const char* name;
    GrantToken token;
    std::optional<OwnerRow> stored;
    std::int64_t now;
    Code expected;
  };
  const Case cases[] = {
      {"current grant before expiry", grant("R", scope, "region-b", 2, "sb"), current, 19, Code::ok},
      {"expiry boundary now == expires_at", grant("R", scope, "region-b", 2, "sb"), current, 20, Code::expired_owner},
      {"after expiry", grant("R", scope, "region-b", 2, "sb"), current, 21, Code::expired_owner},
      {"old epoch after regrant", grant("R", scope, "region-a", 1, "sa"), current, 11, Code::stale_owner},
      {"other owner presenting the current epoch", grant("R", scope, "another-owner", 2, "sb"), current, 11, Code::stale_owner},
      {"current owner and epoch, wrong secret", grant("R", scope, "region-b", 2, "guess"), current, 11, Code::stale_owner},
      {"no owner row", grant("R", scope, "region-b", 2, "sb"), std::nullopt, 11, Code::stale_owner},
      {"stale and expired is stale", grant("R", scope, "region-a", 1, "sa"), current, 30, Code::stale_owner},
      {"another realm", grant("OTHER", scope, "region-b", 2, "sb"), current, 11, Code::authority_generation_mismatch},
      {"another task", grant("R", {"tenant-a", "task-z"}, "region-b", 2, "sb"), current, 11, Code::scope_mismatch},
      {"another tenant", grant("R", {"tenant-z", "task-a"}, "region-b", 2, "sb"), current, 11, Code::scope_mismatch},
      {"realm is checked before scope", grant("OTHER", {"t", "k"}, "x", 9, "y"), current, 11, Code::authority_generation_mismatch},
  };
  for (const auto& c : cases) {
    CAPTURE(c.name);
    CHECK(check_grant(c.token, "R", scope, c.stored, c.now) == c.expected);
  }
}

TEST_CASE("decide_claim: rule 1, busy while any unexpired lease is held") {
  CHECK(decide_claim(std::nullopt, 0, 10).code == Code::granted);
  CHECK(decide_claim(std::nullopt, 0, 10).expires_at_ms == 10);
  auto held = row("region-a", 1, "s", 10);
  CHECK(decide_claim(held, 9, 10).code == Code::busy);                      // anyone, the holder included
  CHECK(decide_claim(held, 10, 10).code == Code::granted);                  // boundary: expired at now == expires_at
  CHECK(decide_claim(held, 10, 10).expires_at_ms == 20);
  CHECK(decide_claim(std::nullopt, INT64_MAX - 5, 5).code == Code::granted);
  CHECK(decide_claim(std::nullopt, INT64_MAX - 5, 6).code == Code::invalid_request);  // past 2^63-1
  CHECK(decide_claim(std::nullopt, 0, 0).code == Code::invalid_request);
}

TEST_CASE("decide_renew: rule 3, never shortens, cannot revive") {
  auto stored = row("region-b", 2, "sb", 13);
  CHECK(decide_renew(Code::ok, stored, 11, 2).code == Code::renewed);
  CHECK(decide_renew(Code::ok, stored, 11, 2).expires_at_ms == 13);   // 11 + 2 == 13: unchanged
  CHECK(decide_renew(Code::ok, stored, 11, 1).expires_at_ms == 13);   // shorter request keeps the longer lease
  CHECK(decide_renew(Code::ok, stored, 11, 10).expires_at_ms == 21);  // longer request extends
  CHECK(decide_renew(Code::expired_owner, stored, 13, 10).code == Code::expired_owner);
  CHECK(decide_renew(Code::stale_owner, stored, 11, 10).code == Code::stale_owner);
  CHECK(decide_renew(Code::ok, stored, INT64_MAX - 1, 2).code == Code::invalid_request);
}

TEST_CASE("decide_release: rule 3, only the current grant, the lease ends now") {
  CHECK(decide_release(Code::ok, 12).code == Code::released);
  CHECK(decide_release(Code::ok, 12).expires_at_ms == 12);
  CHECK(decide_release(Code::stale_owner, 12).code == Code::stale_owner);
  CHECK(decide_release(Code::expired_owner, 12).code == Code::expired_owner);
}
