// SIGHUP to the real write-gateway process in front of a real demo provider:
// a provider's credentials (a rotated credential file) and limits change
// without a restart, checked by what reached the provider; forwards in flight
// finish with the settings they started with, open connections (the agent's
// and the pooled ones to the provider) stay open, and a bad new file changes
// nothing.
#include "proxy/proxy_fixture.hpp"

#include "support/eventually.hpp"
#include "support/process.hpp"

#include <strings.h>

#include <sys/wait.h>

#include <csignal>
#include <filesystem>
#include <fstream>
#include <functional>
#include <future>
#include <set>

using namespace gw;
using namespace gw::test;
using namespace std::chrono_literals;
using nlohmann::json;

namespace {

// tenant-a's account at the provider after a rotation (the demo provider
// keeps one account per credential, so both are accepted).
const std::string rotated_credential = "demo-provider-credential-rotated-7d20e1";

const std::string reloaded_line =
    "write-gateway reloaded its config (tokens: 2 agents, 1 operators; providers: booking)";

std::string authorization(const json& recorded) {
  for (const auto& [name, value] : recorded["headers"].items())
    if (strcasecmp(name.c_str(), "Authorization") == 0) return value.get<std::string>();
  return "";
}

// The provider's record of the request that carried this upstream key.
json request_with_key(const ProviderProcess& provider, const std::string& key) {
  for (const auto& r : provider.requests())
    for (const auto& [name, value] : r["headers"].items())
      if (strcasecmp(name.c_str(), "Idempotency-Key") == 0 && value == key) return r;
  return nullptr;
}

// The booking provider behind a write-gateway process whose tenant-a
// credential is the file tenant-a.key beside its config (tenant-b's comes
// from the environment). Idle connections live long on both sides, so only
// a reload could close one.
struct ReloadRig {
  explicit ReloadRig(const std::function<void(json&)>& edit = {})
      : provider("booking", {provider_credential, rotated_credential, provider_credential_b, provider_credential_c},
                 {"--idle-timeout-ms", "600000"}),
        config(test_config_json(db.url())) {
    ProviderSettings settings;
    settings.request_timeout_ms = 600000;  // a held request waits for the test, not for a deadline
    auto p = booking_provider_config(provider, settings);
    p["credential"] = {{"tenants",
                        {{"tenant-a", {{"file", "tenant-a.key"}}}, {"tenant-b", {{"env", booking_credential_env_b}}}}}};
    p["idle_retire_ms"] = 600000;
    config["providers"] = json::array({p});
    if (edit) edit(config);
    gateway = std::make_unique<GatewayProcess>(config, true, booking_credential_envs(), true,
                                               std::vector<std::pair<std::string, std::string>>{
                                                   {"tenant-a.key", provider_credential + "\n"}});
  }

  // Replaces a file beside the config the way a secret mount is updated:
  // written aside, then renamed over the old one.
  void write_secret(const std::string& name, const std::string& content) const {
    const auto path = gateway->dir() + "/" + name;
    std::ofstream(path + ".new", std::ios::binary | std::ios::trunc) << content;
    std::filesystem::permissions(path + ".new", std::filesystem::perms::owner_read | std::filesystem::perms::owner_write);
    std::filesystem::rename(path + ".new", path);
  }
  std::string secret_path(const std::string& name) const { return gateway->dir() + "/" + name; }

  // Writes `next` as the config file, sends SIGHUP, returns the stdout line
  // that contains `expect`.
  std::string reload(const json& next, const std::string& expect) const {
    gateway->write_config(next);
    gateway->signal(SIGHUP);
    return gateway->wait_for_line(expect, 30s);
  }

  // SIGTERM; the process drains and exits 0 (under ASan, also without a report).
  void stop_cleanly() const {
    const int status = gateway->terminate(60s);
    CHECK(WIFEXITED(status));
    CHECK(WEXITSTATUS(status) == 0);
  }

  std::string claim(HttpClient& c, const std::string& task, const std::string& tenant = "tenant-a",
                    const std::string& token = agent_a) const {
    auto r = c.post_json(task_path(tenant, task, "claim"), {{"owner", "region-a"}, {"lease_ms", 600000}}, token);
    REQUIRE_MESSAGE(r.code() == "granted", r.body);
    return grant_token(r.json());
  }

