#include "support/private_cluster.hpp"

#include "support/process.hpp"

#include <doctest/doctest.h>

#include <cstdlib>
#include <filesystem>

namespace gw::test {

PrivateCluster::PrivateCluster() {
  const char* script = std::getenv("GATEWAY_TEST_PG_SCRIPT");
  REQUIRE_MESSAGE(script, "GATEWAY_TEST_PG_SCRIPT is not set: run the tests through scripts/test.sh");
  script_ = script;
  // A port free when picked can be taken (by another test's outgoing
  // connection, from the same ephemeral range) before PostgreSQL binds it:
  // then the first start fails, and another port is tried.
  for (int attempt = 1;; ++attempt) {
    port_ = std::to_string(free_tcp_port());
    dir_ = (std::filesystem::temp_directory_path() / ("gw-private-pg-" + port_)).string();
    run("destroy");  // a cluster left by a crashed earlier run
    if (run("start", port_) == 0) return;
    run("destroy");
    REQUIRE_MESSAGE(attempt < 5, "could not start a private PostgreSQL on 5 free ports");
  }
}

PrivateCluster::~PrivateCluster() { run("destroy"); }

void PrivateCluster::stop() const { REQUIRE(run("stop") == 0); }
void PrivateCluster::start() const { REQUIRE(run("start", port_) == 0); }

std::string PrivateCluster::url() const {
  return "host=127.0.0.1 port=" + port_ + " user=postgres dbname=postgres";
}

int PrivateCluster::run(const std::string& verb, const std::string& args) const {
  return std::system((script_ + " " + verb + " " + dir_ + " " + args + " >/dev/null 2>&1").c_str());
}

}  // namespace gw::test
