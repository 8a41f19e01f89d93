// The test client itself, against a scripted server on a real socket: it
// must never turn a dropped connection or a timeout into a silent second
// send, or a test could pass through exactly the double execution the
// gateway exists to prevent.
#include "support/http_client.hpp"

#include <boost/beast/core/error.hpp>
#include <doctest/doctest.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <strings.h>
#include <thread>
#include <vector>

using namespace gw::test;

namespace {

// What the server does with the n-th request it reads (1-based).
enum class Act {
  answer,               // 200, keep the connection open for the next request
  answer_and_close,     // 200 with keep-alive, then close: an idle kept-alive connection dropped
  answer_saying_close,  // 200 with Connection: close, then close
  answer_twice,         // two 200 replies in one write to the one request, keep the connection open
  answer_then_stray,    // 200, then (once release_stray() is called) a stray reply, then close
  drop,                 // close without answering
  hang,                 // never answer, keep the connection open
};

// A one-thread HTTP/1.1 server in plain POSIX that records every request it
// reads. Connections are served one at a time, in accept order.
class ScriptedServer {
 public:
  explicit ScriptedServer(std::function<Act(int)> script) : script_(std::move(script)) {
    listener_ = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    REQUIRE(::bind(listener_, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0);
    REQUIRE(::listen(listener_, 16) == 0);
    socklen_t len = sizeof a;
    ::getsockname(listener_, reinterpret_cast<sockaddr*>(&a), &len);
    port_ = ntohs(a.sin_port);
    thread_ = std::jthread([this] { serve(); });
  }
  ~ScriptedServer() {
    release_stray();  // a test that failed early must not leave the server thread waiting
    stopping_ = true;
    ::shutdown(listener_, SHUT_RDWR);  // wakes accept()
    thread_.join();
    ::close(listener_);
    for (int fd : held_) ::close(fd);
  }
  std::uint16_t port() const { return port_; }

  // Lets an answer_then_stray connection send its stray bytes and close.
  void release_stray() {
    std::lock_guard lock(mutex_);
    stray_released_ = true;
    stray_cv_.notify_all();
  }

  // Every request the client under test sent so far, resends included: a
  // marker request on a new connection is accepted after all of them, so
  // once it is answered nothing earlier can still be pending.
  int requests() {
    auto marker = HttpClient(port_).get("/marker", "");
    REQUIRE(marker.status == 200);
    std::lock_guard lock(mutex_);
    int n = 0;
    for (const auto& t : targets_) n += t != "/marker";
    return n;
  }

 private:
  void serve() {
    while (!stopping_) {
      int fd = ::accept(listener_, nullptr, nullptr);
      if (fd < 0) return;
      timeval limit{30, 0};  // a test bug must not hang the binary
      ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &limit, sizeof limit);
      serve_connection(fd);
    }
  }

  void serve_connection(int fd) {
    std::string in;
    for (;;) {
      std::string method, target;
      if (!read_request(fd, in, method, target)) break;
      Act act = Act::answer_and_close;
      int n = 0;
      {
        std::lock_guard lock(mutex_);
        targets_.push_back(target);
        if (target != "/marker") n = ++count_;
      }
      if (n > 0) act = script_(n);
      if (act == Act::hang) {
        held_.push_back(fd);
        return;
      }
      if (act == Act::drop) break;
      // A HEAD reply has the GET's Content-Length and no body.
      std::string reply = std::string("HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: ") +
                          (act == Act::answer_saying_close ? "close" : "keep-alive") + "\r\n\r\n" +
                          (method == "HEAD" ? "" : "ok");
      if (act == Act::answer_twice) reply += reply;
      (void)::send(fd, reply.data(), reply.size(), MSG_NOSIGNAL);
      if (act == Act::answer_then_stray) {
        std::unique_lock lock(mutex_);
        stray_cv_.wait(lock, [this] { return stray_released_; });
        const std::string stray = "HTTP/1.1 500 Internal Server Error\r\nContent-Length: 0\r\n\r\n";
        (void)::send(fd, stray.data(), stray.size(), MSG_NOSIGNAL);
        break;
      }
      if (act == Act::answer_and_close || act == Act::answer_saying_close) break;
    }
    ::close(fd);
  }

