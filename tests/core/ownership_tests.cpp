// spec section 2's rules as tables over (stored row, presented grant, time).
#include "core/digest.hpp"
#include "core/labels.hpp"
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

TEST_CASE("decide_revoke: an operator ends an unexpired lease now, whoever holds it") {
  auto held = row("region-a", 7, "s", 20);
  CHECK(decide_revoke(held, 12).code == Code::revoked);
  CHECK(decide_revoke(held, 12).expires_at_ms == 12);
  CHECK(decide_revoke(held, 19).expires_at_ms == 19);
  // Nothing to end: the lease already ended (now == expires_at is ended), or no task.
  CHECK(decide_revoke(held, 20).code == Code::not_found);
  CHECK(decide_revoke(held, 21).code == Code::not_found);
  CHECK(decide_revoke(std::nullopt, 0).code == Code::not_found);
  // After a revoke at 12 the revoked grant is expired at 12 (rule 2)...
  auto revoked = row("region-a", 7, "s", decide_revoke(held, 12).expires_at_ms);
  CHECK(check_grant(grant("R", scope, "region-a", 7, "s"), "R", scope, revoked, 12) == Code::expired_owner);
  // ...and the task can be claimed at once (rule 1).
  CHECK(decide_claim(revoked, 12, 10).code == Code::granted);
}

TEST_CASE("rotation_next_epoch: past every epoch a realm can have issued, never below the sequence") {
  // Authority time times the bound.
  CHECK(rotation_next_epoch(8, 1'000, std::nullopt) == 1'000 * epochs_per_ms_bound);
  // Never below what the sequence would issue next.
  CHECK(rotation_next_epoch(5'000'000, 1'000, std::nullopt) == 5'000'000);
  // The operator's floor, when higher.
  CHECK(rotation_next_epoch(8, 1'000, 9'000'000) == 9'000'000);
  CHECK(rotation_next_epoch(8, 1'000, 2) == 1'000'000);
  // A realm rotated at t0 starts at t0 * bound; rotated again later (or its
  // backup restored and rotated) it starts above anything it issued at
  // fewer than `bound` epochs per ms.
  const std::int64_t t0 = 1'764'543'600'000, t1 = t0 + 60'000;
  const auto first = rotation_next_epoch(1, t0, std::nullopt);
  const auto issued_since = 60'000 * epochs_per_ms_bound - 1;
  CHECK(rotation_next_epoch(1, t1, std::nullopt) > first + issued_since);
  // Saturates instead of overflowing; time 0 still gives a positive epoch.
  CHECK(rotation_next_epoch(1, max_integer, std::nullopt) == max_integer);
  CHECK(rotation_next_epoch(1, max_integer / epochs_per_ms_bound + 1, std::nullopt) == max_integer);
  CHECK(rotation_next_epoch(1, 0, std::nullopt) == 1);
}
