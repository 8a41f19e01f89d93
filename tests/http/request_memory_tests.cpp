// Memory a peer can make the gateway hold before it is authenticated (issue
// #29, finding 2), measured on the real write-gateway process: its peak RSS
// (VmHWM) while many connections stream chunk extensions or trailer fields
// that never end, with and without a token, and a refused request whose
// large body must never be read. The reply must reach the client (not be
// lost to a reset), and no wall clock is asserted: loops are bounded only
// against a hang.
#include "support/gateway_fixture.hpp"
#include "support/process.hpp"

#include <doctest/doctest.h>

#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

using namespace gw;
using namespace gw::test;
using namespace std::chrono_literals;

namespace {

// A field of /proc/<pid>/status in KiB (VmRSS, VmHWM).
std::size_t proc_status_kib(pid_t pid, const std::string& field) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(in, line))
    if (line.rfind(field + ":", 0) == 0) return std::stoul(line.substr(field.size() + 1));
  FAIL("no " << field << " in /proc/" << pid << "/status");
  return 0;
}

// Resets the process's VmHWM to its current RSS (clear_refs "5", Linux 4.0+),
// so a case's peak is its own; returns that RSS, the case's baseline.
std::size_t reset_peak_kib(pid_t pid) {
  std::ofstream("/proc/" + std::to_string(pid) + "/clear_refs") << "5";
  return proc_status_kib(pid, "VmRSS");
}

// The server's read buffer cap (http/server.hpp: max_header_bytes plus one
// read chunk of 16 KiB), for the test config's 8 KiB heads.
constexpr std::size_t read_buffer_cap = 8192 + (16 << 10);
// What a connection may cost besides its read buffer (socket, coroutine
// frames, parser, the Request's head, allocator redzones under ASan).
constexpr std::size_t per_connection_slack = 64 << 10;
// The process's own noise over a case: logging, allocator caches, the
// quarantine of what ASan frees. (Measured with the sanitizers: at most
// 12 MB of growth for 100 connections; buffering the lines took 86-400 MB.)
constexpr std::size_t process_slack = 24 << 20;

// The memory bound: connections x (buffer cap + per-connection slack) + process slack.
std::size_t allowed_growth(std::size_t connections) {
  return connections * (read_buffer_cap + per_connection_slack) + process_slack;
}

// What one connection of a Flood sends: `head`, then `filler` over and over
// until `budget` bytes of it went out, then `tail`. It stops sending once a
// reply byte arrives or the gateway closes, and reads until the close.
struct Script {
  std::string head;
  std::string filler;
  std::size_t budget = 0;
  std::string tail;
};

struct Outcome {
  std::string reply;         // the first 64 KiB the gateway sent
  std::size_t sent = 0;      // bytes of the script that went out
  std::size_t sent_at_reply = 0;  // of those, how many before the first reply byte
  bool closed = false;       // EOF or reset from the gateway
};

// Runs `connections` copies of `script` at once over non-blocking sockets,
// until every one is closed by the gateway (or `limit`, a guard against a hang).
std::vector<Outcome> flood(std::uint16_t port, std::size_t connections, const Script& script,
                           std::chrono::seconds limit = 180s) {
  std::vector<int> fds;
  std::vector<Outcome> out(connections);
  const std::size_t total = script.head.size() + script.budget + script.tail.size();
  for (std::size_t i = 0; i < connections; ++i) {
    const int fd = connect_loopback(port);
    ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) | O_NONBLOCK);
    fds.push_back(fd);
  }
  // The byte of the script at `offset`, as a run of up to `max` bytes.
  std::string piece;
  const auto next_piece = [&](std::size_t offset, std::size_t max) -> std::string_view {
    if (offset < script.head.size()) return std::string_view(script.head).substr(offset, max);
    offset -= script.head.size();
    if (offset < script.budget) {
      const std::size_t want = std::min(max, script.budget - offset);
      piece.clear();
      for (std::size_t at = offset % script.filler.size(); piece.size() < want; at = 0)
        piece.append(script.filler, at, want - piece.size());
      return piece;
    }
    return std::string_view(script.tail).substr(offset - script.budget, max);
  };
  const auto give_up = std::chrono::steady_clock::now() + limit;
  char buf[65536];
  for (;;) {
    std::vector<pollfd> polls;
    std::vector<std::size_t> index;
    for (std::size_t i = 0; i < connections; ++i) {
      if (out[i].closed) continue;
      const bool sending = out[i].reply.empty() && out[i].sent < total;
      polls.push_back({fds[i], static_cast<short>(POLLIN | (sending ? POLLOUT : 0)), 0});
      index.push_back(i);
    }
    if (polls.empty()) break;
    REQUIRE_MESSAGE(std::chrono::steady_clock::now() < give_up, "the gateway never closed some connections");
    if (::poll(polls.data(), polls.size(), 100) <= 0) continue;
    for (std::size_t k = 0; k < polls.size(); ++k) {
      auto& o = out[index[k]];
      const int fd = polls[k].fd;
      if (polls[k].revents & (POLLIN | POLLHUP | POLLERR)) {
        const auto n = ::recv(fd, buf, sizeof buf, 0);
        if (n > 0) {
          if (o.reply.empty()) o.sent_at_reply = o.sent;
          const std::size_t room = (64 << 10) - std::min<std::size_t>(o.reply.size(), 64 << 10);
          o.reply.append(buf, std::min(static_cast<std::size_t>(n), room));
        } else if (n == 0 || (errno != EAGAIN && errno != EWOULDBLOCK)) {
          o.closed = true;
          continue;
        }
      }
      if ((polls[k].revents & POLLOUT) && o.reply.empty() && o.sent < total) {
        const auto bytes = next_piece(o.sent, 65536);
        const auto n = ::send(fd, bytes.data(), bytes.size(), MSG_NOSIGNAL);
        if (n > 0) o.sent += static_cast<std::size_t>(n);
        else if (errno != EAGAIN && errno != EWOULDBLOCK) o.sent = total;  // the gateway closed: stop sending
      }
    }
  }
  for (int fd : fds) ::close(fd);
  return out;
}

