// gatewayctl end to end for the operator routes beyond GET /v1/admin/held
// (show, reconcile, resolve, rejections, revoke, rotate-realm), written
// against their contract before the gateway served them. The real binary, a
// real gateway and PostgreSQL, real provider faults, the demo provider's
// status lookup.
#include "gatewayctl/cli_process.hpp"
#include "proxy/proxy_fixture.hpp"
#include "support/process.hpp"

#include <doctest/doctest.h>

#include <algorithm>

using namespace gw;
using namespace gw::test;
using nlohmann::json;

namespace {


// The demo provider behind a gateway that can look operations up there; the
// lookup loop itself never runs on its own here (reconcile presses it).
struct LookupRig {
  LookupRig() : gateway(options(provider)) {}
  static GatewayOptions options(const ProviderProcess& provider) {
    auto o = proxy_options(provider);
    auto providers = o.edit;
    o.edit = [providers](nlohmann::json& c) {
      providers(c);
      c["providers"][0]["lookup"] = {{"path", "/bookings/by-key/{key}"}, {"status_pointer", "/status"}};
      c["recovery"] = {{"reconcile", {{"interval_ms", 3600000}}}};
    };
    return o;
  }
  ProviderProcess provider;
  Gateway gateway;
};

struct Routes {
  Routes() : c(rig.gateway.port()) { rig.gateway.set_clock(t0); }

  // A protected write the provider answers with a 5xx: held as unknown.
  // `path_task` is the task as written in the URL (percent-encoded).
  void unknown(const std::string& tenant, const std::string& path_task, const std::string& key) {
    Write w;
    w.tenant = tenant;
    w.task = path_task;
    w.grant = grant_token(rig.gateway.claim(tenant, path_task, "region-a", 1'000'000));
    w.key = key;
    w.body = booking_body("slot-" + key);
    rig.provider.set_fault("error_5xx", 0, 1);
    check_problem(send(c, w), 504, "unknown_outcome");
  }

  CliRun ctl(std::vector<std::string> args, const std::string& token = operator_token) const {
    auto run = run_gatewayctl(args, {{"GATEWAY_URL", "http://127.0.0.1:" + std::to_string(rig.gateway.port())},
                                     {"GATEWAY_TOKEN", token}});
    CHECK_MESSAGE(run.out.find(token) == std::string::npos, "the token was printed on stdout");
    CHECK_MESSAGE(run.err.find(token) == std::string::npos, "the token was printed on stderr");
    return run;
  }
  json ctl_json(std::vector<std::string> args) const {
    args.push_back("--json");
    auto run = ctl(args);
    REQUIRE_MESSAGE(run.exit_code == 0, run.err);
    return json::parse(run.out);
  }
  std::vector<std::string> held_operations() const {
    const auto body = ctl_json({"held"});  // the rows must outlive the loop over them
    std::vector<std::string> ids;
    for (const auto& row : body["held"]) ids.push_back(row["operation"].get<std::string>());
    return ids;
  }

  LookupRig rig;
  HttpClient c;
};

bool contains(const std::vector<std::string>& v, const std::string& s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}

}  // namespace

TEST_CASE("gatewayctl show: the operation, its attempts and evidence, and --json as the route answers") {
  Routes r;
  r.unknown("tenant-a", "task-1", "op-1");
  auto run = r.ctl({"show", "tenant-a", "task-1", "op-1"});
  CHECK(run.exit_code == 0);
  CHECK(run.err == "");
  CHECK(run.out.find("state              unknown\n") != std::string::npos);
  CHECK(run.out.find("held_reason        outcome_unknown\n") != std::string::npos);
  CHECK(run.out.find("request            POST /bookings\n") != std::string::npos);
  CHECK(run.out.find("upstream_key       " + upstream_key("tenant-a", "task-1", "op-1") + "\n") != std::string::npos);
  CHECK(run.out.find("attempts (1):\n") != std::string::npos);
  CHECK(run.out.find("region-a") != std::string::npos);
  CHECK(run.out.find("2025-12-01T00:00:00.000Z") != std::string::npos);

  auto direct = r.c.get("/v1/admin/operations/tenant-a/task-1/op-1", operator_token);
  REQUIRE(direct.status == 200);
  CHECK(r.ctl_json({"show", "tenant-a", "task-1", "op-1"}) == direct.json());
}

