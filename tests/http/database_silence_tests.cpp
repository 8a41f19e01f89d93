// Real faults where the database connection goes silent instead of closing
// (issue #8). A stopped server closes its sockets and is seen at once
// (database_fault_tests.cpp); these two are not:
//  - a proxy in between stops forwarding: the kernel still acknowledges
//    every byte, so only the pool's call_timeout watchdog can end the call;
//  - packets are dropped (a blackhole route, in a private network namespace
//    so nothing else on the machine is touched): libpq's tcp_user_timeout
//    ends the call, since the query is never acknowledged.
// One database connection (pool_size 1), made by the first claim: the claim
// under the fault must use it. A fresh connect would fail on its own
// connect_timeout, and the test would prove nothing.
// Either way the agent gets 503 authority_unavailable in seconds instead of
// a request that hangs for the kernel's ~15 minutes, and the same gateway
// serves again once the path is back. The HTTP client's own deadline is far
// longer than either timeout: it only bounds a hang.
#include "support/eventually.hpp"
#include "support/gateway_fixture.hpp"
#include "support/private_cluster.hpp"
#include "support/stalling_proxy.hpp"

#include <doctest/doctest.h>

#include <cstdlib>
#include <filesystem>
#include <string>
#include <sys/wait.h>

using namespace gw;
using namespace gw::test;

namespace {

Reply claim(const Gateway& g, const std::string& task) {
  return HttpClient(g.port(), std::chrono::seconds(90))
      .post_json(task_path("tenant-a", task, "claim"), {{"owner", "o"}, {"lease_ms", 60000}}, agent_a);
}

int shell(const std::string& command) { return std::system(command.c_str()); }

// The address PostgreSQL listens on inside the namespace: a /32 on lo whose
// local route can be swapped for a blackhole.
const std::string silent_host = "10.9.9.1";

}  // namespace

TEST_CASE("database behind a proxy that stops answering: the call is cut at call_timeout, 503, then recovery") {
  PrivateCluster pg;
  StallingProxy proxy("127.0.0.1", pg.port());
  Gateway g("host=127.0.0.1 port=" + std::to_string(proxy.port()) + " user=postgres dbname=postgres",
            {.manual_clock = true, .edit = [](nlohmann::json& c) {
               c["database"]["pool_size"] = 1;
               c["database"]["connect_timeout_s"] = 1;
               c["database"]["statement_timeout_ms"] = 1000;
               c["database"]["call_timeout_ms"] = 1500;
             }});
  REQUIRE(claim(g, "before").status == 200);

  proxy.freeze();
  auto r = claim(g, "during");
  check_problem(r, 503, "authority_unavailable");

  proxy.thaw();
  CHECK(eventually([&] { return claim(g, "after").status == 200; }));
}

TEST_CASE("database packets dropped mid-connection: tcp_user_timeout ends the call, 503, then recovery") {
  // A network namespace of its own: this test case runs again inside one, as root.
  if (!std::getenv("GW_TEST_IN_NETNS")) {
    const auto self = std::filesystem::read_symlink("/proc/self/exe").string();
    const int rc = shell("unshare -n sh -c 'ip link set lo up && ip addr add " + silent_host +
                         "/32 dev lo && GW_TEST_IN_NETNS=1 exec \"" + self +
                         "\" -tc=\"database packets dropped mid-connection*\"'");
    REQUIRE_MESSAGE(WIFEXITED(rc), "the run inside a network namespace did not exit");
    CHECK_MESSAGE(WEXITSTATUS(rc) == 0, "the run inside a private network namespace failed (needs root for "
                                        "unshare -n and ip; its output is above)");
    return;
  }
  const std::string extra = std::getenv("PG_EXTRA_OPTS") ? std::getenv("PG_EXTRA_OPTS") : "";
  setenv("PG_EXTRA_OPTS", (extra + " -c listen_addresses=127.0.0.1," + silent_host).c_str(), 1);
  PrivateCluster pg;
  Gateway g("host=" + silent_host + " port=" + std::to_string(pg.port()) + " user=postgres dbname=postgres",
            {.manual_clock = true, .edit = [](nlohmann::json& c) {
               c["database"]["pool_size"] = 1;
               c["database"]["connect_timeout_s"] = 1;
               c["database"]["statement_timeout_ms"] = 1000;
               c["database"]["tcp_user_timeout_ms"] = 1000;
               // Far away, so that only TCP can end the call here.
               c["database"]["call_timeout_ms"] = 3600000;
             }});
  REQUIRE(claim(g, "before").status == 200);

  REQUIRE(shell("ip route del local " + silent_host + " table local && ip route add blackhole " + silent_host) == 0);
  auto r = claim(g, "during");
  check_problem(r, 503, "authority_unavailable");

  REQUIRE(shell("ip route del blackhole " + silent_host + " && ip route add local " + silent_host +
                " dev lo table local") == 0);
  CHECK(eventually([&] { return claim(g, "after").status == 200; }));
}
