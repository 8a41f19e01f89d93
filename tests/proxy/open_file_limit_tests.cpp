// The real write-gateway process takes the hard open-file limit as its soft
// limit at start (main.cpp): every inbound, database and provider connection
// is a descriptor, and a soft limit of 1024 would make http.max_connections
// a promise the process cannot keep.
#include "support/gateway_fixture.hpp"
#include "support/process.hpp"

#include <doctest/doctest.h>

#include <sys/resource.h>

#include <fstream>
#include <optional>
#include <sstream>
#include <string>

using namespace gw;
using namespace gw::test;

namespace {

// "Max open files" soft and hard values from /proc/<pid>/limits.
std::pair<std::string, std::string> open_file_limits(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/limits");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("Max open files", 0) != 0) continue;
    std::istringstream fields(line.substr(std::string("Max open files").size()));
    std::string soft, hard;
    fields >> soft >> hard;
    return {soft, hard};
  }
  return {};
}

}  // namespace

TEST_CASE("open-file limit: the gateway process raises its soft limit to the hard limit at start") {
  TestDatabase db;
  auto config = test_config_json(db.url());
  config["listen"]["port"] = 0;

  rlimit ours{};
  REQUIRE(getrlimit(RLIMIT_NOFILE, &ours) == 0);
  REQUIRE(ours.rlim_max > 256);
  // The child inherits a low soft limit, as from a default shell.
  rlimit low = ours;
  low.rlim_cur = 256;
  REQUIRE(setrlimit(RLIMIT_NOFILE, &low) == 0);
  std::optional<GatewayProcess> gateway;
  try {
    gateway.emplace(config, true);
  } catch (...) {
    setrlimit(RLIMIT_NOFILE, &ours);
    throw;
  }
  REQUIRE(setrlimit(RLIMIT_NOFILE, &ours) == 0);

  const auto [soft, hard] = open_file_limits(gateway->pid());
  CHECK(hard == (ours.rlim_max == RLIM_INFINITY ? "unlimited" : std::to_string(ours.rlim_max)));
  CHECK(soft == hard);
  CHECK(gateway->client().get("/healthz", "").status == 200);
}