TEST_CASE("gatewayctl show: path segments percent-encoded, unknown ids exit 4, agent tokens exit 1") {
  Routes r;
  r.unknown("tenant-a", "trip%2F42%25", "op-slash");  // the task is "trip/42%"
  auto run = r.ctl({"show", "tenant-a", "trip/42%", "op-slash"});
  CHECK(run.exit_code == 0);
  CHECK(run.out.find("task               trip/42%\n") != std::string::npos);

  auto missing = r.ctl({"show", "tenant-a", "trip/42%", "no-such-op"});
  CHECK(missing.exit_code == 4);
  CHECK(missing.out == "");
  CHECK(missing.err == "error: not_found: no operation with this id on this task\n");

  // --json: the same exit code, the error as JSON on stderr with the gateway's problem.
  auto missing_json = r.ctl({"show", "tenant-a", "trip/42%", "no-such-op", "--json"});
  CHECK(missing_json.exit_code == 4);
  CHECK(missing_json.out == "");
  const auto error = json::parse(missing_json.err)["error"];
  CHECK(error["code"] == "not_found");
  CHECK(error["exit_code"] == 4);
  CHECK(error["http_status"] == 404);
  CHECK(error["problem"]["missing"] == "operation");
  CHECK(error["request_id"].is_string());

  // A wrong path prefix reaches the gateway but no route of it: 6, not 4.
  auto wrong_prefix = run_gatewayctl(
      {"show", "tenant-a", "trip/42%", "op-slash", "--json"},
      {{"GATEWAY_URL", "http://127.0.0.1:" + std::to_string(r.rig.gateway.port()) + "/gateway"},
       {"GATEWAY_TOKEN", operator_token}});
  CHECK(wrong_prefix.exit_code == 6);
  CHECK(json::parse(wrong_prefix.err)["error"]["problem"]["missing"] == "route");

  auto agent = r.ctl({"show", "tenant-a", "trip/42%", "op-slash"}, agent_a);
  CHECK(agent.exit_code == 1);
  CHECK(agent.err.starts_with("error: forbidden: "));
}

TEST_CASE("gatewayctl reconcile: the provider lookup's decision, consistent with held") {
  Routes r;
  r.unknown("tenant-a", "task-1", "op-1");
  auto reply = r.ctl_json({"reconcile", "tenant-a", "task-1", "op-1"});
  const auto decision = reply["lookup"]["decision"].get<std::string>();
  CHECK((decision == "resolved" || decision == "held"));
  CHECK(reply["operation"]["id"] == "op-1");
  CHECK(contains(r.held_operations(), "op-1") == (decision == "held"));

  r.unknown("tenant-a", "task-2", "op-2");
  auto table = r.ctl({"reconcile", "tenant-a", "task-2", "op-2"});
  CHECK(table.exit_code == 0);
  CHECK(table.out.starts_with("lookup           "));
  CHECK(table.out.find("\noperation          op-2\n") != std::string::npos);

  CHECK(r.ctl({"reconcile", "tenant-a", "task-2", "no-such-op"}).exit_code == 4);
  CHECK(r.ctl({"reconcile", "tenant-a", "task-2", "op-2"}, agent_a).exit_code == 1);
}

TEST_CASE("gatewayctl resolve: settles a held operation on the operator's evidence, once") {
  Routes r;
  r.unknown("tenant-a", "task-1", "op-1");
  REQUIRE(contains(r.held_operations(), "op-1"));
  auto run = r.ctl({"resolve", "tenant-a", "task-1", "op-1", "--outcome", "not_executed", "--evidence", "INC-7",
                    "--note", "not in the provider's console"});
  CHECK(run.exit_code == 0);
  CHECK(run.err == "");
  CHECK(run.out.find("state              not_executed\n") != std::string::npos);
  CHECK(run.out.find("INC-7") != std::string::npos);
  CHECK(run.out.find("operator") != std::string::npos);
  CHECK_FALSE(contains(r.held_operations(), "op-1"));

  // The evidence is kept beside the attempt, never replacing it.
  auto shown = r.ctl_json({"show", "tenant-a", "task-1", "op-1"});
  CHECK(shown["operation"]["attempts"].size() == 1);
  bool found = false;
  for (const auto& e : shown["operation"]["evidence"])
    found = found || (e["reference"] == "INC-7" && e["outcome"] == "not_executed");
  CHECK(found);

  // Settled already: the gateway refuses a second resolve.
  auto again = r.ctl({"resolve", "tenant-a", "task-1", "op-1", "--outcome", "succeeded", "--evidence", "INC-8"});
  CHECK(again.exit_code == 1);
  CHECK(again.out == "");
  CHECK(again.err.starts_with("error: "));

  CHECK(r.ctl({"resolve", "tenant-a", "task-1", "no-such-op", "--outcome", "succeeded", "--evidence", "x"}).exit_code ==
        4);
  CHECK(r.ctl({"resolve", "tenant-a", "task-1", "op-1", "--outcome", "succeeded", "--evidence", "x"}, agent_a)
            .exit_code == 1);
  CHECK(r.ctl({"resolve", "tenant-a", "task-1", "op-1", "--evidence", "x"}).exit_code == 2);
}

