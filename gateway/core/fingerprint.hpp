// The payload fingerprint (spec section 1): SHA-256 over method, provider,
// upstream path and query, Expected-Version and the exact body bytes.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace gw {

struct PayloadParts {
  std::string_view method;
  std::string_view provider;
  std::string_view target;  // upstream path and query, as received
  std::int64_t expected_version = 0;
  std::string_view body;
};

// Raw 32 bytes. Each part is length-prefixed, so no two different requests
// can frame to the same input.
std::string payload_fingerprint(const PayloadParts& parts);

}  // namespace gw

namespace gw {

// The Idempotency-Key sent upstream for an operation: stable for (tenant,
// task, operation id), identical on every resend and under every owner, and
// scoped so two tenants' keys can never collide at a shared provider.
std::string upstream_idempotency_key(std::string_view tenant, std::string_view task,
                                     std::string_view operation_id);

}  // namespace gw
