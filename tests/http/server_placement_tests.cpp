// Which I/O thread serves a new connection (http/server.cpp, State::next_io):
// the first io_context serving fewer than 4 connections, else the one serving
// the fewest. Seen from the handler, which runs on the connection's thread,
// over real sockets against a bare http::Server with two io_contexts.
#include "http/server.hpp"
#include "support/eventually.hpp"

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/write.hpp>
#include <doctest/doctest.h>

#include <array>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

namespace asio = boost::asio;
using tcp = asio::ip::tcp;
using namespace std::chrono_literals;

namespace {

// Two io_contexts, each run by its own thread; the handler answers with the
// index of the thread it ran on.
struct TwoThreads {
  TwoThreads()
      : server(std::vector<asio::io_context*>{&ios[0], &ios[1]}, gw::http::ServerLimits{},
               [this](gw::http::Request) -> asio::awaitable<gw::http::Response> {
                 const bool first = ios[0].get_executor().running_in_this_thread();
                 co_return gw::http::Response{200, {}, first ? "0" : "1", false, std::nullopt};
               }) {
    port = server.listen("127.0.0.1", 0);
    for (std::size_t i = 0; i < 2; ++i) threads[i] = std::thread([this, i] { ios[i].run(); });
  }
  ~TwoThreads() {
    server.stop_accepting();
    for (std::size_t i = 0; i < 2; ++i) {
      work[i].reset();
      ios[i].stop();
      threads[i].join();
    }
  }

  std::array<asio::io_context, 2> ios;
  using Guard = asio::executor_work_guard<asio::io_context::executor_type>;
  std::array<std::optional<Guard>, 2> work{Guard(ios[0].get_executor()), Guard(ios[1].get_executor())};
  gw::http::Server server;
  std::uint16_t port = 0;
  std::array<std::thread, 2> threads;
};

// A kept-alive client connection; serve() sends one request and returns the
// serving thread's index from the reply's body.
struct Client {
  explicit Client(std::uint16_t port) : socket(io) { socket.connect({asio::ip::make_address("127.0.0.1"), port}); }
  char serve() {
    asio::write(socket, asio::buffer(std::string("GET / HTTP/1.1\r\nHost: t\r\n\r\n")));
    std::string in;
    char buf[1024];
    // The head, then its one byte of body.
    while (in.find("\r\n\r\n") == std::string::npos || in.size() < in.find("\r\n\r\n") + 5)
      in.append(buf, socket.read_some(asio::buffer(buf)));
    REQUIRE(in.find("Content-Length: 1\r\n") != std::string::npos);
    return in.back();
  }
  asio::io_context io;
  tcp::socket socket;
};

}  // namespace

TEST_CASE("connection placement: the first 4 connections share the first thread, and past that the thread serving fewest takes the next") {
  TwoThreads s;
  std::vector<std::unique_ptr<Client>> clients;
  for (int i = 0; i < 4; ++i) {
    clients.push_back(std::make_unique<Client>(s.port));
    CHECK(clients.back()->serve() == '0');
  }
  // The first thread is full: the next ones go to the second until it serves
  // as many, then each to whichever serves fewer.
  for (int i = 0; i < 4; ++i) {
    clients.push_back(std::make_unique<Client>(s.port));
    CHECK(clients.back()->serve() == '1');
  }
  clients.push_back(std::make_unique<Client>(s.port));
  const char fifth_pair = clients.back()->serve();
  clients.push_back(std::make_unique<Client>(s.port));
  CHECK(clients.back()->serve() != fifth_pair);
  // Each connection stays on its thread for its life.
  for (std::size_t i = 0; i < 4; ++i) CHECK(clients[i]->serve() == '0');

  // Once connections of the first thread close, it takes new ones again
  // (the count falls when the server sees the close: asynchronously).
  clients.erase(clients.begin(), clients.begin() + 3);
  CHECK(gw::test::eventually([&] { return s.server.open_connections() == 7; }));
  for (int i = 0; i < 3; ++i) {
    clients.push_back(std::make_unique<Client>(s.port));
    CHECK(clients.back()->serve() == '0');
  }
}
