// Verification of signed provider webhooks (spec section 4) as Standard
// Webhooks defines it (https://www.standardwebhooks.com): the headers
// webhook-id, webhook-timestamp (unix seconds) and webhook-signature, a
// space-separated list of "v1,<base64 HMAC-SHA256 of id.timestamp.body>".
// Pure: the caller passes the request's headers and body, the provider's
// keys and the time; nothing here reads a clock, a socket or the database.
#pragma once

#include "core/header_field.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace gw {

// The raw key of a "whsec_<base64>" secret: the decoded base64 part.
// nullopt without the prefix, with bad base64, or with fewer than
// min_webhook_key_bytes (the standard's minimum for a signing secret).
inline constexpr std::size_t min_webhook_key_bytes = 24;
std::optional<std::string> parse_webhook_secret(std::string_view text);

// Why a delivery is refused. Every one is answered 401 alike; the name is
// for the log only, so a sender learns nothing from the difference.
enum class WebhookRefusal {
  missing_id,
  missing_timestamp,
  missing_signature,
  duplicate_header,            // webhook-id, -timestamp or -signature sent more than once
  invalid_id,                  // empty, too long, not visible ASCII, or holding a '.'
  invalid_timestamp,           // not decimal unix seconds
  timestamp_out_of_tolerance,  // further than the tolerance from now, either way
  signature_mismatch,          // no v1 signature matches any of the keys
};
std::string_view name(WebhookRefusal refusal);

// The id's limit: Standard Webhooks ids are short (msg_ + 27 characters).
inline constexpr std::size_t max_webhook_id_length = 255;

struct WebhookVerification {
  std::optional<WebhookRefusal> refusal;  // nullopt: verified
  std::string id;                         // verified: the webhook-id, the delivery's identity
  std::int64_t timestamp_s = 0;           // verified: the webhook-timestamp
  bool ok() const { return !refusal; }
};

using WebhookHeaders = std::vector<HeaderField>;  // as gw::http::Fields

// Checks in this order: each of the three headers present exactly once
// (names case-insensitive), the id, the timestamp's form, its distance from
// `now_ms` (|now - timestamp| <= tolerance, so the edges are accepted), then
// the signatures: any "v1," entry equal (constant time) to the HMAC under
// any key passes; entries of other versions (v1a, v2) are skipped.
WebhookVerification verify_webhook(const WebhookHeaders& headers, std::string_view body,
                                   const std::vector<std::string>& keys, std::int64_t now_ms,
                                   std::int64_t tolerance_ms);

// "v1,<base64>" for one key: what a sender puts in webhook-signature.
std::string sign_webhook(std::string_view key, std::string_view id, std::string_view timestamp,
                         std::string_view body);

}  // namespace gw
