// The ownership rules (SPEC section 2) as pure functions of the stored owner
// row, the presented grant and authority time. No I/O: the store reads the
// row, calls these, and writes what they decide in the same transaction.
#pragma once

#include "core/codes.hpp"
#include "core/grant.hpp"

#include <cstdint>
#include <optional>
#include <string>

namespace gw {

// The task's current owner as the authority stores it: the published fence.
struct OwnerRow {
  std::string owner;
  std::int64_t epoch = 0;
  std::string secret_hash;  // SHA-256 of the grant secret; the secret itself is never stored
  std::int64_t expires_at_ms = 0;
};

// Rules 2, 4, 5, 6: is `token` the current, unexpired grant of `scope`?
// Order: another realm, another scope, not the current (owner, epoch, secret),
// then expiry at `now` (now == expires_at is already expired).
// Returns Code::ok when it is.
Code check_grant(const GrantToken& token, std::string_view realm, const TaskScope& scope,
                 const std::optional<OwnerRow>& row, std::int64_t now_ms);

struct LeaseDecision {
  Code code = Code::ok;
  std::int64_t expires_at_ms = 0;  // the new lease end when code is a success
};

// Rule 1: busy while anyone holds an unexpired lease, else a new lease of
// `lease_ms` from now (invalid_request if it would pass 2^63-1).
LeaseDecision decide_claim(const std::optional<OwnerRow>& row, std::int64_t now_ms,
                           std::int64_t lease_ms);

// Rule 3: only the current grant before expiry; never shortens the lease.
LeaseDecision decide_renew(Code grant_check, const OwnerRow& row, std::int64_t now_ms,
                           std::int64_t lease_ms);

// Rule 3: only the current grant before expiry; the lease ends now.
LeaseDecision decide_release(Code grant_check, std::int64_t now_ms);

}  // namespace gw
