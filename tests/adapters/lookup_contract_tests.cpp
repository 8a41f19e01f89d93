// The demo provider's status lookup as the gateway reads it: the lookup
// config documented for it (docs/configuration.md) against provider_core's
// real replies, decided by core/reconcile.hpp. Pure: no sockets.
#include "core/reconcile.hpp"
#include "provider_core.hpp"
#include "provider_core_fixture.hpp"

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

using namespace demo_provider;
using namespace demo_provider::test;
using nlohmann::json;

namespace {

using clock = provider_core::clock;

gw::LookupConfig demo_lookup() {
  gw::LookupConfig l;
  l.path = "/bookings/by-key/{key}";
  l.status_pointer = "/status";
  l.body_pointer = "/body";
  return l;
}

plain_reply book(provider_core& core, const std::string& slot, const std::string& key, clock::time_point at) {
  return core.handle_business(
      plain_request{"POST", "/bookings", {{"Idempotency-Key", key}}, json{{"slot", slot}, {"customer", "c"}}.dump()},
      at);
}

plain_reply look_up(provider_core& core, const std::string& key, clock::time_point at) {
  return core.handle_business(plain_request{"GET", gw::lookup_target("", demo_lookup().path, key), {}, {}}, at);
}

// Asked at `asked_at_ms` of an attempt whose last possible send was 0.
gw::LookupDecision decide(const plain_reply& r, std::int64_t asked_at_ms) {
  gw::LookupInput in;
  in.status = r.status;
  in.body = r.body;
  in.last_possible_send_ms = 0;
  in.asked_at_ms = asked_at_ms;
  return gw::decide_lookup(demo_lookup(), gw::OutcomeRules::defaults(), in);
}

}  // namespace

TEST_CASE("lookup contract: an executed booking under an awkward key is found after the provider settles") {
  core_config config;
  config.settle = std::chrono::milliseconds(500);
  provider_core core(config);
  const std::string key = "gw1-a/b c%2F?\xC3\xA9";
  const plain_reply booked = book(core, "s1", key, an_hour_in);
  REQUIRE(booked.status == 201);

  // The provider's index lags: not found yet, and inside the gateway's settle window that proves nothing.
  const plain_reply early = look_up(core, key, an_hour_in + std::chrono::milliseconds(499));
  CHECK(early.status == 404);
  CHECK(decide(early, 1000).outcome == gw::OperationState::unknown);

  const plain_reply found = look_up(core, key, an_hour_in + std::chrono::milliseconds(500));
  CHECK(found.status == 200);
  const auto d = decide(found, 1000);
  CHECK(d.outcome == gw::OperationState::succeeded);
  CHECK(d.original_status == 201u);
  CHECK(d.original_body == booked.body);  // byte for byte what the agent would have got
  // The key was found by its encoded form only: the raw one is another path.
  CHECK(look_up(core, "gw1-a", an_hour_in + std::chrono::hours(1)).status == 404);
}

TEST_CASE("lookup contract: a definite rejection the provider remembered is found as rejected") {
  provider_core core({});
  REQUIRE(book(core, "s1", "k1", an_hour_in).status == 201);
  const plain_reply taken = book(core, "s1", "k2", an_hour_in);
  REQUIRE(taken.status == 409);
  const auto d = decide(look_up(core, "k2", an_hour_in), 0);
  CHECK(d.outcome == gw::OperationState::rejected);
  CHECK(d.original_status == 409u);
  CHECK(d.original_body == taken.body);
}

TEST_CASE("lookup contract: a key the provider never executed is not found, trusted only after the window") {
  provider_core core({});
  REQUIRE_FALSE(core.faults().set(json{{"mode", "error_5xx"}, {"count", 1}}));
  const plain_request request{"POST", "/bookings", {{"Idempotency-Key", "k1"}}, R"({"slot":"s1","customer":"c"})"};
  core.record(request);
  REQUIRE(core.answer(request, core.faults().take(), an_hour_in).status == 503);  // answered without executing
  core.finished();

  const plain_reply missing = look_up(core, "k1", an_hour_in + std::chrono::hours(1));
  CHECK(missing.status == 404);
  CHECK(decide(missing, 59999).outcome == gw::OperationState::unknown);
  CHECK(decide(missing, 60000).outcome == gw::OperationState::not_executed);
}