  // Reads one request (header and Content-Length body) from `in` + fd.
  static bool read_request(int fd, std::string& in, std::string& method, std::string& target) {
    std::size_t end;
    while ((end = in.find("\r\n\r\n")) == std::string::npos)
      if (!fill(fd, in)) return false;
    const std::string head = in.substr(0, end + 2);
    std::size_t length = 0;
    for (std::size_t at = head.find("\r\n"); at != std::string::npos && at + 2 < head.size();
         at = head.find("\r\n", at + 2)) {
      const std::string line = head.substr(at + 2, head.find("\r\n", at + 2) - at - 2);
      if (strncasecmp(line.c_str(), "Content-Length:", 15) == 0) length = std::stoul(line.substr(15));
    }
    while (in.size() < end + 4 + length)
      if (!fill(fd, in)) return false;
    const auto sp = head.find(' ');
    method = head.substr(0, sp);
    target = head.substr(sp + 1, head.find(' ', sp + 1) - sp - 1);
    in.erase(0, end + 4 + length);
    return true;
  }

  static bool fill(int fd, std::string& in) {
    char buf[4096];
    auto n = ::recv(fd, buf, sizeof buf, 0);
    if (n <= 0) return false;
    in.append(buf, static_cast<std::size_t>(n));
    return true;
  }

  std::function<Act(int)> script_;
  int listener_ = -1;
  std::uint16_t port_ = 0;
  std::atomic<bool> stopping_{false};
  std::mutex mutex_;
  std::condition_variable stray_cv_;
  bool stray_released_ = false;
  std::vector<std::string> targets_;
  int count_ = 0;
  std::vector<int> held_;  // only touched by the server thread until it is joined
  std::jthread thread_;
};

const Headers json_type{{"Content-Type", "application/json"}};

}  // namespace

TEST_CASE("test client: a POST whose connection drops before the reply is not resent") {
  ScriptedServer server([](int) { return Act::drop; });
  HttpClient c(server.port());
  CHECK_THROWS_AS(c.request("POST", "/write", json_type, "{}"), boost::system::system_error);
  CHECK(server.requests() == 1);
}

TEST_CASE("test client: a kept-alive connection the server closed while idle is replaced before sending") {
  ScriptedServer server([](int) { return Act::answer_and_close; });
  HttpClient c(server.port());
  CHECK(c.request("POST", "/first", json_type, "{}").status == 200);
  // The server serves one connection at a time: once its marker request is
  // answered, the first connection is closed and its FIN has reached us.
  CHECK(server.requests() == 1);
  // The next POST goes out once, on a new connection: nothing sent twice.
  CHECK(c.request("POST", "/second", json_type, "{}").status == 200);
  CHECK(server.requests() == 2);
  CHECK(c.get("/third", "").status == 200);
  CHECK(server.requests() == 3);
  // Each replaced connection is counted: a test can tell one connection from three.
  CHECK(c.connections_opened() == 3);
  CHECK(c.reconnects() == 2);
}

TEST_CASE("test client: a POST on a kept-alive connection that drops it unanswered is not resent") {
  ScriptedServer server([](int n) { return n == 1 ? Act::answer : Act::drop; });
  HttpClient c(server.port());
  CHECK(c.request("POST", "/first", json_type, "{}").status == 200);
  // The server read the second POST and closed without a reply: it may have
  // acted on it, so it is never sent again.
  CHECK_THROWS_AS(c.request("POST", "/second", json_type, "{}"), boost::system::system_error);
  CHECK(server.requests() == 2);
}

TEST_CASE("test client: a GET on a kept-alive connection that drops it unanswered is sent once more, on a new one") {
  ScriptedServer server([](int n) { return n % 2 == 1 ? Act::answer : Act::drop; });
  HttpClient c(server.port());
  CHECK(c.get("/first", "").status == 200);   // 1: answered, kept open
  CHECK(c.get("/second", "").status == 200);  // 2: dropped unanswered; 3: sent again on a new connection
  // Not a read that carries a protected header: 4 is dropped and not resent.
  CHECK_THROWS_AS(c.request("GET", "/third", {{"Fence-Grant", "g"}}), boost::system::system_error);
  CHECK(server.requests() == 4);
  CHECK(c.reconnects() == 1);  // the resend of /second
}

TEST_CASE("test client: a GET whose fresh connection drops is not resent") {
  ScriptedServer server([](int) { return Act::drop; });
  HttpClient c(server.port());
  CHECK_THROWS_AS(c.get("/read", ""), boost::system::system_error);
  CHECK(server.requests() == 1);
}

