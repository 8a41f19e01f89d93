#include "support/private_cluster.hpp"

#include <doctest/doctest.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>

namespace gw::test {

namespace {

// Private clusters take ports from here: below the kernel's ephemeral range
// (32768-60999), so no outgoing connection can hold one, and apart from
// scripts/test.sh's shared cluster (25433-25532) and the dev, demo and
// bench clusters (25432, 25632, 25719, 25801).
constexpr int first_port = 26000;
constexpr int port_count = 1000;

// Whether something holds 127.0.0.1:port: a listener, or a socket bound to
// it. SO_REUSEADDR, as PostgreSQL sets it, so a connection of an earlier
// cluster lingering in TIME_WAIT does not count.
bool port_taken(int port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return true;
  const int on = 1;
  ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, sizeof on);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = htons(static_cast<std::uint16_t>(port));
  const bool taken = ::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0;
  ::close(fd);
  return taken;
}

// The next port to try in this process. Each process starts at a place of
// its own in the range, spread by pid (ctest runs test cases as parallel
// processes with nearby pids), and goes on from the last port it used.
int next_port() {
  static std::atomic<int> next{static_cast<int>((static_cast<long>(::getpid()) * 7919) % port_count)};
  return first_port + next.fetch_add(1) % port_count;
}

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

}  // namespace

void PrivateCluster::make_dir() {
  const char* script = std::getenv("GATEWAY_TEST_PG_SCRIPT");
  REQUIRE_MESSAGE(script, "GATEWAY_TEST_PG_SCRIPT is not set: run the tests through scripts/test.sh");
  script_ = script;
  // A name no other cluster has, live or left behind: pg.sh initdbs into the
  // empty directory, and nothing else ever destroys it.
  auto pattern = (std::filesystem::temp_directory_path() / "gw-private-pg-XXXXXX").string();
  REQUIRE_MESSAGE(::mkdtemp(pattern.data()), "mkdtemp " << pattern << ": " << std::strerror(errno));
  dir_ = pattern;
}

PrivateCluster::PrivateCluster() {
  make_dir();
  start_on_a_free_port();
}

PrivateCluster::PrivateCluster(const PrivateCluster& source, Copy copy) {
  make_dir();
  const auto output = dir_ + ".clone.log";
  const int status = run("clone", source.port_ + (copy == Copy::standby ? " standby" : " backup"), output);
  const auto said = read_file(output);
  std::filesystem::remove(output);
  if (status != 0) {
    run("destroy");
    FAIL("could not clone the cluster on port " << source.port_ << " into " << dir_ << ":\n" << said);
  }
  start_on_a_free_port();
}

void PrivateCluster::start_on_a_free_port() {
  const auto output = dir_ + ".start.log";
  // A port found free can still be taken before PostgreSQL binds it (another
  // test's cluster, started at the same moment): pg.sh then fails with the
  // server's "Address already in use" for that port in its output, and the
  // next port is tried on the same data directory. Any other failure fails
  // the test, with pg.sh's output.
  for (int tried = 0; tried < port_count; ++tried) {
    const int port = next_port();
    if (port_taken(port)) continue;
    port_ = std::to_string(port);
    const int status = run("start", port_, output);
    const auto said = read_file(output);
    std::filesystem::remove(output);
    if (status == 0) return;
    const bool lost_port = said.find("Address already in use") != std::string::npos &&
                           said.find("running on port " + port_ + "?") != std::string::npos;
    if (!lost_port) {
      run("destroy");  // no destructor runs after a constructor throws
      FAIL("could not start a private PostgreSQL in " << dir_ << " on port " << port_ << ":\n" << said);
    }
  }
  run("destroy");
  FAIL("could not start a private PostgreSQL: every port of " << first_port << "-" << first_port + port_count - 1
                                                              << " was taken");
}

PrivateCluster::~PrivateCluster() { run("destroy"); }

void PrivateCluster::stop() const { REQUIRE(run("stop") == 0); }
void PrivateCluster::start() const { REQUIRE(run("start", port_) == 0); }

std::string PrivateCluster::url() const {
  return "host=127.0.0.1 port=" + port_ + " user=postgres dbname=postgres";
}

int PrivateCluster::run(const std::string& verb, const std::string& args, const std::string& output) const {
  return std::system((script_ + " " + verb + " " + dir_ + " " + args + " >" + output + " 2>&1").c_str());
}

}  // namespace gw::test
