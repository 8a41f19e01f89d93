// The demo provider's accounts: one per credential, each with its own data,
// idempotency keys and status lookup, like a real provider's customers. The
// gateway's tenant isolation is only as good as this separation in the
// stand-in it is tested against. Pure: no sockets.
#include "provider_core.hpp"
#include "provider_core_fixture.hpp"

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include <algorithm>

using namespace demo_provider;
using namespace demo_provider::test;
using nlohmann::json;

namespace {

plain_reply as(provider_core& core, const std::string& credential, const std::string& method, const std::string& target,
               const std::string& key = "", const std::string& body = "") {
  header_list headers;
  if (!credential.empty()) headers.emplace_back("Authorization", "Bearer " + credential);
  if (!key.empty()) headers.emplace_back("Idempotency-Key", key);
  return core.handle_business(plain_request{method, target, headers, body}, an_hour_in);
}

std::string booking_body(const std::string& slot) { return json{{"slot", slot}, {"customer", "c"}}.dump(); }

}  // namespace

TEST_CASE("accounts: a booking made under one credential does not exist under another") {
  core_config config;
  config.credentials = {"key-a", "key-b"};
  provider_core core(config);
  auto made = as(core, "key-a", "POST", "/bookings", "k-1", booking_body("slot-1"));
  REQUIRE(made.status == 201);
  const auto id = json::parse(made.body)["booking_id"].get<std::string>();

  CHECK(as(core, "key-a", "GET", "/bookings/" + id).status == 200);
  CHECK(as(core, "key-b", "GET", "/bookings/" + id).status == 404);
  CHECK(as(core, "key-b", "DELETE", "/bookings/" + id, "k-cancel").status == 404);
  CHECK(json::parse(as(core, "key-a", "GET", "/bookings/" + id).body)["status"] == "confirmed");
  // The same slot is free in the other account: separate data, not separate views.
  CHECK(as(core, "key-b", "POST", "/bookings", "k-2", booking_body("slot-1")).status == 201);
}

TEST_CASE("accounts: idempotency keys and the status lookup belong to one account") {
  core_config config;
  config.credentials = {"key-a", "key-b"};
  provider_core core(config);
  REQUIRE(as(core, "key-a", "POST", "/bookings", "shared-key", booking_body("slot-1")).status == 201);
  CHECK(as(core, "key-a", "GET", "/bookings/by-key/shared-key").status == 200);
  CHECK(as(core, "key-b", "GET", "/bookings/by-key/shared-key").status == 404);
  // The same key in the other account is a new request there, not a replay of account a's.
  auto other = as(core, "key-b", "POST", "/bookings", "shared-key", booking_body("slot-2"));
  CHECK(other.status == 201);
  CHECK(std::none_of(other.headers.begin(), other.headers.end(),
                     [](const auto& h) { return h.first == "Idempotent-Replayed"; }));
  CHECK(core.effects_json()["effects"] == 2);
}

TEST_CASE("accounts: an unknown or missing credential is 401, and without credentials any caller is one account") {
  core_config config;
  config.credentials = {"key-a"};
  provider_core core(config);
  CHECK(as(core, "key-z", "GET", "/bookings/bk_1").status == 401);
  CHECK(as(core, "", "GET", "/bookings/bk_1").status == 401);
  CHECK(core.handle_business(plain_request{"GET", "/bookings/bk_1", {{"Authorization", "Basic key-a"}}, ""}, an_hour_in).status ==
        401);

  provider_core open(core_config{});
  REQUIRE(as(open, "", "POST", "/bookings", "k", booking_body("slot-1")).status == 201);
  CHECK(as(open, "anything", "GET", "/bookings/by-key/k").status == 200);
}

TEST_CASE("accounts: reset empties every account") {
  core_config config;
  config.credentials = {"key-a", "key-b"};
  provider_core core(config);
  REQUIRE(as(core, "key-a", "POST", "/bookings", "k-1", booking_body("slot-1")).status == 201);
  REQUIRE(as(core, "key-b", "POST", "/bookings", "k-2", booking_body("slot-1")).status == 201);
  core.reset();
  CHECK(as(core, "key-a", "GET", "/bookings/by-key/k-1").status == 404);
  CHECK(as(core, "key-b", "GET", "/bookings/by-key/k-2").status == 404);
  CHECK(as(core, "key-a", "POST", "/bookings", "k-3", booking_body("slot-1")).status == 201);
}
