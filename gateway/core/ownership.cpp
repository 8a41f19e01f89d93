#include "core/ownership.hpp"

#include "core/digest.hpp"
#include "core/labels.hpp"

#include <algorithm>

namespace gw {

Code check_grant(const GrantToken& token, std::string_view realm, const TaskScope& scope,
                 const std::optional<OwnerRow>& row, std::int64_t now_ms) {
  const auto& id = token.identity;
  if (id.realm != realm) return Code::authority_generation_mismatch;
  if (id.scope != scope) return Code::scope_mismatch;
  // A different owner presenting the current epoch number is as stale as an
  // old epoch: the fence is the whole (owner, epoch, secret) triple.
  if (!row || row->owner != id.owner || row->epoch != id.epoch ||
      !constant_time_equal(row->secret_hash, sha256(token.secret)))
    return Code::stale_owner;
  if (now_ms >= row->expires_at_ms) return Code::expired_owner;
  return Code::ok;
}

LeaseDecision decide_claim(const std::optional<OwnerRow>& row, std::int64_t now_ms,
                           std::int64_t lease_ms) {
  if (row && now_ms < row->expires_at_ms) return {Code::busy, 0};
  auto end = lease_ms > 0 ? checked_add(now_ms, lease_ms) : std::nullopt;
  if (!end) return {Code::invalid_request, 0};
  return {Code::granted, *end};
}

LeaseDecision decide_renew(Code grant_check, const OwnerRow& row, std::int64_t now_ms,
                           std::int64_t lease_ms) {
  if (grant_check != Code::ok) return {grant_check, 0};
  auto end = lease_ms > 0 ? checked_add(now_ms, lease_ms) : std::nullopt;
  if (!end) return {Code::invalid_request, 0};
  return {Code::renewed, std::max(row.expires_at_ms, *end)};
}

LeaseDecision decide_release(Code grant_check, std::int64_t now_ms) {
  if (grant_check != Code::ok) return {grant_check, 0};
  return {Code::released, now_ms};
}

LeaseDecision decide_revoke(const std::optional<OwnerRow>& row, std::int64_t now_ms) {
  if (!row || now_ms >= row->expires_at_ms) return {Code::not_found, 0};
  return {Code::revoked, now_ms};
}

std::int64_t rotation_next_epoch(std::int64_t next_epoch, std::int64_t now_ms,
                                 std::optional<std::int64_t> at_least) {
  const std::int64_t by_time =
      now_ms > max_integer / epochs_per_ms_bound ? max_integer : std::max<std::int64_t>(now_ms, 0) * epochs_per_ms_bound;
  return std::max({next_epoch, by_time, at_least.value_or(0), std::int64_t{1}});
}

}  // namespace gw
