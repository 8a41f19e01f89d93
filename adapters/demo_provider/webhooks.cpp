// Webhook URL and secret parsing, the event body and its signature.
#include "webhooks.hpp"

#include <nlohmann/json.hpp>
#include <openssl/evp.h>
#include <openssl/hmac.h>

#include <array>
#include <charconv>
#include <stdexcept>

namespace demo_provider {
namespace {

constexpr std::string_view alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

std::optional<std::string> unbase64(std::string_view text) {
  while (text.ends_with('=')) text.remove_suffix(1);
  std::string out;
  std::uint32_t acc = 0;
  int bits = 0;
  for (char c : text) {
    const auto v = alphabet.find(c);
    if (v == std::string_view::npos) return std::nullopt;
    acc = acc << 6 | static_cast<std::uint32_t>(v);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out += static_cast<char>(acc >> bits & 0xff);
    }
  }
  return out;
}

}  // namespace

std::optional<webhook_url> parse_webhook_url(std::string_view url) {
  constexpr std::string_view scheme = "http://";
  if (!url.starts_with(scheme)) return std::nullopt;
  url.remove_prefix(scheme.size());
  const auto slash = url.find('/');
  const std::string_view authority = url.substr(0, slash);
  webhook_url out;
  if (slash != std::string_view::npos) out.target = std::string(url.substr(slash));
  const auto colon = authority.rfind(':');
  out.host = std::string(authority.substr(0, colon));
  if (colon != std::string_view::npos) {
    const std::string_view port = authority.substr(colon + 1);
    unsigned value = 0;
    const auto [end, ec] = std::from_chars(port.data(), port.data() + port.size(), value);
    if (ec != std::errc{} || end != port.data() + port.size() || value < 1 || value > 65535) return std::nullopt;
    out.port = std::string(port);
  }
  if (out.host.empty() || out.host.find_first_of("@[] ") != std::string::npos ||
      out.target.find_first_of(" #") != std::string::npos)
    return std::nullopt;
  return out;
}

std::optional<std::string> decode_webhook_secret(std::string_view secret) {
  constexpr std::string_view prefix = "whsec_";
  if (!secret.starts_with(prefix)) return std::nullopt;
  auto key = unbase64(secret.substr(prefix.size()));
  if (!key || key->empty()) return std::nullopt;
  return key;
}

std::optional<webhook_signing> signing_from_string(std::string_view name) {
  if (name == "valid") return webhook_signing::valid;
  if (name == "bad") return webhook_signing::bad;
  if (name == "missing") return webhook_signing::missing;
  return std::nullopt;
}

std::string webhook_body(const webhook_event& event) {
  // Member order as documented; nlohmann's ordered_json keeps it.
  nlohmann::ordered_json body{{"type", "operation.settled"},
                              {"idempotency_key", event.key},
                              {"state", event.state},
                              {"status", event.status}};
  return body.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
}

std::string webhook_signature(std::string_view key, std::string_view id, std::string_view timestamp,
                              std::string_view body) {
  std::string signed_content;
  signed_content.append(id).append(".").append(timestamp).append(".").append(body);
  std::array<unsigned char, EVP_MAX_MD_SIZE> mac{};
  unsigned length = 0;
  if (!HMAC(EVP_sha256(), key.data(), static_cast<int>(key.size()),
            reinterpret_cast<const unsigned char*>(signed_content.data()), signed_content.size(), mac.data(),
            &length))
    throw std::runtime_error("HMAC-SHA256 failed");
  return "v1," + encode_base64(std::string_view(reinterpret_cast<const char*>(mac.data()), length));
}

outgoing_webhook build_webhook(const webhook_settings& settings, const webhook_event& event,
                               std::int64_t unix_now_s) {
  outgoing_webhook out;
  out.id = event.id;
  out.timestamp = std::to_string(unix_now_s + event.timestamp_offset_s);
  out.body = webhook_body(event);
  out.headers = {{"Content-Type", "application/json"}, {"webhook-id", out.id}, {"webhook-timestamp", out.timestamp}};
  if (event.signing == webhook_signing::missing) return out;
  // A bad signature is well formed, just made with a key nobody configured.
  const std::string key = event.signing == webhook_signing::valid ? settings.key : "not-" + settings.key;
  out.headers.emplace_back("webhook-signature", webhook_signature(key, out.id, out.timestamp, out.body));
  return out;
}

nlohmann::json delivery_json(const webhook_delivery& delivery) {
  nlohmann::json headers = nlohmann::json::array();
  for (const auto& [name, value] : delivery.sent.headers) headers.push_back({name, value});
  nlohmann::json out{{"id", delivery.sent.id},
                     {"timestamp", delivery.sent.timestamp},
                     {"body", delivery.sent.body},
                     {"headers", std::move(headers)}};
  if (delivery.receiver_status) {
    out["receiver_status"] = *delivery.receiver_status;
    out["receiver_body"] = delivery.receiver_body;
  } else {
    out["error"] = delivery.error;
  }
  return out;
}

std::string encode_base64(std::string_view bytes, bool url) {
  const std::string_view digits = url ? "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_" : alphabet;
  std::string out;
  std::uint32_t acc = 0;
  int bits = 0;
  for (unsigned char c : bytes) {
    acc = acc << 8 | c;
    bits += 8;
    while (bits >= 6) {
      bits -= 6;
      out += digits[acc >> bits & 63];
    }
  }
  if (bits > 0) out += digits[acc << (6 - bits) & 63];
  if (!url)
    while (out.size() % 4 != 0) out += '=';
  return out;
}

}  // namespace demo_provider
