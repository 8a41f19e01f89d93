// Standard Webhooks verification: the standard's own known answer, vectors
// computed outside the project (tests/vectors/webhook_known_answers.py),
// secret rotation, several signatures, timestamp edges and every refusal.
#include "core/webhook_signature.hpp"

#include "core/base64url.hpp"

#include <doctest/doctest.h>

#include <set>

using namespace gw;

namespace {

// The vector the standard's libraries test ("sign function works").
const std::string standard_secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
const std::string standard_id = "msg_p5jXN8AQM9LWM0D4loKWxJek";
const std::string standard_timestamp = "1614265330";
const std::string standard_body = R"({"test": 2432232314})";
const std::string standard_signature = "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=";
// A wrong v1 signature the standard's tests use, and a v2 entry to skip.
const std::string wrong_v1 = "v1,Ceo5qEr07ixe2NLpvHk3FH9bwy/WavXrAFQ/9tdO6mc=";
const std::string other_version = "v2,Ceo5qEr07ixe2NLpvHk3FH9bwy/WavXrAFQ/9tdO6mc=";

// tests/vectors/webhook_known_answers.py, second vector.
const std::string rotated_secret = "whsec_AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=";
const std::string rotated_body =
    R"({"type":"operation.settled","idempotency_key":"gw1-abc","state":"executed","status":201})";
const std::string rotated_signature = "v1,hfmG8xh/YEQJhml/sDbNJ6bhmm46v1D9H86n617lsaI=";

constexpr std::int64_t standard_now_ms = 1614265330'000;
constexpr std::int64_t tolerance_ms = 300'000;

std::string key(const std::string& secret) { return parse_webhook_secret(secret).value(); }

WebhookHeaders headers(const std::string& id, const std::string& timestamp, const std::string& signature) {
  return {{"Content-Type", "application/json"},
          {"webhook-id", id},
          {"webhook-timestamp", timestamp},
          {"webhook-signature", signature}};
}

std::optional<WebhookRefusal> refusal(const WebhookHeaders& h, const std::string& body,
                                      const std::vector<std::string>& keys, std::int64_t now_ms) {
  return verify_webhook(h, body, keys, now_ms, tolerance_ms).refusal;
}

std::optional<WebhookRefusal> standard(const WebhookHeaders& h, std::int64_t now_ms = standard_now_ms) {
  return refusal(h, standard_body, {key(standard_secret)}, now_ms);
}

}  // namespace

TEST_CASE("webhook signature: the standard's known answer signs and verifies") {
  CHECK(sign_webhook(key(standard_secret), standard_id, standard_timestamp, standard_body) == standard_signature);
  auto v = verify_webhook(headers(standard_id, standard_timestamp, standard_signature), standard_body,
                          {key(standard_secret)}, standard_now_ms, tolerance_ms);
  CHECK(v.ok());
  CHECK(v.id == standard_id);
  CHECK(v.timestamp_s == 1614265330);
}

