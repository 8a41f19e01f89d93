#include "core/base64url.hpp"
#include "core/grant.hpp"

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

using namespace gw;

namespace {
GrantToken sample() { return {{"realm-1", {"tenant-a", "task-a"}, "region-a", 7}, "s3cret"}; }
std::string token_of(const nlohmann::json& j) { return base64url_encode(j.dump()); }
nlohmann::json sample_json() {
  return {{"realm", "realm-1"}, {"tenant", "tenant-a"}, {"task", "task-a"},
          {"owner", "region-a"}, {"epoch", 7}, {"secret", "s3cret"}};
}
}  // namespace

TEST_CASE("grant token is base64url of the compact JSON object, and decodes back") {
  auto text = encode_grant_token(sample());
  CHECK(text.find('=') == std::string::npos);
  auto json = nlohmann::json::parse(*base64url_decode(text));
  CHECK(json == sample_json());
  // The bytes an ordered object of the same members dumps, members in this order.
  const nlohmann::ordered_json ordered{{"realm", "realm-1"},  {"tenant", "tenant-a"}, {"task", "task-a"},
                                       {"owner", "region-a"}, {"epoch", 7},          {"secret", "s3cret"}};
  CHECK(*base64url_decode(text) == ordered.dump());
  auto back = decode_grant_token(text);
  REQUIRE(back);
  CHECK(back->identity.realm == "realm-1");
  CHECK(back->identity.scope == TaskScope{"tenant-a", "task-a"});
  CHECK(back->identity.owner == "region-a");
  CHECK(back->identity.epoch == 7);
  CHECK(back->secret == "s3cret");
}

TEST_CASE("grant token: anything but exactly a token is invalid_grant") {
  CHECK_FALSE(decode_grant_token(""));
  CHECK_FALSE(decode_grant_token("not base64url!"));
  CHECK_FALSE(decode_grant_token(base64url_encode("not json")));
  CHECK_FALSE(decode_grant_token(base64url_encode("[1,2]")));
  CHECK(decode_grant_token(token_of(sample_json())));
  for (const char* key : {"realm", "tenant", "task", "owner", "epoch", "secret"}) {
    CAPTURE(key);
    auto missing = sample_json();
    missing.erase(key);
    CHECK_FALSE(decode_grant_token(token_of(missing)));
  }
  auto extra = sample_json();
  extra["admin"] = true;
  CHECK_FALSE(decode_grant_token(token_of(extra)));
  for (auto bad_epoch : {nlohmann::json(true), nlohmann::json(1.0), nlohmann::json(-1),
                         nlohmann::json("7"), nlohmann::json::parse("9223372036854775808")}) {
    auto j = sample_json();
    j["epoch"] = bad_epoch;
    CHECK_FALSE(decode_grant_token(token_of(j)));
  }
  for (auto bad_label : {nlohmann::json(""), nlohmann::json(std::string(81, 'o')),
                         nlohmann::json("has space"), nlohmann::json("caf\xc3\xa9"), nlohmann::json(5)}) {
    auto j = sample_json();
    j["owner"] = bad_label;
    CHECK_FALSE(decode_grant_token(token_of(j)));
  }
}

TEST_CASE("grant secrets are fresh 256-bit labels") {
  auto a = new_grant_secret();
  auto b = new_grant_secret();
  CHECK(a != b);
  CHECK(base64url_decode(a)->size() == 32);
}

TEST_CASE("grant token: a member given twice is invalid_grant, whichever copy a reader would take") {
  const std::string good = sample_json().dump();
  REQUIRE(decode_grant_token(base64url_encode(good)));
  // The same token with a second "owner" (and, separately, a second "epoch") spliced in:
  // six distinct members still, so only the duplicate check can refuse it.
  for (const std::string extra : {R"("owner":"region-b",)", R"("epoch":8,)", R"("secret":"s3cret",)"}) {
    CAPTURE(extra);
    std::string twice = good;
    twice.insert(1, extra);
    CHECK_FALSE(decode_grant_token(base64url_encode(twice)));
  }
}
