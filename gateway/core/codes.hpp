// The gateway's reply codes (SPEC section 5) and the one table mapping each
// to its HTTP status and title. Every gateway-generated reply names one.
#pragma once

#include <string_view>

namespace gw {

enum class Code {
  ok,  // diagnostics and probes: not a decision
  granted,
  renewed,
  released,
  committed,
  historical_retry,
  rejected_by_provider,
  busy,
  stale_owner,
  expired_owner,
  authority_generation_mismatch,
  scope_mismatch,
  invalid_grant,
  invalid_request,
  unauthenticated,
  forbidden,
  not_found,
  method_not_allowed,
  payload_too_large,
  operation_conflict,
  operation_in_flight,
  unresolved_operation,
  version_conflict,
  epoch_exhausted,
  version_exhausted,
  missing_idempotency_key,
  missing_expected_version,
  provider_unavailable,
  unknown_outcome,
  authority_unavailable,
  authority_clock_rollback,
  internal_error,
};

// Snake-case wire name, as in `Gateway-Status` and the `code` member.
std::string_view name(Code code);

// HTTP status for a gateway-generated reply. Codes whose reply is the
// provider's own (committed, historical_retry, rejected_by_provider) map to 200
// here; the proxy uses the provider's status instead.
unsigned http_status(Code code);

// Short human title for problem+json.
std::string_view title(Code code);

}  // namespace gw
