// The ownership rules (spec section 2) as pure functions of the stored owner
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

// An operator ends the task's lease now (spec section 4, revoke): `revoked`
// with the new end (now) while a lease is unexpired; otherwise `not_found`
// (no task, or its lease has already ended), and nothing changes. The
// revoked grant is expired_owner from then on (rule 2), and the next claim
// gets a new epoch (rule 1).
LeaseDecision decide_revoke(const std::optional<OwnerRow>& row, std::int64_t now_ms);

// A realm rotation (spec section 4) may follow a restore from a backup that
// is older than grants already issued. Their epochs are unknown to the
// restored database, so the epochs issued after the rotation start at
// least at now_ms * epochs_per_ms_bound: greater than every epoch of a
// realm that issued fewer than that many epochs per ms of authority time
// since it began (initial epochs count from 1; a rotated realm starts at its
// own rotation time times the bound). `at_least` is the operator's own
// floor, for example the largest Fence-Epoch a provider has seen. Never
// below `next_epoch`, the value the sequence would issue next; saturates at
// 2^63-1 (claims are then epoch_exhausted).
inline constexpr std::int64_t epochs_per_ms_bound = 1000;
std::int64_t rotation_next_epoch(std::int64_t next_epoch, std::int64_t now_ms,
                                 std::optional<std::int64_t> at_least);

}  // namespace gw
