// Default outcome rules for a provider's 408 and 429 (spec section 3): not
// executed, so the agent gets 502 provider_unavailable with the provider's
// status and Retry-After, the ledger says not_executed, and the exact retry
// is forwarded again and executes once.
#include "proxy/proxy_fixture.hpp"

using namespace gw;
using namespace gw::test;

namespace {

void not_executed_case(unsigned status, const std::optional<std::string>& retry_after) {
  ProxyRig rig;
  auto& g = rig.gateway;
  auto& provider = rig.provider;
  auto c = g.client();
  g.set_clock(0);
  Write w;
  w.grant = grant_token(g.claim("tenant-a", "task-a", "region-a", 60000));
  w.key = "op-1";
  w.body = booking_body("slot-1");
  const auto key = upstream_key("tenant-a", "task-a", "op-1");
  provider.reply_status_next(status, retry_after, 1);

  auto refused = send(c, w);
  check_problem(refused, 502, "provider_unavailable");
  CHECK(refused.json()["provider_status"] == status);
  CHECK(refused.header("Retry-After") == retry_after);
  CHECK(g.db().scalar("SELECT state FROM operations WHERE op_id = 'op-1'") == "not_executed");
  CHECK(provider.requests_with_key(key) == 1);  // it did reach the provider
  CHECK(provider.effect_count() == 0);

  // The exact retry is forwarded again, with the same upstream key, and executes once.
  auto retried = send(c, w);
  CHECK(retried.status == 201);
  CHECK(retried.code() == "committed");
  CHECK(retried.header("Committed-Version") == "1");
  CHECK(provider.requests_with_key(key) == 2);
  CHECK(provider.requests().size() == 2);
  CHECK(provider.effects_for(key) == 1);
  CHECK(provider.effect_count() == 1);
  CHECK(g.db().scalar("SELECT state FROM operations WHERE op_id = 'op-1'") == "succeeded");
  CHECK(g.db().scalar("SELECT attempts FROM operations WHERE op_id = 'op-1'") == "2");

  // And from then on it is a replay, never a third forward.
  CHECK(send(c, w).code() == "historical_retry");
  CHECK(provider.requests_with_key(key) == 2);
}

}  // namespace

TEST_CASE("provider 429 with Retry-After: not_executed, 502 with provider_status and Retry-After, the retry executes once") {
  not_executed_case(429, "7");
}

TEST_CASE("provider 408 without Retry-After: not_executed, 502 with provider_status and no Retry-After, the retry executes once") {
  not_executed_case(408, std::nullopt);
}