TEST_CASE("gatewayctl rejections: a stale owner's attempt with the grant it presented") {
  Routes r;
  auto old_grant = grant_token(r.rig.gateway.claim("tenant-a", "task-r", "region-a", 60'000));
  auto release = r.c.post_json(task_path("tenant-a", "task-r", "release"), {{"grant_token", old_grant}}, agent_a);
  REQUIRE(release.status == 200);
  r.rig.gateway.claim("tenant-a", "task-r", "region-b", 60'000);
  for (const char* key : {"late-1", "late-2"}) {
    Write w;
    w.task = "task-r";
    w.grant = old_grant;
    w.key = key;
    w.body = booking_body(key);
    check_problem(send(r.c, w), 409, "stale_owner");
  }

  auto rows = r.ctl_json({"rejections", "--task", "task-r"})["rejections"];
  REQUIRE(rows.size() == 2);
  CHECK(rows[0]["code"] == "stale_owner");
  CHECK(rows[0]["owner"] == "region-a");  // the grant presented, not the newest
  CHECK(rows[0]["epoch"] == 1);
  CHECK(rows[0]["operation"] == "late-2");  // newest first
  CHECK(rows[1]["operation"] == "late-1");

  auto table = r.ctl({"rejections", "--task", "task-r", "--code", "stale_owner"});
  CHECK(table.exit_code == 0);
  CHECK(table.out.starts_with("AT "));
  CHECK(table.out.find("late-1") != std::string::npos);
  CHECK(table.out.find("region-a") != std::string::npos);

  auto paged = r.ctl_json({"rejections", "--task", "task-r", "--limit", "1", "--all"});
  CHECK(paged["rejections"] == rows);
  CHECK(r.ctl_json({"rejections", "--code", "busy"})["rejections"].empty());
  CHECK(r.ctl({"rejections"}, agent_a).exit_code == 1);

  // --since: a duration back from the gateway's (manual) clock, or a UTC time.
  r.rig.gateway.set_clock(t0 + 600'000);  // ten minutes after both rejections
  CHECK(r.ctl_json({"rejections", "--task", "task-r", "--since", "11m"})["rejections"] == rows);
  CHECK(r.ctl_json({"rejections", "--task", "task-r", "--since", "9m"})["rejections"].empty());
  CHECK(r.ctl_json({"rejections", "--task", "task-r", "--since", "2025-12-01T00:00Z"})["rejections"] == rows);
  CHECK(r.ctl_json({"rejections", "--task", "task-r", "--since", "2025-12-01T00:00:00.001Z"})["rejections"].empty());
  // The old flag still works.
  CHECK(r.ctl_json({"rejections", "--task", "task-r", "--since-ms", std::to_string(t0)})["rejections"] == rows);
  auto bad = r.ctl({"rejections", "--since", "yesterday"});
  CHECK(bad.exit_code == 2);
  CHECK(bad.err.starts_with("error: usage: --since must be a duration such as 10m"));
}

TEST_CASE("gatewayctl revoke: the current lease ends now and the next claim gets a new epoch") {
  Routes r;
  auto grant = grant_token(r.rig.gateway.claim("tenant-a", "task-v", "region-a", 600'000));
  auto run = r.ctl({"revoke", "tenant-a", "task-v"});
  CHECK(run.exit_code == 0);
  CHECK(run.out.find("revoked_owner  region-a\n") != std::string::npos);
  CHECK(run.out.find("epoch          1\n") != std::string::npos);

  auto renew = r.c.post_json(task_path("tenant-a", "task-v", "renew"), {{"grant_token", grant}, {"lease_ms", 1000}},
                             agent_a);
  CHECK(renew.status == 409);
  // Epochs increase; a claim that found the task taken may have used one up.
  CHECK(r.rig.gateway.claim("tenant-a", "task-v", "region-b", 60'000)["grant"]["epoch"].get<std::int64_t>() > 1);

  CHECK(r.ctl({"revoke", "tenant-a", "never-claimed"}).exit_code == 4);
  CHECK(r.ctl({"revoke", "tenant-a", "task-v"}, agent_a).exit_code == 1);
}

TEST_CASE("gatewayctl rotate-realm: refused without --yes, and with it every old grant is refused") {
  Routes r;
  auto before = r.rig.gateway.claim("tenant-a", "task-x", "region-a", 600'000);
  const auto old_realm = before["grant"]["realm"].get<std::string>();

  auto unconfirmed = r.ctl({"rotate-realm"});
  CHECK(unconfirmed.exit_code == 2);
  CHECK(r.rig.gateway.claim("tenant-a", "task-y", "region-a", 600'000)["grant"]["realm"] == old_realm);

  CHECK(r.ctl({"rotate-realm", "--yes"}, agent_a).exit_code == 1);

  auto run = r.ctl({"rotate-realm", "--yes"});
  CHECK(run.exit_code == 0);
  CHECK(run.out.find("previous_realm  " + old_realm + "\n") != std::string::npos);

  auto renew = r.c.post_json(task_path("tenant-a", "task-x", "renew"),
                             {{"grant_token", grant_token(before)}, {"lease_ms", 1000}}, agent_a);
  check_problem(renew, 409, "authority_generation_mismatch");
}
