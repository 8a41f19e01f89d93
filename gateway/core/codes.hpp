// The gateway's reply codes (spec section 5) and the one table mapping each
// to its HTTP status and title. Every gateway-generated reply names one.
#pragma once

#include <optional>
#include <span>
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
  // Operator actions (spec section 4); not in spec section 5, see docs/api.md.
  resolved,                // a held operation was resolved from evidence
  revoked,                 // an operator ended a lease
  realm_rotated,           // a new realm: every outstanding grant is void
  operation_not_held,      // resolve of an operation that holds nothing
  resolved_without_reply,  // exact retry of an operation settled by evidence
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

// The code with this wire name (a listing's filter, a stored code).
std::optional<Code> parse_code(std::string_view wire_name);

// Every code, in the table's order: what a document listing the codes (the
// OpenAPI `Code` enum) is checked against.
std::span<const Code> all_codes();

}  // namespace gw
