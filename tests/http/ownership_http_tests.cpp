// spec section 2 over HTTP through a real socket: every rule and status code.
#include "core/base64url.hpp"
#include "core/grant.hpp"
#include "support/gateway_fixture.hpp"

#include <doctest/doctest.h>

using namespace gw;
using namespace gw::test;
using nlohmann::json;

namespace {

Reply renew(Gateway& g, const std::string& task, const std::string& token, std::int64_t lease,
            const std::string& tenant = "tenant-a", const std::string& agent = agent_a) {
  return g.client().post_json(task_path(tenant, task, "renew"), {{"grant_token", token}, {"lease_ms", lease}}, agent);
}
Reply release(Gateway& g, const std::string& task, const std::string& token, const std::string& tenant = "tenant-a") {
  return g.client().post_json(task_path(tenant, task, "release"), {{"grant_token", token}}, agent_a);
}
Reply claim(Gateway& g, const std::string& task, const std::string& owner, std::int64_t lease,
            const std::string& tenant = "tenant-a", const std::string& agent = agent_a) {
  return g.client().post_json(task_path(tenant, task, "claim"), {{"owner", owner}, {"lease_ms", lease}}, agent);
}
}  // namespace

TEST_CASE("claim returns granted with grant, grant_token and version") {
  Gateway g;
  g.set_clock(1000);
  auto r = claim(g, "task-a", "region-a", 10);
  REQUIRE(r.status == 200);
  CHECK(r.code() == "granted");
  CHECK(r.header("Content-Type") == "application/json");
  auto j = r.json();
  CHECK(j["code"] == "granted");
  CHECK(j["grant"]["tenant"] == "tenant-a");
  CHECK(j["grant"]["task"] == "task-a");
  CHECK(j["grant"]["owner"] == "region-a");
  CHECK(j["grant"]["epoch"].get<std::int64_t>() > 0);
  CHECK(j["grant"]["expires_at_ms"] == 1010);
  CHECK(j["version"] == 0);
  auto token = decode_grant_token(j["grant_token"].get<std::string>());
  REQUIRE(token);
  CHECK(token->identity.realm == j["grant"]["realm"].get<std::string>());
  CHECK(token->identity.epoch == j["grant"]["epoch"]);
  CHECK(token->secret.size() >= 22);  // at least 128 bits
}

TEST_CASE("rule 1: busy while an unexpired lease is held, by anyone, the same owner included") {
  Gateway g;
  g.set_clock(0);
  auto first = g.claim("tenant-a", "task-a", "region-a", 10);
  g.set_clock(9);
  check_problem(claim(g, "task-a", "region-b", 10), 409, "busy");
  check_problem(claim(g, "task-a", "region-a", 10), 409, "busy");
  g.set_clock(10);
  auto second = claim(g, "task-a", "region-a", 10);
  REQUIRE(second.status == 200);
  CHECK(second.json()["grant"]["epoch"].get<std::int64_t>() > first["grant"]["epoch"].get<std::int64_t>());
}

TEST_CASE("rule 2: expired_owner at now == expires_at, with nobody else claiming") {
  Gateway g;
  g.set_clock(0);
  auto token = g.claim("tenant-a", "task-a", "region-a", 10)["grant_token"].get<std::string>();
  g.set_clock(9);
  CHECK(renew(g, "task-a", token, 1).code() == "renewed");
  g.set_clock(10);
  check_problem(renew(g, "task-a", token, 10), 409, "expired_owner");
  check_problem(release(g, "task-a", token), 409, "expired_owner");
}

TEST_CASE("rule 3: renew never shortens the lease and cannot revive an expired grant") {
  Gateway g;
  g.set_clock(0);
  auto token = g.claim("tenant-a", "task-a", "region-a", 100)["grant_token"].get<std::string>();
  g.set_clock(10);
  auto shorter = renew(g, "task-a", token, 5);
  CHECK(shorter.code() == "renewed");
  CHECK(shorter.json()["expires_at_ms"] == 100);
  auto longer = renew(g, "task-a", token, 200);
  CHECK(longer.json()["expires_at_ms"] == 210);
  g.set_clock(210);
  check_problem(renew(g, "task-a", token, 1000), 409, "expired_owner");
  auto again = claim(g, "task-a", "region-a", 10);
  CHECK(again.code() == "granted");  // the same owner claims again, with a new epoch
}

TEST_CASE("rule 3: release ends the lease now, a late release never ends a newer lease") {
  Gateway g;
  g.set_clock(0);
  auto old_token = g.claim("tenant-a", "task-a", "region-a", 100)["grant_token"].get<std::string>();
  g.set_clock(5);
  auto rel = release(g, "task-a", old_token);
  CHECK(rel.code() == "released");
  CHECK(rel.json()["expires_at_ms"] == 5);
  auto newer = claim(g, "task-a", "region-b", 100);
  REQUIRE(newer.code() == "granted");
  check_problem(release(g, "task-a", old_token), 409, "stale_owner");
  auto view = g.client().get(task_path("tenant-a", "task-a"), agent_a).json();
  CHECK(view["owner"] == "region-b");
  CHECK(view["expires_at_ms"] == 105);
}

TEST_CASE("rule 4: stale_owner after regrant, before the new owner writes anything") {
  Gateway g;
  g.set_clock(0);
  auto old_token = g.claim("tenant-a", "task-a", "region-a", 10)["grant_token"].get<std::string>();
  g.set_clock(10);
  g.claim("tenant-a", "task-a", "region-b", 10);
  g.set_clock(11);
  check_problem(renew(g, "task-a", old_token, 10), 409, "stale_owner");
}