TEST_CASE("webhook signature: a vector computed outside the project, under a rotated secret") {
  CHECK(sign_webhook(key(rotated_secret), "msg_rotation_1", "1700000000", rotated_body) == rotated_signature);
  const auto h = headers("msg_rotation_1", "1700000000", rotated_signature);
  // The provider rotated: the new secret is configured beside the old one, in either order.
  CHECK_FALSE(refusal(h, rotated_body, {key(standard_secret), key(rotated_secret)}, 1700000000'000));
  CHECK_FALSE(refusal(h, rotated_body, {key(rotated_secret), key(standard_secret)}, 1700000000'000));
  // Only the old secret configured: refused.
  CHECK(refusal(h, rotated_body, {key(standard_secret)}, 1700000000'000) == WebhookRefusal::signature_mismatch);
  CHECK(refusal(h, rotated_body, {}, 1700000000'000) == WebhookRefusal::signature_mismatch);
}

TEST_CASE("webhook signature: among several signatures one valid one passes, also when it is the last") {
  CHECK_FALSE(standard(headers(standard_id, standard_timestamp,
                               wrong_v1 + " " + other_version + " " + wrong_v1 + " " + standard_signature)));
  // As the standard's libraries test it: valid one in the middle.
  CHECK_FALSE(standard(headers(standard_id, standard_timestamp,
                               wrong_v1 + " " + other_version + " " + standard_signature + " " + wrong_v1)));
  // A sender signing with the old and the new key during its own rotation.
  const std::string both = sign_webhook(key(rotated_secret), standard_id, standard_timestamp, standard_body) + " " +
                           standard_signature;
  CHECK_FALSE(standard(headers(standard_id, standard_timestamp, both)));
  // The right MAC under another version tag does not count.
  CHECK(standard(headers(standard_id, standard_timestamp, "v1a," + standard_signature.substr(3))) ==
        WebhookRefusal::signature_mismatch);
  CHECK(standard(headers(standard_id, standard_timestamp, wrong_v1 + " " + other_version)) ==
        WebhookRefusal::signature_mismatch);
}

TEST_CASE("webhook signature: a body, id or timestamp changed by one byte is refused") {
  std::string body = standard_body;
  body[body.size() - 2] = '5';
  CHECK(refusal(headers(standard_id, standard_timestamp, standard_signature), body, {key(standard_secret)},
                standard_now_ms) == WebhookRefusal::signature_mismatch);
  CHECK(refusal(headers(standard_id, standard_timestamp, standard_signature), standard_body + " ",
                {key(standard_secret)}, standard_now_ms) == WebhookRefusal::signature_mismatch);
  CHECK(standard(headers("msg_p5jXN8AQM9LWM0D4loKWxJeK", standard_timestamp, standard_signature)) ==
        WebhookRefusal::signature_mismatch);
  CHECK(standard(headers(standard_id, "1614265331", standard_signature)) == WebhookRefusal::signature_mismatch);
}

TEST_CASE("webhook signature: malformed signature entries are skipped, never matched") {
  for (const std::string& bad : {std::string("v1,"), std::string("v1,dawfeoifkpqwoekfpqoekf"),
                                 standard_signature.substr(0, 8), standard_signature.substr(3),
                                 std::string("v1") + standard_signature.substr(3), std::string(""),
                                 std::string(" "), standard_signature + "A"}) {
    CAPTURE(bad);
    CHECK(standard(headers(standard_id, standard_timestamp, bad)) == WebhookRefusal::signature_mismatch);
  }
  // Extra spaces between entries are harmless.
  CHECK_FALSE(standard(headers(standard_id, standard_timestamp, wrong_v1 + "  " + standard_signature)));
}

TEST_CASE("webhook signature: the timestamp is accepted within the tolerance either way, edges included") {
  const auto h = headers(standard_id, standard_timestamp, standard_signature);
  CHECK_FALSE(standard(h, standard_now_ms + 300'000));  // sent exactly 300 s ago
  CHECK_FALSE(standard(h, standard_now_ms - 300'000));  // sent exactly 300 s ahead
  CHECK(standard(h, standard_now_ms + 301'000) == WebhookRefusal::timestamp_out_of_tolerance);
  CHECK(standard(h, standard_now_ms - 301'000) == WebhookRefusal::timestamp_out_of_tolerance);
  CHECK(standard(h, standard_now_ms + 300'001) == WebhookRefusal::timestamp_out_of_tolerance);
  // A configured tolerance replaces the default.
  CHECK_FALSE(verify_webhook(h, standard_body, {key(standard_secret)}, standard_now_ms + 301'000, 301'000).refusal);
  CHECK(verify_webhook(h, standard_body, {key(standard_secret)}, standard_now_ms + 1'001, 1'000).refusal ==
        WebhookRefusal::timestamp_out_of_tolerance);
  // Whole-second timestamps against a clock in milliseconds: the distance is
  // the exact one, never rounded to seconds on either side. `now` below is
  // standard_timestamp + k s + frac ms; whatever the fraction, a timestamp
  // tolerance + 1 s from the whole second of now is out, and one tolerance
  // ahead of it is in (it is tolerance - frac ahead of now).
  for (const std::int64_t frac : {0, 1, 500, 999}) {
    CAPTURE(frac);
    const std::int64_t ahead_301 = standard_now_ms - 301'000 + frac;  // timestamp 301 s - frac ahead
    const std::int64_t ahead_300 = standard_now_ms - 300'000 + frac;  // timestamp 300 s - frac ahead
    const std::int64_t ago_301 = standard_now_ms + 301'000 + frac;    // timestamp 301 s + frac ago
    CHECK(standard(h, ahead_301) == WebhookRefusal::timestamp_out_of_tolerance);
    CHECK_FALSE(standard(h, ahead_300));
    CHECK(standard(h, ago_301) == WebhookRefusal::timestamp_out_of_tolerance);
  }
  // A comparison in whole seconds cannot pass these: rounding now up (or to
  // the nearest second) accepts the loop's 301 s - frac ahead for frac 1
  // (or 999), and truncating it accepts a timestamp 300.999 s old.
  CHECK(standard(h, standard_now_ms + 300'999) == WebhookRefusal::timestamp_out_of_tolerance);
  // The check comes before the signature: a stale delivery is refused as stale.
  CHECK(standard(headers(standard_id, standard_timestamp, wrong_v1), standard_now_ms + 301'000) ==
        WebhookRefusal::timestamp_out_of_tolerance);
}

TEST_CASE("webhook signature: a timestamp that is not unix seconds is invalid") {
  for (const std::string bad : {"hello", "", "-1614265330", "+1614265330", "1614265330.5", "1614265330000000000000",
                                 " 1614265330", "0x60384cf2"}) {
    CAPTURE(bad);
    CHECK(standard(headers(standard_id, bad, standard_signature)) == WebhookRefusal::invalid_timestamp);
  }
  // Representable as seconds but not as milliseconds: far out of tolerance, no overflow.
  CHECK(standard(headers(standard_id, "9223372036854775807", standard_signature)) ==
        WebhookRefusal::timestamp_out_of_tolerance);
  CHECK(standard(headers(standard_id, "0", standard_signature)) == WebhookRefusal::timestamp_out_of_tolerance);
}

TEST_CASE("webhook signature: missing, duplicate and malformed headers have their own reasons") {
  const WebhookHeaders full = headers(standard_id, standard_timestamp, standard_signature);
  auto without = [&](const std::string& name) {
    WebhookHeaders h;
    for (const auto& f : full)
      if (f.name != name) h.push_back(f);
    return h;
  };
  CHECK(standard(without("webhook-id")) == WebhookRefusal::missing_id);
  CHECK(standard(without("webhook-timestamp")) == WebhookRefusal::missing_timestamp);
  CHECK(standard(without("webhook-signature")) == WebhookRefusal::missing_signature);
  CHECK(standard({}) == WebhookRefusal::missing_id);

  for (const std::string name : {"webhook-id", "Webhook-Timestamp", "WEBHOOK-SIGNATURE"}) {
    CAPTURE(name);
    auto h = full;
    // Even the same value twice: one field, one value.
    std::string value = name == "webhook-id" ? standard_id : name == "Webhook-Timestamp" ? standard_timestamp
                                                                                          : standard_signature;
    h.emplace_back(name, value);
    CHECK(standard(h) == WebhookRefusal::duplicate_header);
  }

  // Header names are case-insensitive.
  CHECK_FALSE(standard({{"Webhook-Id", standard_id},
                        {"WEBHOOK-TIMESTAMP", standard_timestamp},
                        {"webhook-Signature", standard_signature}}));

  for (const std::string& bad : {std::string(""), std::string("msg.1"), std::string("msg 1"),
                                 std::string("msg\x01"), std::string(256, 'a')}) {
    CAPTURE(bad);
    CHECK(standard(headers(bad, standard_timestamp, standard_signature)) == WebhookRefusal::invalid_id);
  }
  CHECK(standard(headers(std::string(255, 'a'), standard_timestamp, standard_signature)) ==
        WebhookRefusal::signature_mismatch);  // a valid id, just not the signed one
}

TEST_CASE("webhook signature: refusal names are distinct") {
  std::set<std::string_view> names;
  for (auto r : {WebhookRefusal::missing_id, WebhookRefusal::missing_timestamp, WebhookRefusal::missing_signature,
                 WebhookRefusal::duplicate_header, WebhookRefusal::invalid_id, WebhookRefusal::invalid_timestamp,
                 WebhookRefusal::timestamp_out_of_tolerance, WebhookRefusal::signature_mismatch})
    names.insert(name(r));
  CHECK(names.size() == 8);
  CHECK(name(WebhookRefusal::signature_mismatch) == "signature_mismatch");
}

TEST_CASE("webhook secrets: whsec_ prefix, standard base64, at least 24 bytes") {
  CHECK(parse_webhook_secret(standard_secret) == base64_decode("MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"));
  CHECK(parse_webhook_secret(standard_secret)->size() == 24);
  CHECK(parse_webhook_secret(rotated_secret)->size() == 32);
  // Padding may be left out when pasting.
  CHECK(parse_webhook_secret("whsec_AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8") ==
        parse_webhook_secret(rotated_secret));
  CHECK_FALSE(parse_webhook_secret("MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"));         // no prefix
  CHECK_FALSE(parse_webhook_secret("whsk_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"));    // an asymmetric key
  CHECK_FALSE(parse_webhook_secret("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaS!"));   // not base64
  CHECK_FALSE(parse_webhook_secret("whsec_MfKQ9r8GKYqrTwjUPD8ILPZI"));           // 16 bytes: too short
  CHECK_FALSE(parse_webhook_secret("whsec_"));
}

TEST_CASE("standard base64: padded encoding, padding optional but never partial") {
  CHECK(base64_encode("") == "");
  CHECK(base64_encode("a") == "YQ==");
  CHECK(base64_encode("ab") == "YWI=");
  CHECK(base64_encode("abc") == "YWJj");
  CHECK(base64_encode("\xfb\xff") == "+/8=");
  std::string bytes;
  for (int i = 0; i < 70; ++i) {
    CHECK(base64_decode(base64_encode(bytes)) == bytes);
    bytes += static_cast<char>(i * 37 + 250);
  }
  CHECK(base64_decode("YQ") == "a");
  CHECK(base64_decode("YWI") == "ab");
  CHECK_FALSE(base64_decode("YQ="));    // partial padding
  CHECK_FALSE(base64_decode("YQ=A"));   // padding in the middle
  CHECK_FALSE(base64_decode("Y==="));
  CHECK_FALSE(base64_decode("-_8="));   // the url alphabet
  CHECK_FALSE(base64_decode("YR=="));   // non-zero leftover bits
}
