// SIGHUP to the real write-gateway process: it reads its config file again
// and serves the new agent and operator tokens, on connections already open;
// a file that fails validation, or that changes anything a reload may not
// (config/reload.hpp), is refused with the field it names, and the running
// config stays. Provider credentials and limits: tests/proxy/provider_reload_tests.cpp.
#include "support/gateway_fixture.hpp"
#include "support/process.hpp"

#include "core/digest.hpp"

#include <doctest/doctest.h>

#include <csignal>
#include <sys/wait.h>

using namespace gw;
using namespace gw::test;
using namespace std::chrono_literals;
using nlohmann::json;

namespace {

const std::string new_agent = "rotated-agent-token";
const std::string new_operator = "rotated-operator-token";

// The write-gateway binary on a config file this test rewrites between signals.
struct ReloadRig {
  ReloadRig() : config(test_config_json(db.url())) {
    file = dir.write("gateway.json", config.dump(2));
    process = std::make_unique<ChildProcess>(
        ChildProcess::Options{test_binary("write-gateway"), {"--config", file, "--manual-clock"}, {}});
    const std::string marker = "listening on port ";
    auto line = process->wait_for_line(marker, 60s);
    port = static_cast<std::uint16_t>(std::stoi(line.substr(line.find(marker) + marker.size())));
  }

  // Writes `next` over the config file, sends SIGHUP, returns the reload's line.
  std::string reload(const json& next, const std::string& expect) {
    dir.write("gateway.json", next.dump(2));
    ::kill(process->pid(), SIGHUP);
    return process->wait_for_line(expect, 30s);
  }
  std::string reload_text(const std::string& text, const std::string& expect) {
    dir.write("gateway.json", text);
    ::kill(process->pid(), SIGHUP);
    return process->wait_for_line(expect, 30s);
  }

  TestDatabase db;
  json config;
  TempDir dir;
  std::string file;
  std::unique_ptr<ChildProcess> process;
  std::uint16_t port = 0;
};

unsigned claim_status(HttpClient& c, const std::string& task, const std::string& token) {
  return c.post_json(task_path("tenant-a", task, "claim"), {{"owner", "o"}, {"lease_ms", 60000}}, token).status;
}

}  // namespace

TEST_CASE("reload: SIGHUP serves the file's new agent and operator tokens on connections already open") {
  ReloadRig rig;
  HttpClient c(rig.port);  // one keep-alive connection across every reload below
  CHECK(claim_status(c, "t1", agent_a) == 200);
  CHECK(c.get("/v1/admin/held", operator_token).status == 200);

  // Rotate: agent A's token and the operator token replaced, agent B unchanged.
  auto next = rig.config;
  next["agents"][0]["token_sha256"] = sha256_hex(new_agent);
  next["operators"][0]["token_sha256"] = sha256_hex(new_operator);
  auto line = rig.reload(next, "write-gateway reloaded its config");
  CHECK(line == "write-gateway reloaded its config (tokens: 2 agents, 1 operators; providers: none)");

  // The connection opened before the reload answers these: the checks at
  // the end show it was never replaced, not even silently.
  check_problem(c.post_json(task_path("tenant-a", "t2", "claim"), {{"owner", "o"}, {"lease_ms", 60000}}, agent_a),
                401, "unauthenticated");
  CHECK(claim_status(c, "t2", new_agent) == 200);
  CHECK(c.post_json(task_path("tenant-b", "t2", "claim"), {{"owner", "o"}, {"lease_ms", 60000}}, agent_b).status == 200);
  check_problem(c.get("/v1/admin/held", operator_token), 401, "unauthenticated");
  CHECK(c.get("/v1/admin/held", new_operator).status == 200);
  // The new agent token keeps the old one's tenants and is still no operator.
  check_problem(c.get("/v1/admin/held", new_agent), 403, "forbidden");
  // One connection carried every request: the reload closed nothing, and
  // the client found nothing closed to reconnect past.
  CHECK(c.reconnects() == 0);
  CHECK(c.connections_opened() == 1);

  const int status = rig.process->stop(SIGTERM, 10s);
  CHECK(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);
}

TEST_CASE("reload: a bad file or a change beyond the tokens is refused with its field, and the running tokens stay") {
  ReloadRig rig;
  HttpClient c(rig.port);

  auto bad = rig.config;
  bad["agents"][0]["token_sha256"] = "not-a-hash";
  bad["operators"][0]["token_sha256"] = sha256_hex(new_operator);
  auto line = rig.reload(bad, "config reload failed");
  CHECK_MESSAGE(line.find("still serving the previous config") != std::string::npos, line);
  CHECK_MESSAGE(line.find("agents[0].token_sha256") != std::string::npos, line);

  line = rig.reload_text("{\"listen\": ", "config reload failed");
  CHECK_MESSAGE(line.find(rig.file) != std::string::npos, line);

  auto wider = rig.config;
  wider["operators"][0]["token_sha256"] = sha256_hex(new_operator);
  wider["http"]["max_body_bytes"] = 4096;
  line = rig.reload(wider, "config reload refused");
  CHECK(line ==
        "write-gateway config reload refused, still serving the previous config: $.http.max_body_bytes changed; "
        "only agents, operators and providers' credentials and limits are reloaded, restart for the rest");

  // None of the three took effect, not even the new operator token of the last two.
  CHECK(claim_status(c, "t1", agent_a) == 200);
  CHECK(c.get("/v1/admin/held", operator_token).status == 200);
  check_problem(c.get("/v1/admin/held", new_operator), 401, "unauthenticated");

  // Back to a valid token-only change: it is taken.
  auto good = rig.config;
  good["operators"][0]["token_sha256"] = sha256_hex(new_operator);
  rig.reload(good, "write-gateway reloaded its config");
  CHECK(c.get("/v1/admin/held", new_operator).status == 200);
  // Neither the refused reloads nor the taken one closed the connection.
  CHECK(c.reconnects() == 0);
  CHECK(c.connections_opened() == 1);
}
