// A gateway that cannot bind its port stops at once with a non-zero exit
// status and its reason on stderr; one waiting for its database at startup
// answers SIGTERM at once. It once crashed in Runtime's destructor
// instead (stopping duties a failed start had never started), which hid the
// reason and left a supervisor a core dump to read.
#include "support/eventually.hpp"
#include "support/gateway_fixture.hpp"
#include "support/process.hpp"

#include <doctest/doctest.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <fstream>
#include <iterator>

using namespace gw;
using namespace gw::test;

namespace {

// A loopback port held listening for the object's life.
class TakenPort {
 public:
  TakenPort() : fd_(::socket(AF_INET, SOCK_STREAM, 0)) {
    REQUIRE(fd_ >= 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    REQUIRE(::bind(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0);
    REQUIRE(::listen(fd_, 1) == 0);
    socklen_t len = sizeof addr;
    REQUIRE(::getsockname(fd_, reinterpret_cast<sockaddr*>(&addr), &len) == 0);
    port_ = ntohs(addr.sin_port);
  }
  ~TakenPort() { ::close(fd_); }
  TakenPort(const TakenPort&) = delete;
  TakenPort& operator=(const TakenPort&) = delete;

  std::uint16_t port() const { return port_; }

 private:
  int fd_;
  std::uint16_t port_ = 0;
};

}  // namespace

TEST_CASE("startup: a listen port already taken ends the process with exit status 1, not a crash") {
  TestDatabase db;
  TakenPort taken;
  auto config = test_config_json(db.url());
  config["listen"]["port"] = taken.port();
  TempDir dir;
  ChildProcess gateway({test_binary("write-gateway"), {"--config", dir.write("gateway.json", config.dump())}, {}});
  // EOF on stdout: the process ended without ever saying it listens.
  CHECK_FALSE(gateway.read_line(std::chrono::seconds(60)).has_value());
  const int status = gateway.stop(SIGTERM);
  REQUIRE(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 1);
}

TEST_CASE("startup: SIGTERM while waiting for an unreachable database ends the process at once, exit status 0") {
  auto config = test_config_json("postgresql://gateway@127.0.0.1:" + std::to_string(free_tcp_port()) + "/none");
  TempDir dir;
  const auto log = dir.path() + "/gateway.log";
  ChildProcess gateway({test_binary("write-gateway"), {"--config", dir.write("gateway.json", config.dump())}, {}, log});
  // Its 30 s database_wait has begun: it logs each failed try.
  auto logged = [&log] {
    std::ifstream in(log, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), {});
  };
  REQUIRE(eventually([&] { return logged().find("\"database_waiting\"") != std::string::npos; }));
  // The stop is answered within the grace, long before the database_wait would end.
  const int status = gateway.stop(SIGTERM, std::chrono::seconds(20));
  REQUIRE(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);
  const auto said = gateway.read_line(std::chrono::seconds(5));
  REQUIRE(said.has_value());
  CHECK(said->find("stopped (Terminated) while waiting for the database") != std::string::npos);
}
