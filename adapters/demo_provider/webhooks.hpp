// Signed webhooks the demo provider sends (Standard Webhooks: webhook-id,
// webhook-timestamp, webhook-signature "v1,<base64 HMAC-SHA256 of
// id.timestamp.body>"). Its own small implementation on libcrypto, not the
// gateway's, so a mistake on one side is not mirrored on the other. No I/O:
// the server posts what build_webhook returns.
#pragma once

#include "plain_http.hpp"

#include <nlohmann/json_fwd.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace demo_provider {

// --webhook-url: http://host[:port][/path]. Plain HTTP only: a test tool.
struct webhook_url {
  std::string host;
  std::string port = "80";
  std::string target = "/";  // path and query as given
};
std::optional<webhook_url> parse_webhook_url(std::string_view url);

// The key of a "whsec_<standard base64>" secret; nullopt if malformed or empty.
std::optional<std::string> decode_webhook_secret(std::string_view secret);

struct webhook_settings {
  webhook_url url;
  std::string key;  // decoded
};

// How the signature header is made: by the configured key, by another key
// (a deliberately bad signature), or left out.
enum class webhook_signing { valid, bad, missing };
std::optional<webhook_signing> signing_from_string(std::string_view name);

// One event to send: what the provider says about an idempotency key.
struct webhook_event {
  std::string id;                    // webhook-id
  std::string key;                   // the Idempotency-Key it settles
  std::string state = "executed";
  unsigned status = 0;               // the reply status the execution produced
  webhook_signing signing = webhook_signing::valid;
  std::int64_t timestamp_offset_s = 0;  // added to the send time (tolerance tests)
};

// {"type":"operation.settled","idempotency_key":K,"state":S,"status":N}
std::string webhook_body(const webhook_event& event);

// "v1," + base64(HMAC-SHA256(key, "id.timestamp.body")).
std::string webhook_signature(std::string_view key, std::string_view id, std::string_view timestamp,
                              std::string_view body);

struct outgoing_webhook {
  std::string id;
  std::string timestamp;  // decimal unix seconds, as sent
  std::string body;
  header_list headers;    // webhook-* and Content-Type
};

// The request to POST to settings.url.target at `unix_now_s`.
outgoing_webhook build_webhook(const webhook_settings& settings, const webhook_event& event,
                               std::int64_t unix_now_s);

// What happened to one sent webhook: the receiver's reply, or why none came.
struct webhook_delivery {
  outgoing_webhook sent;
  std::optional<unsigned> receiver_status;
  std::string receiver_body;
  std::string error;  // connect, write or read failure; empty when a reply came
};

// {"id","timestamp","body","headers":[[n,v],...],"receiver_status","receiver_body"} or with "error".
nlohmann::json delivery_json(const webhook_delivery& delivery);

// Base64 (RFC 4648 section 4, padded), or base64url without padding (section 5) when `url`.
std::string encode_base64(std::string_view bytes, bool url = false);

}  // namespace demo_provider