  TestDatabase db;
  ProviderProcess provider;
  json config;
  std::unique_ptr<GatewayProcess> gateway;
};

Write write_for(const std::string& task, const std::string& grant, const std::string& key,
                std::int64_t expected_version = 0) {
  Write w;
  w.task = task;
  w.grant = grant;
  w.key = key;
  w.expected_version = expected_version;
  w.body = booking_body(task + "-" + key);
  return w;
}

}  // namespace

TEST_CASE("provider reload: a rotated credential file reaches the provider from the next forward, on a connection opened before") {
  ReloadRig rig([](json& config) {
    config["providers"][0]["lookup"] = {{"path", "/bookings/by-key/{key}"}, {"status_pointer", "/status"}};
    config["recovery"] = {{"reconcile", {{"interval_ms", 3600000}}}};  // lookups only when asked
  });
  auto c = rig.gateway->client();  // one keep-alive connection to the gateway for the whole test
  const auto grant = rig.claim(c, "task-a");
  auto w = write_for("task-a", grant, "op-1");
  REQUIRE(send(c, w).code() == "committed");
  CHECK(authorization(rig.provider.requests().back()) == "Bearer " + provider_credential);

  rig.write_secret("tenant-a.key", rotated_credential + "\n");
  CHECK(rig.reload(rig.config, "write-gateway reloaded its config") == reloaded_line);

  w = write_for("task-a", grant, "op-2", 1);
  CHECK(send(c, w).code() == "committed");
  CHECK(c.connections_opened() == 1);
  CHECK(authorization(rig.provider.requests().back()) == "Bearer " + rotated_credential);
  Write read;  // an unfenced read goes out with the tenant's current credential too
  read.method = "GET";
  read.expected_version.reset();
  read.rest = "/bookings/bk_1";
  CHECK(send(c, read).status == 200);
  CHECK(authorization(rig.provider.requests().back()) == "Bearer " + rotated_credential);
  // tenant-b's account, from the environment, did not move.
  const auto grant_b = rig.claim(c, "task-b", "tenant-b", agent_b);
  auto wb = write_for("task-b", grant_b, "op-1");
  wb.tenant = "tenant-b";
  wb.agent = agent_b;
  CHECK(send(c, wb).code() == "committed");
  CHECK(authorization(rig.provider.requests().back()) == "Bearer " + provider_credential_b);

  // A held operation's lookup asks with the credential current when it runs.
  rig.provider.set_fault("error_5xx", 0, 1);
  w = write_for("task-a", grant, "op-3", 2);
  check_problem(send(c, w), 504, "unknown_outcome");
  rig.write_secret("tenant-a.key", provider_credential_c);  // rotated again, without a newline this time
  CHECK(rig.reload(rig.config, "write-gateway reloaded its config") == reloaded_line);
  auto looked = c.post_json("/v1/admin/operations/tenant-a/task-a/op-3/reconcile", json::object(), operator_token);
  REQUIRE_MESSAGE(looked.status == 200, looked.body);
  const auto lookup = rig.provider.requests().back();
  CHECK(lookup["method"] == "GET");
  CHECK(lookup["target"].get<std::string>().starts_with("/bookings/by-key/"));
  CHECK(authorization(lookup) == "Bearer " + provider_credential_c);
  CHECK(c.connections_opened() == 1);

  // The log says what changed, by path, and holds no credential.
  REQUIRE(eventually([&] { return rig.gateway->events("config_reloaded").size() == 2; }));
  for (const auto& e : rig.gateway->events("config_reloaded")) {
    CAPTURE(e.dump());
    CHECK(e["changed"] == json::array({"$.providers[0].credential.tenants.tenant-a.file"}));
    CHECK(e["providers"] == json::array({"booking"}));
    CHECK(e["agents"] == 2);
  }
  const auto log = rig.gateway->log();
  for (const auto& secret : {provider_credential, rotated_credential, provider_credential_c}) {
    CAPTURE(secret);
    CHECK(log.find(secret) == std::string::npos);
  }
  rig.stop_cleanly();
}