TEST_CASE("test client: a timeout throws a timeout and is not resent, even for a GET on a reused connection") {
  ScriptedServer server([](int n) { return n == 1 ? Act::answer : Act::hang; });
  HttpClient c(server.port(), std::chrono::milliseconds(300));
  CHECK(c.get("/first", "").status == 200);
  try {
    c.get("/second", "");
    FAIL("a request the server never answered returned");
  } catch (const boost::system::system_error& e) {
    CHECK(e.code() == boost::beast::error::timeout);
  }
  CHECK(server.requests() == 2);
}

TEST_CASE("test client: raw tells a connection the server closed from a timeout") {
  SUBCASE("closed") {
    ScriptedServer server([](int) { return Act::answer_and_close; });
    auto r = HttpClient(server.port()).raw("GET / HTTP/1.1\r\nHost: x\r\n\r\n");
    CHECK(r.bytes.rfind("HTTP/1.1 200 OK", 0) == 0);
    CHECK(r.closed_by_peer);
    CHECK_FALSE(r.timed_out);
  }
  SUBCASE("timed out") {
    ScriptedServer server([](int) { return Act::hang; });
    auto r = HttpClient(server.port(), std::chrono::milliseconds(300)).raw("GET / HTTP/1.1\r\nHost: x\r\n\r\n");
    CHECK(r.bytes.empty());
    CHECK(r.timed_out);
    CHECK_FALSE(r.closed_by_peer);
  }
}

TEST_CASE("test client: a HEAD reply ends with its head, and the connection goes on") {
  // Closed after the second reply: the server's marker connection waits for it.
  ScriptedServer server([](int n) { return n == 1 ? Act::answer : Act::answer_and_close; });
  HttpClient c(server.port());
  const auto head = c.request("HEAD", "/read");
  CHECK(head.status == 200);
  CHECK(head.header("Content-Length") == "2");
  CHECK(head.body.empty());
  const auto get = c.get("/read", "");  // on the same connection: no body was left unread
  CHECK(get.body == "ok");
  CHECK(c.connections_opened() == 1);
  CHECK(server.requests() == 2);
}

TEST_CASE("test client: a reply that says Connection: close is followed by a new connection, not a reconnect") {
  ScriptedServer server([](int) { return Act::answer_saying_close; });
  HttpClient c(server.port());
  CHECK(c.get("/first", "").header("Connection") == "close");
  CHECK(c.request("POST", "/second", json_type, "{}").status == 200);
  CHECK(server.requests() == 2);
  CHECK(c.connections_opened() == 2);
  CHECK(c.reconnects() == 0);  // the test saw the close in the reply
}

TEST_CASE("test client: two replies to one request fail it, with the count and the first bytes") {
  // Exactly the bug a lenient client hides: the second reply would be
  // dropped with the connection, or taken as the answer to the next request.
  ScriptedServer server([](int) { return Act::answer_twice; });
  HttpClient c(server.port());
  try {
    c.request("POST", "/write", json_type, "{}");
    FAIL("a request answered twice returned");
  } catch (const UnexpectedBytes& e) {
    const std::string what = e.what();
    CAPTURE(what);
    // The second reply: its head and body, 64 bytes.
    CHECK(what.find("64 unexpected byte(s)") != std::string::npos);
    CHECK(what.find("after the 200 reply to POST /write") != std::string::npos);
    CHECK(what.find(R"("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n)") != std::string::npos);
  }
  CHECK(server.requests() == 1);
}

TEST_CASE("test client: bytes waiting on a kept-alive connection fail the next request instead of a reconnect") {
  ScriptedServer server([](int) { return Act::answer_then_stray; });
  HttpClient c(server.port());
  CHECK(c.request("POST", "/first", json_type, "{}").status == 200);
  // Only now does the server send a stray reply and close; its marker
  // connection is accepted once it has, so both are here before the GET.
  server.release_stray();
  CHECK(server.requests() == 1);
  try {
    c.get("/second", "");
    FAIL("a request on a connection holding a stray reply returned");
  } catch (const UnexpectedBytes& e) {
    const std::string what = e.what();
    CAPTURE(what);
    CHECK(what.find("waiting before the next request, after the 200 reply to POST /first") != std::string::npos);
    CHECK(what.find(R"("HTTP/1.1 500 Internal Server Error\r\n)") != std::string::npos);
  }
  // The GET was never sent, on that connection or a new one.
  CHECK(server.requests() == 1);
  CHECK(c.reconnects() == 0);
}
