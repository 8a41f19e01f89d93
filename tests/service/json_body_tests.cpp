#include "core/grant.hpp"
#include "core/recent_values.hpp"
#include "service/api/json_body.hpp"
#include "service/api/refusal.hpp"

#include <doctest/doctest.h>

using namespace gw;

namespace {
std::string rejection(const std::function<void()>& f, Code expected) {
  try {
    f();
  } catch (const Refusal& r) {
    CHECK(r.code == expected);
    return r.what();
  }
  FAIL("no rejection");
  return "";
}
}  // namespace

TEST_CASE("JSON body: malformed, non-object and unknown fields are invalid_request") {
  rejection([] { JsonBody("{", {"owner"}); }, Code::invalid_request);
  rejection([] { JsonBody("", {"owner"}); }, Code::invalid_request);
  rejection([] { JsonBody("[]", {"owner"}); }, Code::invalid_request);
  auto d = rejection([] { JsonBody(R"({"owner":"a","leas_ms":1})", {"owner", "lease_ms"}); },
                     Code::invalid_request);
  CHECK(d.find("leas_ms") != std::string::npos);
}

TEST_CASE("JSON body: each bad field is named") {
  JsonBody missing("{}", {"owner", "lease_ms"});
  CHECK(rejection([&] { missing.label("owner"); }, Code::invalid_request).find("'owner' is required") !=
        std::string::npos);
  const std::string long_owner = R"({"owner":")" + std::string(81, 'x') + "\"}";
  for (const char* bad : {R"({"owner":""})", R"({"owner":"has space"})", R"({"owner":5})",
                          "{\"owner\":\"caf\xc3\xa9\"}", long_owner.c_str()}) {
    CAPTURE(bad);
    JsonBody b(bad, {"owner"});
    CHECK(rejection([&] { b.label("owner"); }, Code::invalid_request).find("'owner'") != std::string::npos);
  }
  for (const char* bad : {R"({"lease_ms":true})", R"({"lease_ms":1.0})", R"({"lease_ms":-1})",
                          R"({"lease_ms":0})", R"({"lease_ms":"10"})", R"({"lease_ms":9223372036854775808})"}) {
    CAPTURE(bad);
    JsonBody b(bad, {"lease_ms"});
    CHECK(rejection([&] { b.integer("lease_ms", 1); }, Code::invalid_request).find("'lease_ms'") !=
          std::string::npos);
  }
  JsonBody ok(R"({"owner":"region-a","lease_ms":9223372036854775807})", {"owner", "lease_ms"});
  CHECK(ok.label("owner") == "region-a");
  CHECK(ok.integer("lease_ms", 1) == INT64_MAX);
}

TEST_CASE("grant token: parsed again, the same text gives the same grant, and any other text is decoded afresh") {
  GrantToken a{{"realm-1", {"tenant-a", "trip-1"}, "worker-a", 3}, new_grant_secret()};
  GrantToken b = a;
  b.identity.epoch = 4;
  b.secret = new_grant_secret();
  const auto text_a = encode_grant_token(a), text_b = encode_grant_token(b);
  for (int round = 0; round < 3; ++round) {
    const auto got_a = parse_grant_token(text_a, "Fence-Grant");
    CHECK(got_a.identity.epoch == 3);
    CHECK(got_a.secret == a.secret);
    CHECK(got_a.identity.owner == "worker-a");
    CHECK(got_a.identity.scope.task == "trip-1");
    const auto got_b = parse_grant_token(text_b, "Fence-Grant");
    CHECK(got_b.identity.epoch == 4);
    CHECK(got_b.secret == b.secret);
  }
  // Another grant whose text has the same length and lands in the same slot
  // of the thread's table is decoded for itself, never answered from the slot.
  GrantToken c = a;
  std::string text_c;
  do {
    c.secret = new_grant_secret();
    text_c = encode_grant_token(c);
  } while (text_c.size() != text_a.size() ||
           RecentValues<GrantToken>::slot_of(text_c) != RecentValues<GrantToken>::slot_of(text_a));
  CHECK(parse_grant_token(text_c, "Fence-Grant").secret == c.secret);
  CHECK(parse_grant_token(text_a, "Fence-Grant").secret == a.secret);
  // Once a valid token is known, a corrupted copy of it is still refused.
  auto corrupted = text_a;
  corrupted.back() = '!';  // not base64url
  rejection([&] { parse_grant_token(corrupted, "Fence-Grant"); }, Code::invalid_grant);
  rejection([&] { parse_grant_token(text_a + "x", "Fence-Grant"); }, Code::invalid_grant);
}

TEST_CASE("JSON body: a grant token that does not decode is invalid_grant") {
  JsonBody b(R"({"grant_token":"garbage!"})", {"grant_token"});
  rejection([&] { b.grant_token("grant_token"); }, Code::invalid_grant);
  JsonBody n(R"({"grant_token":42})", {"grant_token"});
  rejection([&] { n.grant_token("grant_token"); }, Code::invalid_request);
}
