// Signed provider webhooks (core/webhook_signature.hpp): gw::parse_webhook_secret
// on a fuzzed secret, and gw::verify_webhook on fuzzed headers, body, clock
// and tolerance, with the provider's keys being a fixed one plus the fuzzed
// secret's key when it parses.
//
// Traps when:
// - a secret parses without the whsec_ prefix or to a key shorter than the
//   minimum, or its key does not parse back from its own canonical spelling;
// - a fuzzed delivery verifies without a v1 entry that decodes to the real
//   HMAC under one of the keys, or with an id, timestamp or distance the
//   rules refuse, or with a webhook header sent twice;
// - the honest delivery (the same id, timestamp and body, signed by the
//   provider's key, at its own time) is refused for anything but its id or
//   timestamp being malformed.
#include "core/base64url.hpp"
#include "core/labels.hpp"
#include "core/webhook_signature.hpp"

#include <fuzzer/FuzzedDataProvider.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace {

using gw::WebhookRefusal;

void check(bool ok) {
  if (!ok) __builtin_trap();
}

// The standard's own test secret (tests/core/webhook_signature_tests.cpp).
const std::string fixed_secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";

constexpr std::array<const char*, 7> names{"webhook-id",        "webhook-timestamp", "webhook-signature",
                                          "Webhook-Id",        "WEBHOOK-TIMESTAMP", "Webhook-Signature",
                                          "Content-Type"};

bool valid_id(std::string_view id) {
  if (id.empty() || id.size() > gw::max_webhook_id_length) return false;
  for (unsigned char c : id)
    if (c < 33 || c > 126 || c == '.') return false;
  return true;
}

std::size_t count(const gw::WebhookHeaders& headers, std::string_view name) {
  std::size_t n = 0;
  for (const auto& [k, v] : headers) n += gw::ascii_iequals(k, name) ? 1 : 0;
  return n;
}

const std::string* find(const gw::WebhookHeaders& headers, std::string_view name) {
  for (const auto& [k, v] : headers)
    if (gw::ascii_iequals(k, name)) return &v;
  return nullptr;
}

void check_secret(std::string_view text) {
  const auto key = gw::parse_webhook_secret(text);
  if (!key) return;
  check(text.starts_with("whsec_"));
  check(key->size() >= gw::min_webhook_key_bytes);
  const auto canonical = gw::parse_webhook_secret("whsec_" + gw::base64_encode(*key));
  check(canonical && *canonical == *key);
}

// The signature list holds a v1 entry for this key, id, timestamp and body.
bool signed_by(std::string_view list, const std::string& key, const std::string& id, const std::string& timestamp,
               std::string_view body) {
  const auto mac = gw::base64_decode(gw::sign_webhook(key, id, timestamp, body).substr(3));
  while (true) {
    const auto space = list.find(' ');
    const auto entry = list.substr(0, space);
    if (entry.starts_with("v1,")) {
      const auto given = gw::base64_decode(entry.substr(3));
      if (given && *given == *mac) return true;
    }
    if (space == std::string_view::npos) return false;
    list.remove_prefix(space + 1);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  FuzzedDataProvider in(data, size);
  const std::string secret = in.ConsumeRandomLengthString(64);
  check_secret(secret);

  std::vector<std::string> keys{*gw::parse_webhook_secret(fixed_secret)};
  if (auto key = gw::parse_webhook_secret(secret)) keys.push_back(*key);
  // The authority clock and the configured tolerance (1 s to 1 day) are never negative.
  const std::int64_t now_ms = in.ConsumeIntegralInRange<std::int64_t>(0, gw::max_integer);
  const std::int64_t tolerance_ms = in.ConsumeIntegralInRange<std::int64_t>(1000, 86400000);

  gw::WebhookHeaders headers;
  const auto header_count = in.ConsumeIntegralInRange<int>(0, 6);
  for (int i = 0; i < header_count; ++i) {
    std::string name = in.ConsumeBool() ? names[in.ConsumeIntegralInRange<std::size_t>(0, names.size() - 1)]
                                        : in.ConsumeRandomLengthString(24);
    headers.emplace_back(std::move(name), in.ConsumeRandomLengthString(300));
  }
  const std::string body = in.ConsumeRemainingBytesAsString();

  // The fuzzed delivery.
  const auto v = gw::verify_webhook(headers, body, keys, now_ms, tolerance_ms);
  for (auto name : {"webhook-id", "webhook-timestamp", "webhook-signature"})
    if (count(headers, name) > 1) check(v.refusal == WebhookRefusal::duplicate_header);
  if (v.ok()) {
    const auto* id = find(headers, "webhook-id");
    const auto* timestamp = find(headers, "webhook-timestamp");
    const auto* signature = find(headers, "webhook-signature");
    check(id && timestamp && signature && v.id == *id && valid_id(*id));
    const auto seconds = gw::decimal_integer(*timestamp);
    check(seconds && *seconds == v.timestamp_s && *seconds <= gw::max_integer / 1000);
    const std::int64_t sent_ms = *seconds * 1000;
    check((sent_ms > now_ms ? sent_ms - now_ms : now_ms - sent_ms) <= tolerance_ms);
    bool any = false;
    for (const auto& key : keys) any = any || signed_by(*signature, key, *id, *timestamp, body);
    check(any);
  }

  // The honest delivery of the same id, timestamp and body.
  const auto* id_value = find(headers, "webhook-id");
  const auto* ts_value = find(headers, "webhook-timestamp");
  const std::string id = id_value ? *id_value : "msg_fuzz";
  const std::string timestamp = ts_value ? *ts_value : "1614265330";
  const gw::WebhookHeaders honest{{"webhook-id", id},
                                  {"webhook-timestamp", timestamp},
                                  {"webhook-signature", "v2,x " + gw::sign_webhook(keys.back(), id, timestamp, body)}};
  const auto seconds = gw::decimal_integer(timestamp);
  const std::int64_t at_ms = seconds && *seconds <= gw::max_integer / 1000 ? *seconds * 1000 : now_ms;
  const auto h = gw::verify_webhook(honest, body, keys, at_ms, tolerance_ms);
  if (!valid_id(id)) {
    check(h.refusal == WebhookRefusal::invalid_id);
  } else if (!seconds) {
    check(h.refusal == WebhookRefusal::invalid_timestamp);
  } else if (*seconds > gw::max_integer / 1000) {
    check(h.refusal == WebhookRefusal::timestamp_out_of_tolerance);
  } else {
    check(h.ok() && h.id == id && h.timestamp_s == *seconds);
  }
  return 0;
}