// The reply's head and body are all there (Content-Length), so it was read
// before any reset could cut it.
bool whole_reply(const std::string& bytes, const std::string& status_line) {
  if (bytes.rfind(status_line, 0) != 0) return false;
  const auto end = bytes.find("\r\n\r\n");
  const auto length = bytes.find("Content-Length: ");
  if (end == std::string::npos || length == std::string::npos || length > end) return false;
  return bytes.size() >= end + 4 + std::stoul(bytes.substr(length + 16));
}

std::string head_of(const std::string& target, const std::string& fields) {
  return "POST " + target + " HTTP/1.1\r\nHost: x\r\n" + fields + "\r\n";
}

}  // namespace

TEST_CASE("memory: 100 connections streaming endless chunk extensions or trailers hold at most the read buffer cap each") {
  TestDatabase db;
  GatewayProcess gateway(test_config_json(db.url()), true);
  const std::string chunked = "Transfer-Encoding: chunked\r\n";
  const std::string token = "Authorization: Bearer " + agent_a + "\r\n";
  const std::string claim = task_path("tenant-a", "flood", "claim");
  struct Case {
    std::string name;
    std::string head;
    std::string body_start;  // the chunked body up to the line that never ends
    std::string filler;
    std::string status;      // the refusal's status line
  };
  // Without a token the screen refuses the head and no body byte is read;
  // with agent A's token on its claim route the body is read, and the line
  // that outgrows the read buffer is refused instead.
  const std::vector<Case> cases{
      {"extension, no token", head_of("/nonexistent", chunked), "5;ext=", "a", "HTTP/1.1 404"},
      {"trailer, no token", head_of("/nonexistent", chunked), "0\r\n", "X-T: aaaaaaaaaa\r\n", "HTTP/1.1 404"},
      {"extension, agent token", head_of(claim, token + chunked), "5;ext=", "a", "HTTP/1.1 413"},
      {"trailer, agent token", head_of(claim, token + chunked), "0\r\n", "X-T: aaaaaaaaaa\r\n", "HTTP/1.1 413"},
  };
  constexpr std::size_t connections = 100;
  // 4 MiB each: 400 MiB held in all if the gateway buffered the line, over
  // five times the bound below.
  constexpr std::size_t budget = 4 << 20;
  for (const auto& c : cases) {
    CAPTURE(c.name);
    const std::size_t baseline = reset_peak_kib(gateway.pid()) << 10;
    auto outcomes = flood(gateway.port(), connections, Script{c.head + c.body_start, c.filler, budget, {}});
    const std::size_t peak = proc_status_kib(gateway.pid(), "VmHWM") << 10;
    CAPTURE(baseline);
    CAPTURE(peak);
    CHECK(peak <= baseline + allowed_growth(connections));
    std::size_t refused = 0;
    for (const auto& o : outcomes) refused += whole_reply(o.reply, c.status) ? 1 : 0;
    CHECK(refused == connections);
    if (c.status == "HTTP/1.1 413")
      CHECK(outcomes.front().reply.find("chunk extension or trailer exceeds") != std::string::npos);
  }
  CHECK(db.scalar("SELECT count(*) FROM tasks") == "0");
}

TEST_CASE("memory: a refused request's large body is never read: the reply arrives while the client still sends") {
  TestDatabase db;
  auto config = test_config_json(db.url());
  constexpr std::size_t body_size = 64 << 20;
  config["http"]["max_body_bytes"] = body_size;  // the body is within the limit: only the screen refuses it
  GatewayProcess gateway(config, true);
  const std::string claim = task_path("tenant-a", "big", "claim");
  // 64 KiB chunks, as a streaming client sends them.
  std::ostringstream chunk;
  chunk << std::hex << (64 << 10) << "\r\n" << std::string(64 << 10, 'a') << "\r\n";
  struct Case {
    std::string name;
    Script script;
    std::string status;
  };
  const std::vector<Case> cases{
      {"Content-Length, no token",
       Script{head_of(claim, "Content-Length: " + std::to_string(body_size) + "\r\n"), "a", body_size, {}},
       "HTTP/1.1 401"},
      {"chunked, unknown route",
       Script{head_of("/nonexistent", "Transfer-Encoding: chunked\r\n"), chunk.str(), body_size, "0\r\n\r\n"},
       "HTTP/1.1 404"},
  };
  for (const auto& c : cases) {
    CAPTURE(c.name);
    const std::size_t baseline = reset_peak_kib(gateway.pid()) << 10;
    auto outcome = flood(gateway.port(), 1, c.script).front();
    const std::size_t peak = proc_status_kib(gateway.pid(), "VmHWM") << 10;
    CAPTURE(outcome.reply);
    // The whole reply was read, so no reset destroyed it.
    CHECK(whole_reply(outcome.reply, c.status));
    // It came before the body was all sent: the gateway never waited for it.
    CHECK(outcome.sent_at_reply < c.script.head.size() + body_size);
    CHECK(outcome.closed);
    // And never held it: one connection's bound, well below the body's 64 MiB.
    CAPTURE(baseline);
    CAPTURE(peak);
    CHECK(peak <= baseline + allowed_growth(1));
  }
  CHECK(db.scalar("SELECT count(*) FROM tasks") == "0");
}
