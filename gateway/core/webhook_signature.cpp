#include "core/webhook_signature.hpp"

#include "core/base64url.hpp"
#include "core/digest.hpp"
#include "core/labels.hpp"

#include <openssl/evp.h>
#include <openssl/hmac.h>

#include <array>
#include <stdexcept>

namespace gw {
namespace {

constexpr std::string_view secret_prefix = "whsec_";
constexpr std::string_view version_prefix = "v1,";

// Raw 32-byte HMAC-SHA256 of "id.timestamp.body".
std::string hmac(std::string_view key, std::string_view id, std::string_view timestamp, std::string_view body) {
  std::string message;
  message.reserve(id.size() + timestamp.size() + body.size() + 2);
  message.append(id).append(1, '.').append(timestamp).append(1, '.').append(body);
  std::array<unsigned char, EVP_MAX_MD_SIZE> out{};
  unsigned length = 0;
  // A zero-length key still needs a valid pointer.
  static const unsigned char empty_key = 0;
  const void* key_data = key.empty() ? static_cast<const void*>(&empty_key) : key.data();
  if (!HMAC(EVP_sha256(), key_data, static_cast<int>(key.size()),
            reinterpret_cast<const unsigned char*>(message.data()), message.size(), out.data(), &length))
    throw std::runtime_error("HMAC-SHA256 failed");
  return std::string(reinterpret_cast<const char*>(out.data()), length);
}

bool valid_id(std::string_view id) {
  if (id.empty() || id.size() > max_webhook_id_length) return false;
  // '.' separates the signed parts: an id holding one could move bytes
  // between the id, the timestamp and the body under one signature.
  for (unsigned char c : id)
    if (c < 33 || c > 126 || c == '.') return false;
  return true;
}

}  // namespace

std::optional<std::string> parse_webhook_secret(std::string_view text) {
  if (!text.starts_with(secret_prefix)) return std::nullopt;
  auto key = base64_decode(text.substr(secret_prefix.size()));
  if (!key || key->size() < min_webhook_key_bytes) return std::nullopt;
  return key;
}

std::string_view name(WebhookRefusal refusal) {
  switch (refusal) {
    case WebhookRefusal::missing_id: return "missing_id";
    case WebhookRefusal::missing_timestamp: return "missing_timestamp";
    case WebhookRefusal::missing_signature: return "missing_signature";
    case WebhookRefusal::duplicate_header: return "duplicate_header";
    case WebhookRefusal::invalid_id: return "invalid_id";
    case WebhookRefusal::invalid_timestamp: return "invalid_timestamp";
    case WebhookRefusal::timestamp_out_of_tolerance: return "timestamp_out_of_tolerance";
    case WebhookRefusal::signature_mismatch: return "signature_mismatch";
  }
  return "unknown";
}

WebhookVerification verify_webhook(const WebhookHeaders& headers, std::string_view body,
                                   const std::vector<std::string>& keys, std::int64_t now_ms,
                                   std::int64_t tolerance_ms) {
  WebhookVerification v;
  const std::string* id = nullptr;
  const std::string* timestamp = nullptr;
  const std::string* signature = nullptr;
  for (const auto& [field, value] : headers) {
    const std::string** slot = ascii_iequals(field, "webhook-id")          ? &id
                               : ascii_iequals(field, "webhook-timestamp") ? &timestamp
                               : ascii_iequals(field, "webhook-signature") ? &signature
                                                                     : nullptr;
    if (!slot) continue;
    // Two values would leave "which one was signed" to whoever reads first.
    if (*slot) {
      v.refusal = WebhookRefusal::duplicate_header;
      return v;
    }
    *slot = &value;
  }
  if (!id) v.refusal = WebhookRefusal::missing_id;
  else if (!timestamp) v.refusal = WebhookRefusal::missing_timestamp;
  else if (!signature) v.refusal = WebhookRefusal::missing_signature;
  else if (!valid_id(*id)) v.refusal = WebhookRefusal::invalid_id;
  if (v.refusal) return v;

  const auto seconds = decimal_integer(*timestamp);
  if (!seconds) {
    v.refusal = WebhookRefusal::invalid_timestamp;
    return v;
  }
  // Both sides are in [0, 2^63-1], so their difference cannot overflow.
  const bool representable = *seconds <= max_integer / 1000;
  const std::int64_t sent_ms = representable ? *seconds * 1000 : max_integer;
  const std::int64_t distance = sent_ms > now_ms ? sent_ms - now_ms : now_ms - sent_ms;
  if (!representable || distance > tolerance_ms) {
    v.refusal = WebhookRefusal::timestamp_out_of_tolerance;
    return v;
  }

  std::vector<std::string> expected;
  expected.reserve(keys.size());
  for (const auto& key : keys) expected.push_back(hmac(key, *id, *timestamp, body));
  bool matched = false;
  std::string_view list = *signature;
  while (!list.empty() && !matched) {
    const auto space = list.find(' ');
    const std::string_view entry = list.substr(0, space);
    list = space == std::string_view::npos ? std::string_view() : list.substr(space + 1);
    if (!entry.starts_with(version_prefix)) continue;
    const auto given = base64_decode(entry.substr(version_prefix.size()));
    if (!given) continue;
    for (const auto& mac : expected) matched = constant_time_equal(*given, mac) || matched;
  }
  if (!matched) {
    v.refusal = WebhookRefusal::signature_mismatch;
    return v;
  }
  v.id = *id;
  v.timestamp_s = *seconds;
  return v;
}

std::string sign_webhook(std::string_view key, std::string_view id, std::string_view timestamp,
                         std::string_view body) {
  return std::string(version_prefix) + base64_encode(hmac(key, id, timestamp, body));
}

}  // namespace gw
