// One table: code -> wire name, HTTP status, title.
#include "core/codes.hpp"

#include <array>

namespace gw {
namespace {

struct Row {
  Code code;
  std::string_view name;
  unsigned status;
  std::string_view title;
};

constexpr std::array rows{
    Row{Code::ok, "ok", 200, "OK"},
    Row{Code::granted, "granted", 200, "Grant issued"},
    Row{Code::renewed, "renewed", 200, "Lease renewed"},
    Row{Code::released, "released", 200, "Lease released"},
    Row{Code::committed, "committed", 200, "Committed"},
    Row{Code::historical_retry, "historical_retry", 200, "Replayed recorded result"},
    Row{Code::rejected_by_provider, "rejected_by_provider", 200, "Rejected by provider"},
    Row{Code::busy, "busy", 409, "Task is held by an unexpired lease"},
    Row{Code::stale_owner, "stale_owner", 409, "Grant is not the task's current one"},
    Row{Code::expired_owner, "expired_owner", 409, "Grant has expired"},
    Row{Code::authority_generation_mismatch, "authority_generation_mismatch", 409,
        "Grant was issued by another authority realm"},
    Row{Code::scope_mismatch, "scope_mismatch", 409, "Grant is for another tenant or task"},
    Row{Code::invalid_grant, "invalid_grant", 400, "Grant token is malformed"},
    Row{Code::invalid_request, "invalid_request", 400, "Invalid request"},
    Row{Code::unauthenticated, "unauthenticated", 401, "Missing or unknown bearer token"},
    Row{Code::forbidden, "forbidden", 403, "Token is not allowed here"},
    Row{Code::not_found, "not_found", 404, "Not found"},
    Row{Code::method_not_allowed, "method_not_allowed", 405, "Method not allowed"},
    Row{Code::payload_too_large, "payload_too_large", 413, "Request too large"},
    Row{Code::operation_conflict, "operation_conflict", 422,
        "Operation id reused with a different payload"},
    Row{Code::operation_in_flight, "operation_in_flight", 409, "Operation is in flight"},
    Row{Code::unresolved_operation, "unresolved_operation", 409,
        "Another operation of the task is unresolved"},
    Row{Code::version_conflict, "version_conflict", 412, "Expected-Version is not current"},
    Row{Code::epoch_exhausted, "epoch_exhausted", 409, "Epoch space exhausted"},
    Row{Code::version_exhausted, "version_exhausted", 409, "Business version space exhausted"},
    Row{Code::missing_idempotency_key, "missing_idempotency_key", 400,
        "Idempotency-Key header required"},
    Row{Code::missing_expected_version, "missing_expected_version", 400,
        "Expected-Version header required"},
    Row{Code::provider_unavailable, "provider_unavailable", 502,
        "Provider unavailable"},
    Row{Code::unknown_outcome, "unknown_outcome", 504,
        "Provider outcome unknown; the operation is held"},
    Row{Code::authority_unavailable, "authority_unavailable", 503,
        "Authority unavailable; nothing was done"},
    Row{Code::authority_clock_rollback, "authority_clock_rollback", 400,
        "Authority clock cannot move backwards"},
    Row{Code::resolved, "resolved", 200, "Held operation resolved"},
    Row{Code::revoked, "revoked", 200, "Lease revoked"},
    Row{Code::realm_rotated, "realm_rotated", 200, "Authority realm rotated"},
    Row{Code::operation_not_held, "operation_not_held", 409,
        "Operation is not held; there is nothing to resolve"},
    Row{Code::resolved_without_reply, "resolved_without_reply", 409,
        "Operation was settled by evidence; there is no provider reply to replay"},
    Row{Code::internal_error, "internal_error", 500, "Internal error"},
};

constexpr const Row& row(Code code) {
  return rows[static_cast<std::size_t>(code)];
}

// The table is indexed by the enum: keep them in the same order.
constexpr bool ordered() {
  for (std::size_t i = 0; i < rows.size(); ++i)
    if (static_cast<std::size_t>(rows[i].code) != i) return false;
  return rows.size() == static_cast<std::size_t>(Code::internal_error) + 1;
}
static_assert(ordered(), "rows must follow the order of enum Code");

constexpr auto codes = [] {
  std::array<Code, rows.size()> out{};
  for (std::size_t i = 0; i < rows.size(); ++i) out[i] = rows[i].code;
  return out;
}();

}  // namespace

std::string_view name(Code code) { return row(code).name; }
unsigned http_status(Code code) { return row(code).status; }
std::string_view title(Code code) { return row(code).title; }

std::optional<Code> parse_code(std::string_view wire_name) {
  for (const auto& r : rows)
    if (r.name == wire_name) return r.code;
  return std::nullopt;
}

std::span<const Code> all_codes() { return codes; }

}  // namespace gw