TEST_CASE("rule 4: a different owner presenting the current epoch is stale_owner") {
  Gateway g;
  g.set_clock(0);
  auto token = g.claim("tenant-a", "task-a", "region-a", 100)["grant_token"].get<std::string>();
  check_problem(renew(g, "task-a", forge(token, "owner", "another-owner"), 10), 409, "stale_owner");
  check_problem(renew(g, "task-a", forge(token, "secret", "guessed-secret"), 10), 409, "stale_owner");
  check_problem(renew(g, "task-a", forge(token, "epoch", 999999), 10), 409, "stale_owner");
  CHECK(renew(g, "task-a", token, 10).code() == "renewed");  // the real grant is unharmed
}

TEST_CASE("rule 5: a grant from another realm is authority_generation_mismatch") {
  Gateway g;
  g.set_clock(0);
  auto token = g.claim("tenant-a", "task-a", "region-a", 100)["grant_token"].get<std::string>();
  check_problem(renew(g, "task-a", forge(token, "realm", "00000000-0000-0000-0000-000000000000"), 10), 409,
                "authority_generation_mismatch");
  Gateway other;  // an independent authority store
  other.set_clock(0);
  other.claim("tenant-a", "task-a", "region-a", 100);
  check_problem(renew(other, "task-a", token, 10), 409, "authority_generation_mismatch");
}

TEST_CASE("rule 6: a grant for another tenant or task than the path is scope_mismatch") {
  Gateway g;
  g.set_clock(0);
  auto token = g.claim("tenant-a", "task-a", "region-a", 100)["grant_token"].get<std::string>();
  g.claim("tenant-a", "task-b", "region-a", 100);
  check_problem(renew(g, "task-b", token, 10), 409, "scope_mismatch");
  check_problem(release(g, "task-b", token), 409, "scope_mismatch");
  g.claim("tenant-c", "task-a", "region-a", 100);
  check_problem(renew(g, "task-a", token, 10, "tenant-c"), 409, "scope_mismatch");
}

TEST_CASE("rule 7: an agent token is bound to its tenants, another tenant's path is forbidden") {
  Gateway g;
  g.set_clock(0);
  check_problem(claim(g, "task-a", "region-a", 10, "tenant-b", agent_a), 403, "forbidden");
  check_problem(claim(g, "task-a", "region-a", 10, "tenant-a", agent_b), 403, "forbidden");
  check_problem(g.client().get(task_path("tenant-b", "task-a"), agent_a), 403, "forbidden");
  CHECK(claim(g, "task-a", "region-a", 10, "tenant-b", agent_b).code() == "granted");
  // Nothing was created for the forbidden attempts.
  CHECK(g.db().scalar("SELECT count(*) FROM tasks WHERE tenant = 'tenant-a'") == "0");
}

TEST_CASE("invalid_grant: a token that does not decode or whose fields are not labels/integers") {
  Gateway g;
  g.set_clock(0);
  auto token = g.claim("tenant-a", "task-a", "region-a", 100)["grant_token"].get<std::string>();
  check_problem(renew(g, "task-a", "not-a-token", 10), 400, "invalid_grant");
  check_problem(renew(g, "task-a", token + "=", 10), 400, "invalid_grant");
  check_problem(renew(g, "task-a", forge(token, "epoch", true), 10), 400, "invalid_grant");
  check_problem(renew(g, "task-a", forge(token, "epoch", "1"), 10), 400, "invalid_grant");
  check_problem(renew(g, "task-a", forge(token, "owner", "has space"), 10), 400, "invalid_grant");
  check_problem(release(g, "task-a", base64url_encode("{}")), 400, "invalid_grant");
}

TEST_CASE("task view: a labelled diagnostic with owner, epoch, expiry and version") {
  Gateway g;
  g.set_clock(0);
  auto grant = g.claim("tenant-a", "task-a", "region-a", 100)["grant"];
  g.set_clock(40);
  auto r = g.client().get(task_path("tenant-a", "task-a"), agent_a);
  REQUIRE(r.status == 200);
  auto j = r.json();
  CHECK(j["diagnostic"] == true);
  CHECK(j["owner"] == "region-a");
  CHECK(j["epoch"] == grant["epoch"]);
  CHECK(j["expires_at_ms"] == 100);
  CHECK(j["now_ms"] == 40);
  CHECK(j["version"] == 0);
  CHECK(j["unresolved_operation"].is_null());
  CHECK(g.client().get(task_path("tenant-a", "task-a"), operator_token).status == 200);
  check_problem(g.client().get(task_path("tenant-a", "never-claimed"), agent_a), 404, "not_found");
}

TEST_CASE("labels in the path are percent-decoded and checked") {
  Gateway g;
  g.set_clock(0);
  CHECK(claim(g, "task%2Fwith%2Fslashes", "region-a", 10).code() == "granted");
  CHECK(g.db().scalar("SELECT task FROM tasks") == "task/with/slashes");
  check_problem(claim(g, "has%20space", "region-a", 10), 400, "invalid_request");
  check_problem(claim(g, "caf%C3%A9", "region-a", 10), 400, "invalid_request");
  check_problem(claim(g, std::string(81, 't'), "region-a", 10), 400, "invalid_request");
  CHECK(claim(g, std::string(80, 't'), "region-a", 10).code() == "granted");
}
