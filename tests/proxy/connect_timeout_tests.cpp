// provider.connect_timeout_ms against an address that never answers: a
// loopback listener whose accept queue is full, so Linux drops every further
// SYN (a refusal would answer at once and prove nothing about the timeout).
// The write was never sent, so it is not_executed and the task is not held.
#include "proxy/proxy_fixture.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdlib>
#include <mutex>

using namespace gw;
using namespace gw::test;

namespace {

const std::string credential_env = "GW_TEST_BLACKHOLE_KEY";

int loopback_socket() {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  REQUIRE(fd >= 0);
  return fd;
}

sockaddr_in loopback(std::uint16_t port) {
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  a.sin_port = htons(port);
  return a;
}

// listen(backlog 0) admits one connection to the accept queue; the filler
// takes it and is never accepted, so the queue stays full.
class Blackhole {
 public:
  Blackhole() : listener_(loopback_socket()), filler_(loopback_socket()) {
    auto a = loopback(0);
    REQUIRE(::bind(listener_, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0);
    REQUIRE(::listen(listener_, 0) == 0);
    socklen_t len = sizeof a;
    REQUIRE(::getsockname(listener_, reinterpret_cast<sockaddr*>(&a), &len) == 0);
    port_ = ntohs(a.sin_port);
    REQUIRE(::connect(filler_, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0);
  }
  ~Blackhole() {
    ::close(filler_);
    ::close(listener_);
  }
  std::uint16_t port() const { return port_; }

 private:
  int listener_, filler_;
  std::uint16_t port_ = 0;
};

GatewayOptions blackholed_provider(std::uint16_t port) {
  // setenv races with getenv in gateway threads: set it before any runs.
  static std::once_flag once;
  std::call_once(once, [] { ::setenv(credential_env.c_str(), "blackhole-secret", 1); });
  nlohmann::json provider{{"name", "booking"},
                          {"base_url", "http://127.0.0.1:" + std::to_string(port)},
                          {"credential", {{"env", credential_env}, {"shared_by_tenants", true}}},
                          {"connect_timeout_ms", 300},
                          {"request_timeout_ms", 10000}};
  return {.manual_clock = true,
          .edit = [provider](nlohmann::json& c) { c["providers"] = nlohmann::json::array({provider}); }};
}

}  // namespace

TEST_CASE("connect timeout: a blackholed provider is provider_unavailable, not_executed, and the task is not held") {
  Blackhole hole;
  Gateway g(blackholed_provider(hole.port()));
  g.set_clock(0);
  auto grant = grant_token(g.claim("tenant-a", "task-a", "region-a", 60000));
  HttpClient c(g.port());
  Write w;
  w.grant = grant;
  w.key = "op-1";
  w.body = booking_body("slot-1");

  auto r = send(c, w);
  check_problem(r, 502, "provider_unavailable");
  CHECK_FALSE(r.json().contains("provider_status"));  // no provider answered
  const auto& db = g.db();
  CHECK(db.scalar("SELECT state FROM operations WHERE op_id = 'op-1'") == "not_executed");
  // Recorded as the connect deadline passing, not as a refusal.
  const auto detail = db.scalar("SELECT detail FROM operation_attempts WHERE op_id = 'op-1'");
  CAPTURE(detail);
  CHECK(detail.find("connect_failed") != std::string::npos);
  CHECK(detail.find("timed out (connect_timeout)") != std::string::npos);
  CHECK(db.scalar("SELECT open_op IS NULL FROM task_ledger WHERE task = 'task-a'") == "t");
  auto view = c.get(task_path("tenant-a", "task-a"), agent_a).json();
  CHECK(view["unresolved_operation"].is_null());
  CHECK(view["version"] == 0);

  // Not held: another operation is admitted (and fails the same way), and
  // the exact retry is admitted again rather than refused.
  Write other = w;
  other.key = "op-2";
  other.body = booking_body("slot-2");
  check_problem(send(c, other), 502, "provider_unavailable");
  check_problem(send(c, w), 502, "provider_unavailable");
  CHECK(db.scalar("SELECT attempts FROM operations WHERE op_id = 'op-1'") == "2");
  CHECK(db.scalar("SELECT count(*) FROM operations WHERE state <> 'not_executed'") == "0");

  // An unprotected read gets a clear answer too.
  Write read;
  read.method = "GET";
  read.expected_version.reset();
  auto get = send(c, read);
  check_problem(get, 502, "provider_unavailable");
  CHECK(get.json()["detail"].get<std::string>().find("connect_failed") != std::string::npos);
  CHECK(get.json()["detail"].get<std::string>().find("nothing was sent") != std::string::npos);
}