TEST_CASE("provider reload: a forward in flight keeps the credential it started with, and its outcome is recorded") {
  ReloadRig rig;
  auto c = rig.gateway->client();
  const auto grant_a = rig.claim(c, "task-a");
  const auto grant_b = rig.claim(c, "task-b");
  const auto held = write_for("task-a", grant_a, "op-1");

  rig.provider.hold_next(1);
  auto in_flight = std::async(std::launch::async, [&, port = rig.gateway->port()] {
    HttpClient own(port);
    return send(own, held);
  });
  ReleaseOnExit release_on_exit(rig.provider);
  REQUIRE(rig.provider.wait_for_held(1));

  rig.write_secret("tenant-a.key", rotated_credential + "\n");
  CHECK(rig.reload(rig.config, "write-gateway reloaded its config") == reloaded_line);
  // Meanwhile a new forward goes out with the new credential.
  CHECK(send(c, write_for("task-b", grant_b, "op-2")).code() == "committed");

  CHECK(rig.provider.release() == 1);
  const auto reply = in_flight.get();
  CHECK(reply.status == 201);
  CHECK(reply.code() == "committed");
  const auto held_key = upstream_key("tenant-a", "task-a", "op-1");
  CHECK(authorization(request_with_key(rig.provider, held_key)) == "Bearer " + provider_credential);
  CHECK(authorization(request_with_key(rig.provider, upstream_key("tenant-a", "task-b", "op-2"))) ==
        "Bearer " + rotated_credential);
  CHECK(rig.provider.effects_for(held_key) == 1);
  // Recorded: the receipt says succeeded, and the task moved on.
  auto receipt = c.request("GET", task_path("tenant-a", "task-a", "operations/op-1"),
                           {{"Authorization", "Bearer " + agent_a}, {"Fence-Grant", grant_a}});
  REQUIRE_MESSAGE(receipt.status == 200, receipt.body);
  CHECK(receipt.json()["operation"]["state"] == "succeeded");
  CHECK(receipt.json()["operation"]["committed_version"] == 1);
  CHECK(send(c, write_for("task-a", grant_a, "op-3", 1)).code() == "committed");
  CHECK(authorization(rig.provider.requests().back()) == "Bearer " + rotated_credential);
  rig.stop_cleanly();
}

TEST_CASE("provider reload: max_connections changes take effect for new forwards, and no connection is closed") {
  ReloadRig rig([](json& config) {
    config["providers"][0]["max_connections"] = 1;
    config["providers"][0]["max_queued"] = 0;
  });
  auto c = rig.gateway->client();
  Write read;
  read.method = "GET";
  read.expected_version.reset();
  read.rest = "/bookings/none";

  // An idle pooled connection to the provider survives a reload.
  CHECK(send(c, read).status == 404);
  const auto first_connection = rig.provider.requests().back()["connection"];
  auto next = rig.config;
  next["providers"][0]["connect_timeout_ms"] = 1500;
  CHECK(rig.reload(next, "write-gateway reloaded its config") == reloaded_line);
  CHECK(send(c, read).status == 404);
  CHECK(rig.provider.requests().back()["connection"] == first_connection);

  // One connection, no queue: with one forward held, the next is refused, nothing sent.
  std::vector<std::string> grants;
  for (const char* task : {"t1", "t2", "t3"}) grants.push_back(rig.claim(c, task));
  const auto w1 = write_for("t1", grants[0], "op-1");
  const auto w2 = write_for("t2", grants[1], "op-2");
  rig.provider.hold_next(1);
  auto in_flight = std::async(std::launch::async, [&, port = rig.gateway->port()] {
    HttpClient own(port);
    return send(own, w1);
  });
  ReleaseOnExit release_on_exit(rig.provider);
  REQUIRE(rig.provider.wait_for_held(1));
  check_problem(send(c, w2), 502, "provider_unavailable");
  CHECK(rig.provider.requests_with_key(upstream_key("tenant-a", "t2", "op-2")) == 0);

  // Raised: the same operation, retried, now goes out beside the held one.
  next["providers"][0]["max_connections"] = 2;
  CHECK(rig.reload(next, "write-gateway reloaded its config") == reloaded_line);
  CHECK(send(c, w2).code() == "committed");
  CHECK(rig.provider.activity()["held"] == 1);

  // Lowered while two connections are open and one is busy: over the new limit, refused.
  next["providers"][0]["max_connections"] = 1;
  CHECK(rig.reload(next, "write-gateway reloaded its config") == reloaded_line);
  check_problem(send(c, write_for("t3", grants[2], "op-3")), 502, "provider_unavailable");

  // The held forward was never cut: it finishes and is recorded.
  CHECK(rig.provider.release() == 1);
  CHECK(in_flight.get().code() == "committed");
  CHECK(send(c, write_for("t3", grants[2], "op-3")).code() == "committed");
  CHECK(send(c, read).status == 404);
  // Every forward went out on the two connections the pool opened: none was closed and replaced.
  std::set<std::int64_t> connections;
  for (const auto& r : rig.provider.requests()) connections.insert(r["connection"].get<std::int64_t>());
  CHECK(connections.size() == 2);
  REQUIRE(eventually([&] { return rig.gateway->events("config_reloaded").size() == 3; }));
  CHECK(rig.gateway->events("config_reloaded")[1]["changed"] == json::array({"$.providers[0].max_connections"}));
  rig.stop_cleanly();
}

