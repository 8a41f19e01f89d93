// A scripted HTTP/1.1 server on real sockets for the upstream client tests:
// it listens on 127.0.0.1, port 0, and runs a test-supplied script for each
// accepted connection on its own thread with blocking Asio I/O, optionally
// over TLS. Scripts decide when to answer, stall, close (FIN) or reset (RST).
#pragma once

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl/context.hpp>
#include <boost/asio/ssl/stream.hpp>

#include <atomic>
#include <functional>
#include <list>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

namespace gw::upstream::test {

namespace net = boost::asio;
using tcp = net::ip::tcp;

struct RawRequest {
  std::string method, target;
  std::vector<std::pair<std::string, std::string>> headers;  // as received
  std::string body;
  // Every value of `name` (case-insensitive), in order.
  std::vector<std::string> values(std::string_view name) const;
};

class ServerSession {
 public:
  ServerSession(tcp::socket socket, net::ssl::context* tls, int index);
  ServerSession(const ServerSession&) = delete;
  ServerSession& operator=(const ServerSession&) = delete;

  bool handshake();  // TLS only; false when the client gave up or failed
  int index() const { return index_; }

  // One whole request (Content-Length framed); nullopt at EOF or error.
  std::optional<RawRequest> read_request();
  // Just the request line and headers; the body stays unread.
  std::optional<RawRequest> read_head();
  bool write(std::string_view bytes);
  // Writes `unit` `times` times in pieces, never holding them all: a
  // provider streaming more than a client should ever buffer. False once a
  // write fails (the client gave up and closed).
  bool write_repeated(std::string_view unit, std::size_t times);
  // Blocks until the client's TCP has acknowledged every byte written (its
  // kernel holds them: a peek there sees them), or the connection ended.
  void wait_acknowledged();
  void wait_for_eof();  // reads and drops bytes until the peer closes
  void close();         // orderly: FIN
  void reset();         // abortive: RST (SO_LINGER 0)
  void force_shutdown();  // from another thread: unblocks a blocked read

 private:
  std::size_t read_some(char* data, std::size_t size, boost::system::error_code& ec);
  bool fill();

  tcp::socket socket_;
  std::optional<net::ssl::stream<tcp::socket&>> tls_;
  int index_;
  std::string buffer_;
  std::mutex fd_mutex_;  // close() vs force_shutdown(): never touch a reused fd
  bool closed_ = false;
};

class TestServer {
 public:
  using script = std::function<void(ServerSession&)>;

  // `tls` (server context) must outlive the server; null means plain TCP.
  explicit TestServer(script run, net::ssl::context* tls = nullptr);
  ~TestServer();
  TestServer(const TestServer&) = delete;
  TestServer& operator=(const TestServer&) = delete;

  std::string port() const { return std::to_string(port_); }
  int connections() const { return connections_.load(); }
  int finished_scripts() const { return finished_.load(); }

 private:
  void accept_loop();

  script run_;
  net::ssl::context* tls_;
  net::io_context io_;
  tcp::acceptor acceptor_;
  unsigned short port_ = 0;
  std::atomic<bool> stopping_{false};
  std::atomic<int> connections_{0};
  std::atomic<int> finished_{0};
  std::thread acceptor_thread_;
  std::mutex sessions_mutex_;
  std::list<std::unique_ptr<ServerSession>> sessions_;
  std::vector<std::thread> session_threads_;
};

// "HTTP/1.1 <status> X\r\n<extra>Content-Length: n\r\n\r\n<body>"; `extra`
// lines end in \r\n.
std::string reply(unsigned status, std::string_view body, std::string_view extra = {});

}  // namespace gw::upstream::test
