// Tenant isolation at the provider (issue #8): each tenant's requests go out
// with that tenant's own provider account, so an agent of one tenant, with a
// perfectly valid grant of its own, cannot read or change another tenant's
// data there. Checked at the provider, not only in the gateway's replies.
#include "proxy/proxy_fixture.hpp"

using namespace gw;
using namespace gw::test;

namespace {

std::string authorization_of(const nlohmann::json& request) {
  for (const auto& [name, value] : request["headers"].items())
    if (name == "Authorization") return value.get<std::string>();
  return "";
}

}  // namespace

TEST_CASE("tenant isolation: tenant-b's agent with its own grant cannot read or cancel tenant-a's booking") {
  ProxyRig rig;
  auto& g = rig.gateway;
  auto& provider = rig.provider;
  auto c = g.client();
  g.set_clock(0);

  Write booking;
  booking.grant = grant_token(g.claim("tenant-a", "task-a", "region-a", 60000));
  booking.key = "book-1";
  booking.body = booking_body("slot-1");
  auto made = send(c, booking);
  REQUIRE(made.code() == "committed");
  const std::string id = made.json()["booking_id"].get<std::string>();

  // tenant-b: a valid agent, a valid grant for its own task, tenant-a's booking id.
  Write read;
  read.tenant = "tenant-b";
  read.task = "evil";
  read.agent = agent_b;
  read.method = "GET";
  read.expected_version.reset();
  read.rest = "/bookings/" + id;
  CHECK(send(c, read).status == 404);

  Write cancel = read;
  cancel.method = "DELETE";
  cancel.grant = grant_token(g.claim("tenant-b", "evil", "mallory", 60000, agent_b));
  cancel.key = "cancel-1";
  cancel.expected_version = 0;
  auto refused = send(c, cancel);
  CHECK(refused.status == 404);
  CHECK(refused.code() == "rejected_by_provider");

  // tenant-a's booking is untouched, and each request used its own tenant's account.
  Write check = read;
  check.tenant = "tenant-a";
  check.task = "task-a";
  check.agent = agent_a;
  auto still = send(c, check);
  REQUIRE(still.status == 200);
  CHECK(still.json()["status"] == "confirmed");
  CHECK(provider.effects_for(upstream_key("tenant-b", "evil", "cancel-1")) == 0);
  auto seen = provider.requests();
  REQUIRE(seen.size() == 4);
  CHECK(authorization_of(seen[0]) == "Bearer " + provider_credential);
  CHECK(authorization_of(seen[1]) == "Bearer " + provider_credential_b);
  CHECK(authorization_of(seen[2]) == "Bearer " + provider_credential_b);
  CHECK(authorization_of(seen[3]) == "Bearer " + provider_credential);
}

TEST_CASE("tenant isolation: a tenant the provider has no account for is refused before anything is sent") {
  ProviderProcess provider;
  auto options = proxy_options(provider);
  auto providers = options.edit;
  options.edit = [providers](nlohmann::json& c) {
    providers(c);
    c["providers"][0]["credential"]["tenants"].erase("tenant-c");
  };
  Gateway g(options);
  g.set_clock(0);
  auto c = g.client();
  Write w;
  w.tenant = "tenant-c";  // agent_a is bound to tenant-c, but the provider has no tenant-c account
  w.grant = grant_token(g.claim("tenant-c", "task-c", "region-a", 60000));
  w.key = "op-1";
  w.body = booking_body("slot-1");
  check_problem(send(c, w), 403, "forbidden");
  Write get = w;
  get.method = "GET";
  get.expected_version.reset();
  get.rest = "/bookings/bk_1";
  check_problem(send(c, get), 403, "forbidden");
  CHECK(provider.requests().empty());
  CHECK(g.db().scalar("SELECT count(*) FROM operations") == "0");
}