TEST_CASE("provider reload: a bad credential file, or a fixed field changed beside it, is refused and the old credential stays") {
  ReloadRig rig;
  auto c = rig.gateway->client();
  const auto grant = rig.claim(c, "task-a");
  std::int64_t version = 0;
  // One committed write; the credential the provider saw for it.
  auto forward = [&] {
    const auto key = "op-" + std::to_string(version + 1);
    auto r = send(c, write_for("task-a", grant, key, version));
    REQUIRE_MESSAGE(r.code() == "committed", r.body);
    ++version;
    return authorization(request_with_key(rig.provider, upstream_key("tenant-a", "task-a", key)));
  };
  const std::string old_header = "Bearer " + provider_credential;
  const std::string failed = "write-gateway config reload failed, still serving the previous config: ";
  const std::string field = "$.providers[0].credential.tenants.tenant-a";
  CHECK(forward() == old_header);

  // The file gone (a secret unmounted).
  std::filesystem::remove(rig.secret_path("tenant-a.key"));
  auto line = rig.reload(rig.config, "config reload failed");
  std::string expected = failed;
  expected += rig.gateway->config_file();
  expected += ": ";
  expected += field;
  expected += ".file: cannot read ";
  expected += rig.secret_path("tenant-a.key");
  expected += ": No such file or directory";
  CHECK(line == expected);
  CHECK(forward() == old_header);

  // A value no header can carry, then another tenant's credential (an undeclared shared account).
  rig.write_secret("tenant-a.key", rotated_credential + "\x01\n");
  line = rig.reload(rig.config, "config reload failed");
  CHECK_MESSAGE(line.ends_with(field + ".file: the credential must be printable ASCII"), line);
  CHECK(line.find(rotated_credential) == std::string::npos);
  rig.write_secret("tenant-a.key", provider_credential_b);
  line = rig.reload(rig.config, "config reload failed");
  CHECK_MESSAGE(line.find("$.providers[0].credential.tenants.tenant-b: has the same credential as tenant tenant-a") !=
                    std::string::npos,
                line);
  CHECK(line.find(provider_credential_b) == std::string::npos);
  CHECK(forward() == old_header);

  // A good new credential and a limit, with a fixed field changed beside them: nothing is taken.
  rig.write_secret("tenant-a.key", rotated_credential + "\n");
  auto next = rig.config;
  next["providers"][0]["max_connections"] = 5;
  next["providers"][0]["outcomes"] = {{"not_executed", {408, 429, 503}}};
  line = rig.reload(next, "config reload refused");
  CHECK(line ==
        "write-gateway config reload refused, still serving the previous config: $.providers[0].outcomes changed; "
        "only agents, operators and providers' credentials and limits are reloaded, restart for the rest");
  CHECK(forward() == old_header);

  // The same rotation alone is taken.
  CHECK(rig.reload(rig.config, "write-gateway reloaded its config") == reloaded_line);
  CHECK(forward() == "Bearer " + rotated_credential);

  REQUIRE(eventually([&] { return rig.gateway->events("config_reloaded").size() == 1; }));
  CHECK(rig.gateway->events("config_reload_failed").size() == 3);
  const auto refused = rig.gateway->events("config_reload_refused");
  REQUIRE(refused.size() == 1);
  CHECK(refused[0]["field"] == "$.providers[0].outcomes");
  const auto log = rig.gateway->log();
  for (const auto& secret : {provider_credential, rotated_credential, provider_credential_b}) {
    CAPTURE(secret);
    CHECK(log.find(secret) == std::string::npos);
  }
  rig.stop_cleanly();
}
