// gatewayctl end to end: the real binary, run as a process, against a real
// gateway (in-process Runtime, real PostgreSQL) whose held operations were
// made by real provider faults. Covers `held` (the route that exists today)
// and every exit code; the other subcommands are in
// operator_routes_e2e_tests.cpp, built once their routes land.
#include "gatewayctl/cli_process.hpp"
#include "proxy/proxy_fixture.hpp"
#include "support/eventually.hpp"
#include "support/private_cluster.hpp"
#include "support/process.hpp"

#include <doctest/doctest.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <cerrno>
#include <thread>

using namespace gw;
using namespace gw::test;
using nlohmann::json;

namespace {


std::string local_url(std::uint16_t port) { return "http://127.0.0.1:" + std::to_string(port); }

// Fails the test if the operator token shows up in anything gatewayctl printed.
CliRun checked(CliRun run) {
  CHECK_MESSAGE(run.out.find(operator_token) == std::string::npos, "the token was printed on stdout");
  CHECK_MESSAGE(run.err.find(operator_token) == std::string::npos, "the token was printed on stderr");
  return run;
}

// A booking provider and a gateway holding three operations as unknown:
// task-1 and task-2 of tenant-a, task-3 of tenant-c, each made by a real 5xx.
struct HeldRig {
  HeldRig() : c(rig.gateway.port()) {
    unknown_at(t0, "tenant-a", "task-1");
    unknown_at(t0 + 60'000, "tenant-a", "task-2");
    unknown_at(t0 + 120'000, "tenant-c", "task-3");
    rig.gateway.set_clock(t0 + 252'000);
  }

  void unknown_at(std::int64_t now, const std::string& tenant, const std::string& task) {
    rig.gateway.set_clock(now);
    Write w;
    w.tenant = tenant;
    w.task = task;
    w.grant = grant_token(rig.gateway.claim(tenant, task, "region-a", 1'000'000));
    w.key = "op-" + task;
    w.body = booking_body("slot-" + task);
    rig.provider.set_fault("error_5xx", 0, 1);
    check_problem(send(c, w), 504, "unknown_outcome");
  }

  std::string url() const { return local_url(rig.gateway.port()); }

  // gatewayctl with the URL and operator token in the environment.
  CliRun ctl(const std::vector<std::string>& args, EnvVars env = {}) const {
    env.insert(env.begin(), {{"GATEWAY_URL", url()}, {"GATEWAY_TOKEN", operator_token}});
    return checked(run_gatewayctl(args, env));
  }

  // The tasks of a `held --json` run, in order.
  std::vector<std::string> tasks(std::vector<std::string> args) const {
    args.insert(args.begin(), {"held", "--json"});
    auto run = ctl(args);
    REQUIRE_MESSAGE(run.exit_code == 0, run.err);
    const auto body = json::parse(run.out);  // the rows must outlive the loop over them
    std::vector<std::string> out;
    for (const auto& row : body["held"]) out.push_back(row["task"].get<std::string>());
    return out;
  }

  ProxyRig rig;
  HttpClient c;
};

// A listener that answers every connection with fixed bytes and closes it:
// a server that is not the gateway.
class CannedServer {
 public:
  explicit CannedServer(std::string reply) : fd_(listen_on_loopback()), reply_(std::move(reply)) {
    thread_ = std::jthread([this] { serve(); });
  }
  ~CannedServer() {
    ::shutdown(fd_, SHUT_RDWR);  // wakes accept()
    thread_.join();
    ::close(fd_);
  }
  std::uint16_t port() const { return port_of(fd_); }

  static int listen_on_loopback() {
    int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    REQUIRE(fd >= 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    REQUIRE(::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0);
    REQUIRE(::listen(fd, 8) == 0);
    return fd;
  }
  static std::uint16_t port_of(int fd) {
    sockaddr_in addr{};
    socklen_t length = sizeof addr;
    ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &length);
    return ntohs(addr.sin_port);
  }

 private:
  void serve() {
    for (;;) {
      int conn = ::accept4(fd_, nullptr, nullptr, SOCK_CLOEXEC);
      if (conn < 0 && errno == EINTR) continue;
      if (conn < 0) return;  // the destructor's shutdown()
      // A connection that never finishes its head (another test's client
      // that reached this ephemeral port) must not hold up the next one:
      // connections are served one at a time.
      const timeval patience{2, 0};
      ::setsockopt(conn, SOL_SOCKET, SO_RCVTIMEO, &patience, sizeof patience);
      std::string request;
      char chunk[1024];
      while (request.find("\r\n\r\n") == std::string::npos) {
        auto n = ::read(conn, chunk, sizeof chunk);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) break;
        request.append(chunk, static_cast<std::size_t>(n));
      }
      [[maybe_unused]] auto written = ::write(conn, reply_.data(), reply_.size());
      ::close(conn);
    }
  }
  int fd_;
  std::string reply_;
  std::jthread thread_;
};

}  // namespace

TEST_CASE("gatewayctl held: the aligned table an operator reads, and --json as the gateway sent it") {
  HeldRig h;
  auto run = h.ctl({"held"});
  CHECK(run.exit_code == 0);
  CHECK(run.err == "");
  const auto key = [](const char* tenant, const char* task) {
    return upstream_key(tenant, task, std::string("op-") + task);
  };
  CHECK(run.out ==
        "TENANT    TASK    OPERATION  STATE    REASON           HELD_FOR  HELD_SINCE                PROVIDER  "
        "REQUEST         ATTEMPTS  UPSTREAM_KEY\n"
        "tenant-a  task-1  op-task-1  unknown  outcome_unknown  4m12s     2025-12-01T00:00:00.000Z  booking   "
        "POST /bookings  1         " + key("tenant-a", "task-1") + "\n"
        "tenant-a  task-2  op-task-2  unknown  outcome_unknown  3m12s     2025-12-01T00:01:00.000Z  booking   "
        "POST /bookings  1         " + key("tenant-a", "task-2") + "\n"
        "tenant-c  task-3  op-task-3  unknown  outcome_unknown  2m12s     2025-12-01T00:02:00.000Z  booking   "
        "POST /bookings  1         " + key("tenant-c", "task-3") + "\n");

  // --json: what the route itself answers (the manual clock stands still between the two reads).
  auto as_json = h.ctl({"held", "--json"});
  CHECK(as_json.exit_code == 0);
  CHECK(as_json.err == "");
  auto direct = h.c.get("/v1/admin/held", operator_token);
  REQUIRE(direct.status == 200);
  CHECK(json::parse(as_json.out) == direct.json());
  CHECK(as_json.out.find("\n  \"held\": [") != std::string::npos);  // pretty
}

TEST_CASE("gatewayctl held: every filter reaches the gateway, values percent-encoded") {
  HeldRig h;
  using V = std::vector<std::string>;
  CHECK(h.tasks({}) == V{"task-1", "task-2", "task-3"});
  CHECK(h.tasks({"--tenant", "tenant-c"}) == V{"task-3"});
  CHECK(h.tasks({"--task", "task-2"}) == V{"task-2"});
  CHECK(h.tasks({"--tenant", "tenant-a", "--task", "task-3"}).empty());
  CHECK(h.tasks({"--provider", "booking"}).size() == 3);
  CHECK(h.tasks({"--provider", "crm"}).empty());
  CHECK(h.tasks({"--state", "unknown"}).size() == 3);
  CHECK(h.tasks({"--state", "in_flight"}).empty());
  CHECK(h.tasks({"--reason", "outcome_unknown"}).size() == 3);
  CHECK(h.tasks({"--reason", "forward_abandoned"}).empty());
  CHECK(h.tasks({"--older-than", "3m"}) == V{"task-1", "task-2"});  // held 4m12s and 3m12s
  CHECK(h.tasks({"--older-than", "3m12s"}) == V{"task-1", "task-2"});
  CHECK(h.tasks({"--older-than", "3m12s1ms"}) == V{"task-1"});
  // Characters that would split or end the query unencoded: a filter that matches nothing, not a 400.
  CHECK(h.tasks({"--task", "x&limit=1"}).empty());
  CHECK(h.tasks({"--tenant", "a/b%zz#?"}).empty());

  auto none = h.ctl({"held", "--state", "in_flight"});
  CHECK(none.exit_code == 0);
  CHECK(none.out == "no held operations\n");

  // A value the gateway refuses (it knows only two reasons): its problem, exit 1.
  auto refused = h.ctl({"held", "--reason", "swept"});
  CHECK(refused.exit_code == 1);
  CHECK(refused.out == "");
  CHECK(refused.err == "error: invalid_request: reason must be outcome_unknown or forward_abandoned\n");
}

TEST_CASE("gatewayctl held: one page and a hint, or --all to the last page") {
  HeldRig h;
  auto one = h.ctl({"held", "--limit", "1"});
  CHECK(one.exit_code == 0);
  CHECK(one.out.find("task-1") != std::string::npos);
  CHECK(one.out.find("task-2") == std::string::npos);
  CHECK(one.err.starts_with("more: add --all for every page, or --cursor "));

  // The hinted cursor takes up where the page ended.
  auto cursor = one.err.substr(one.err.find("--cursor ") + 9);
  cursor = cursor.substr(0, cursor.find(' '));
  auto next = h.ctl({"held", "--limit", "1", "--cursor", cursor});
  CHECK(next.exit_code == 0);
  CHECK(next.out.find("task-2") != std::string::npos);
  CHECK(next.out.find("task-1") == std::string::npos);

  auto all = h.ctl({"held", "--limit", "1", "--all"});
  CHECK(all.exit_code == 0);
  CHECK(all.err == "");
  CHECK(all.out == h.ctl({"held"}).out);

  auto all_json = h.ctl({"held", "--limit", "1", "--all", "--json"});
  CHECK(all_json.exit_code == 0);
  auto merged = json::parse(all_json.out);
  CHECK(merged["held"] == h.c.get("/v1/admin/held", operator_token).json()["held"]);
  CHECK(merged["next_cursor"].is_null());
}

TEST_CASE("gatewayctl held: URL and token from flags, the environment or a token file, and flags win") {
  HeldRig h;
  TempDir dir;
  const auto token_file = dir.write("operator-token", operator_token + "\n");
  const auto dead = local_url(free_tcp_port());

  auto flags_only = checked(run_gatewayctl({"held", "--url", h.url(), "--token-file", token_file}));
  CHECK(flags_only.exit_code == 0);
  CHECK(flags_only.out.find("task-3") != std::string::npos);

  auto token_flag = checked(run_gatewayctl({"--url=" + h.url(), "--token=" + operator_token, "held", "--json"}));
  CHECK(token_flag.exit_code == 0);

  // Flags over a wrong environment.
  auto flags_win = checked(run_gatewayctl({"held", "--url", h.url(), "--token-file", token_file},
                                          {{"GATEWAY_URL", dead}, {"GATEWAY_TOKEN", "wrong-token"}}));
  CHECK(flags_win.exit_code == 0);
  CHECK(flags_win.out == flags_only.out);
}

TEST_CASE("gatewayctl held: a token the gateway does not know, or an agent's, exits 1 with the problem") {
  HeldRig h;
  auto unknown = checked(run_gatewayctl({"held", "--token", "not-a-token"}, {{"GATEWAY_URL", h.url()}}));
  CHECK(unknown.exit_code == 1);
  CHECK(unknown.out == "");
  CHECK(unknown.err.starts_with("error: unauthenticated: "));
  CHECK(unknown.err.find("not-a-token") == std::string::npos);

  auto agent = checked(run_gatewayctl({"held"}, {{"GATEWAY_URL", h.url()}, {"GATEWAY_TOKEN", agent_a}}));
  CHECK(agent.exit_code == 1);
  CHECK(agent.out == "");
  CHECK(agent.err.starts_with("error: forbidden: "));
  CHECK(agent.err.find("operator token") != std::string::npos);
  CHECK(agent.err.find(agent_a) == std::string::npos);
}

TEST_CASE("gatewayctl: a path prefix the gateway does not have exits 6 (wrong URL), not 4 (not found)") {
  HeldRig h;
  auto run = h.ctl({"held", "--url", h.url() + "/no-such-prefix"});
  CHECK(run.exit_code == 6);
  CHECK(run.out == "");
  CHECK(run.err == "error: not_found: no such route\n"
                   "hint: the gateway has no such route: is --url's path prefix right (the part before /v1)?\n");

  auto as_json = h.ctl({"held", "--json", "--url", h.url() + "/no-such-prefix"});
  CHECK(as_json.exit_code == 6);
  CHECK(as_json.out == "");
  const auto error = json::parse(as_json.err)["error"];
  CHECK(error["exit_code"] == 6);
  CHECK(error["problem"]["missing"] == "route");

  // An operation the gateway does not have, on a route it does: 4.
  auto missing = h.ctl({"show", "tenant-a", "task-1", "no-such-op"});
  CHECK(missing.exit_code == 4);
  CHECK(missing.err == "error: not_found: no operation with this id on this task\n");
}

TEST_CASE("gatewayctl: nothing listening, no reply in time, or bytes that are not HTTP exit 3") {
  const auto token = EnvVars{{"GATEWAY_TOKEN", operator_token}};
  const auto port = free_tcp_port();
  auto refused = checked(run_gatewayctl({"held", "--url", local_url(port)}, token));
  CHECK(refused.exit_code == 3);
  CHECK(refused.out == "");
  CHECK(refused.err.starts_with("error: unreachable: cannot connect to 127.0.0.1:" + std::to_string(port) + ": "));

  // Listening, never accepting: the kernel completes the connect and nobody answers.
  const int silent = CannedServer::listen_on_loopback();
  const auto silent_port = CannedServer::port_of(silent);
  auto timed_out = checked(run_gatewayctl({"held", "--url", local_url(silent_port), "--timeout", "300ms"}, token));
  ::close(silent);
  CHECK(timed_out.exit_code == 3);
  CHECK(timed_out.err == "error: timeout: no reply from 127.0.0.1:" + std::to_string(silent_port) + " within 300ms\n");

  CannedServer not_http("SSH-2.0-OpenSSH_9.2\r\n");
  auto garbage = checked(run_gatewayctl({"held", "--url", local_url(not_http.port())}, token));
  CHECK(garbage.exit_code == 3);
  CHECK(garbage.err.starts_with("error: bad_reply: "));

  auto garbage_json = checked(run_gatewayctl({"held", "--json", "--url", local_url(not_http.port())}, token));
  CHECK(garbage_json.exit_code == 3);
  CHECK(json::parse(garbage_json.err)["error"]["code"] == "bad_reply");
}

TEST_CASE("gatewayctl: another server at --url (no Gateway-Status) exits 6 (wrong URL)") {
  const auto token = EnvVars{{"GATEWAY_TOKEN", operator_token}};
  CannedServer not_json("HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: 6\r\n\r\n<html>");
  auto html = checked(run_gatewayctl({"held", "--url", local_url(not_json.port())}, token));
  CHECK(html.exit_code == 6);
  CHECK(html.out == "");
  CHECK(html.err == "error: not_gateway: HTTP 200 without the gateway's Gateway-Status header: HTTP 200: <html>\n"
                    "hint: another server answered: is --url the gateway? (http://host:port[/prefix], the part "
                    "before /v1)\n");

  CannedServer not_found("HTTP/1.1 404 Not Found\r\nContent-Type: text/html\r\nContent-Length: 9\r\n\r\nNot Found");
  auto other = checked(run_gatewayctl({"show", "t", "k", "op", "--json", "--url", local_url(not_found.port())}, token));
  CHECK(other.exit_code == 6);
  CHECK(other.out == "");
  CHECK(json::parse(other.err)["error"]["code"] == "not_gateway");

  CannedServer redirect("HTTP/1.1 302 Found\r\nLocation: /login\r\nContent-Length: 0\r\n\r\n");
  auto moved = checked(run_gatewayctl({"held", "--url", local_url(redirect.port())}, token));
  CHECK(moved.exit_code == 6);
  CHECK(moved.err.find("is --url the gateway?") != std::string::npos);
}

TEST_CASE("gatewayctl --token-file: says why the file gives no token, exit 2, nothing sent") {
  const EnvVars env{{"GATEWAY_URL", local_url(free_tcp_port())}};
  TempDir dir;
  struct Case {
    std::string file;
    std::string says;
  };
  for (const auto& [file, says] : std::vector<Case>{
           {"/nonexistent/gatewayctl-token", "no such file"},
           {dir.write("empty", ""), "is empty"},
           {dir.write("two", "a b\n"), "does not hold one token (visible ASCII, no spaces; one line)"},
       }) {
    CAPTURE(file);
    auto run = checked(run_gatewayctl({"held", "--token-file", file}, env));
    CHECK(run.exit_code == 2);
    CHECK(run.out == "");
    CHECK(run.err.starts_with("error: usage: --token-file " + file + ": " + says + "\n"));

    auto as_json = checked(run_gatewayctl({"held", "--json", "--token-file", file}, env));
    CHECK(as_json.exit_code == 2);
    const auto error = json::parse(as_json.err)["error"];
    CHECK(error["code"] == "usage");
    CHECK(error["detail"] == "--token-file " + file + ": " + says);
    CHECK(error["exit_code"] == 2);
  }
}

TEST_CASE("gatewayctl: the gateway without its database exits 5 (try again later)") {
  PrivateCluster pg;
  Gateway g(pg.url(), {.manual_clock = false, .edit = [](nlohmann::json& c) {
                         c["database"]["connect_timeout_s"] = 1;
                         c["database"]["statement_timeout_ms"] = 1000;
                       }});
  const EnvVars env{{"GATEWAY_URL", local_url(g.port())}, {"GATEWAY_TOKEN", operator_token}};
  auto up = checked(run_gatewayctl({"held"}, env));
  CHECK(up.exit_code == 0);
  CHECK(up.out == "no held operations\n");

  pg.stop();
  REQUIRE(eventually([&] { return g.client().get("/readyz", "").status == 503; }));
  auto down = checked(run_gatewayctl({"held"}, env));
  CHECK(down.exit_code == 5);
  CHECK(down.out == "");
  CHECK(down.err.starts_with("error: authority_unavailable: "));
  CHECK(down.err.find("hint: the gateway log has the cause under request id ") != std::string::npos);
}

TEST_CASE("gatewayctl: usage errors exit 2 with the usage, and send nothing") {
  // A URL where nothing listens: had anything been sent, the exit would be 3.
  const EnvVars env{{"GATEWAY_URL", local_url(free_tcp_port())}, {"GATEWAY_TOKEN", operator_token}};
  struct Case {
    std::vector<std::string> args;
    EnvVars env;
    const char* says;
  };
  for (const auto& [args, case_env, says] : std::vector<Case>{
           {{}, env, "error: usage: no command given\n"},
           {{"lsit"}, env, "error: usage: unknown command 'lsit'\n"},
           {{"held", "--state", "done"}, env, "error: usage: --state must be in_flight or unknown\n"},
           {{"held", "--older-than", "10"}, env, "error: usage: --older-than must be a duration"},
           {{"held", "--limit", "0"}, env, "error: usage: --limit must be a positive integer\n"},
           {{"show", "tenant-a", "task-1"}, env, "error: usage: show takes TENANT TASK OPERATION, got 2 operands\n"},
           {{"resolve", "t", "k", "op", "--outcome", "maybe", "--evidence", "x"}, env,
            "error: usage: --outcome must be"},
           {{"rotate-realm"}, env, "error: usage: rotate-realm makes every outstanding grant invalid"},
           {{"held"}, {{"GATEWAY_TOKEN", operator_token}}, "error: usage: no gateway URL"},
           {{"held"}, {{"GATEWAY_URL", "http://127.0.0.1:1"}}, "error: usage: no operator token"},
           {{"held", "--url", "https://127.0.0.1:1"}, env, "error: usage: --url: https:// is not supported"},
           {{"held", "--token-file", "/nonexistent/gatewayctl-token"}, env,
            "error: usage: --token-file /nonexistent/gatewayctl-token: no such file\n"},
       }) {
    CAPTURE(says);
    auto run = checked(run_gatewayctl(args, case_env));
    CHECK(run.exit_code == 2);
    CHECK(run.out == "");
    CHECK(run.err.starts_with(says));
    CHECK(run.err.find("\nusage: gatewayctl ") != std::string::npos);
    CHECK(run.err.ends_with("run 'gatewayctl --help' for every command, flag and exit code\n"));
  }
}

TEST_CASE("gatewayctl --help: every command and the exit codes, exit 0") {
  auto run = run_gatewayctl({"--help"});
  CHECK(run.exit_code == 0);
  CHECK(run.err == "");
  for (const char* s : {"held [--tenant T]", "show TENANT TASK OPERATION", "reconcile TENANT TASK OPERATION",
                        "resolve TENANT TASK OPERATION --outcome", "rejections [--tenant T]", "revoke TENANT TASK",
                        "rotate-realm --yes", "exit codes:", "  4  not found (404", "  6  wrong --url",
                        "--since DURATION|TIME"})
    CHECK_MESSAGE(run.out.find(s) != std::string::npos, s);
  CHECK(run_gatewayctl({"held", "-h"}).out == run.out);
}
