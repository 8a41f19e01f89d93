#include "core/codes.hpp"

#include <doctest/doctest.h>

using gw::Code;

TEST_CASE("spec section 5: every code maps to its HTTP status") {
  struct Row {
    Code code;
    const char* name;
    unsigned status;
  };
  const Row rows[] = {
      {Code::granted, "granted", 200},
      {Code::renewed, "renewed", 200},
      {Code::released, "released", 200},
      {Code::busy, "busy", 409},
      {Code::stale_owner, "stale_owner", 409},
      {Code::expired_owner, "expired_owner", 409},
      {Code::authority_generation_mismatch, "authority_generation_mismatch", 409},
      {Code::scope_mismatch, "scope_mismatch", 409},
      {Code::invalid_grant, "invalid_grant", 400},
      {Code::invalid_request, "invalid_request", 400},
      {Code::unauthenticated, "unauthenticated", 401},
      {Code::forbidden, "forbidden", 403},
      {Code::not_found, "not_found", 404},
      {Code::payload_too_large, "payload_too_large", 413},
      {Code::operation_conflict, "operation_conflict", 422},
      {Code::operation_in_flight, "operation_in_flight", 409},
      {Code::unresolved_operation, "unresolved_operation", 409},
      {Code::version_conflict, "version_conflict", 412},
      {Code::epoch_exhausted, "epoch_exhausted", 409},
      {Code::version_exhausted, "version_exhausted", 409},
      {Code::missing_idempotency_key, "missing_idempotency_key", 400},
      {Code::missing_expected_version, "missing_expected_version", 400},
      {Code::provider_unavailable, "provider_unavailable", 502},
      {Code::unknown_outcome, "unknown_outcome", 504},
      {Code::authority_unavailable, "authority_unavailable", 503},
      {Code::authority_clock_rollback, "authority_clock_rollback", 400},
  };
  for (const auto& row : rows) {
    CAPTURE(row.name);
    CHECK(gw::name(row.code) == row.name);
    CHECK(gw::http_status(row.code) == row.status);
    CHECK_FALSE(gw::title(row.code).empty());
  }
}

TEST_CASE("operator codes beyond spec section 5 map to their HTTP status (docs/api.md)") {
  struct Row {
    Code code;
    const char* name;
    unsigned status;
  };
  const Row rows[] = {
      {Code::resolved, "resolved", 200},
      {Code::revoked, "revoked", 200},
      {Code::realm_rotated, "realm_rotated", 200},
      {Code::operation_not_held, "operation_not_held", 409},
      {Code::resolved_without_reply, "resolved_without_reply", 409},
  };
  for (const auto& row : rows) {
    CAPTURE(row.name);
    CHECK(gw::name(row.code) == row.name);
    CHECK(gw::http_status(row.code) == row.status);
    CHECK_FALSE(gw::title(row.code).empty());
  }
}

TEST_CASE("parse_code: every wire name parses back to its code") {
  for (auto c = static_cast<int>(Code::ok); c <= static_cast<int>(Code::internal_error); ++c) {
    const auto code = static_cast<Code>(c);
    CAPTURE(gw::name(code));
    CHECK(gw::parse_code(gw::name(code)) == code);
  }
  CHECK_FALSE(gw::parse_code("lease_expired"));
  CHECK_FALSE(gw::parse_code(""));
}

TEST_CASE("all_codes: the whole table, each code once, in enum order") {
  const auto codes = gw::all_codes();
  REQUIRE(codes.size() == static_cast<std::size_t>(Code::internal_error) + 1);
  for (std::size_t i = 0; i < codes.size(); ++i) CHECK(static_cast<std::size_t>(codes[i]) == i);
}
