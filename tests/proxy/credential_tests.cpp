// Credentials stay on their side of the gateway: the agent's token never
// reaches the provider, and the provider's credential (injected by the
// gateway) never reaches an agent, in any reply the agent can provoke.
#include "proxy/proxy_fixture.hpp"

#include <strings.h>

using namespace gw;
using namespace gw::test;

TEST_CASE("credentials: the agent's token never reaches the provider, and the provider's never reaches the agent") {
  ProxyRig rig;
  auto& provider = rig.provider;
  auto& g = rig.gateway;
  auto c = g.client();
  g.set_clock(0);
  auto grant = grant_token(g.claim("tenant-a", "task-a", "region-a", 60000));

  std::vector<Reply> agent_replies;
  auto keep = [&](Reply r) {
    agent_replies.push_back(r);
    return r;
  };
  Write w;
  w.grant = grant;
  w.key = "op-1";
  w.body = booking_body("slot-1");
  // The agent's token in another credential header is not passed along either.
  const Headers smuggled{{"Proxy-Authorization", "Bearer " + agent_a}};
  CHECK(keep(send(c, w, smuggled)).code() == "committed");                    // executed
  CHECK(keep(send(c, w, smuggled)).code() == "historical_retry");             // replayed from the ledger
  Write taken = w;
  taken.key = "op-2";
  taken.expected_version = 1;
  CHECK(keep(send(c, taken)).code() == "rejected_by_provider");               // the provider's 409
  Write get;
  get.method = "GET";
  get.expected_version.reset();
  get.rest = "/bookings/bk_1";
  CHECK(keep(send(c, get, smuggled)).status == 200);                          // unprotected
  get.rest = "/bookings/by-key/" + upstream_key("tenant-a", "task-a", "op-1");
  CHECK(keep(send(c, get)).status == 200);
  get.rest = "/bookings/no-such-booking";
  CHECK(keep(send(c, get)).status == 404);
  keep(c.request("GET", task_path("tenant-a", "task-a", "operations/op-1"),
                 {{"Authorization", "Bearer " + agent_a}, {"Fence-Grant", grant}}));
  provider.set_fault("error_5xx", 0, 1);
  Write held = w;
  held.key = "op-3";
  held.expected_version = 1;
  held.body = booking_body("slot-3");
  CHECK(keep(send(c, held)).code() == "unknown_outcome");

  auto seen = provider.requests();
  REQUIRE(seen.size() == 6);
  for (const auto& r : seen) {
    CAPTURE(r.dump());
    bool authorization = false;
    for (const auto& [name, value] : r["headers"].items()) {
      CHECK(value.get<std::string>().find(agent_a) == std::string::npos);
      if (strcasecmp(name.c_str(), "Authorization") == 0) {
        authorization = true;
        CHECK(value == "Bearer " + provider_credential);
      }
    }
    CHECK(authorization);
  }
  for (const auto& r : agent_replies) {
    CAPTURE(r.body);
    CHECK(r.body.find(provider_credential) == std::string::npos);
    for (const auto& [name, value] : r.headers) CHECK(value.find(provider_credential) == std::string::npos);
  }
  // Nor is it kept where a replay could bring it back.
  CHECK(g.db().scalar("SELECT count(*) FROM operations WHERE response_headers::text LIKE '%" + provider_credential +
                      "%' OR position('" + provider_credential + "'::bytea in response_body) > 0") == "0");
}
