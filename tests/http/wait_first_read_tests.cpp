// gw::async_read_some_wait_first (gateway/wait_first_read.hpp) on real
// loopback TCP sockets: started on a socket known to be empty, it makes no
// recv until the reactor reports the socket, then reads what came, in order;
// the end of the stream, a reset, cancel() and close() complete it as they
// complete Asio's own read. The system calls are counted, not timed: this
// binary wraps libc's recv.
#include "wait_first_read.hpp"

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/write.hpp>
#include <doctest/doctest.h>

#include <atomic>
#include <chrono>
#include <optional>
#include <random>
#include <string>

#include <dlfcn.h>
#include <poll.h>
#include <sys/socket.h>

namespace {

std::atomic<int> counted_fd{-1};
std::atomic<int> recv_calls{0};

}  // namespace

// Every recv of this process passes here (Asio's reads are compiled into
// this binary, and an executable's definition comes before libc's); the ones
// on the socket under test are counted.
extern "C" ssize_t recv(int fd, void* buf, size_t n, int flags) {
  using Recv = ssize_t (*)(int, void*, size_t, int);
  static const auto real = reinterpret_cast<Recv>(dlsym(RTLD_NEXT, "recv"));
  if (fd == counted_fd.load()) ++recv_calls;
  return real(fd, buf, n, flags);
}

namespace {

namespace asio = boost::asio;
using tcp = asio::ip::tcp;
using namespace std::chrono_literals;

// A connected pair on loopback: `reader` is read, `writer` is the peer.
struct Pair {
  asio::io_context io;
  tcp::socket reader{io}, writer{io};
  Pair() {
    tcp::acceptor acceptor(io, tcp::endpoint(asio::ip::make_address("127.0.0.1"), 0));
    writer.connect(acceptor.local_endpoint());
    acceptor.accept(reader);
    counted_fd = reader.native_handle();
    recv_calls = 0;
  }
  ~Pair() { counted_fd = -1; }
  void send(const std::string& bytes) { asio::write(writer, asio::buffer(bytes)); }
  // Until bytes sent are in the reader's queue (poll(2), not a recv).
  void wait_readable() {
    pollfd fd{reader.native_handle(), POLLIN, 0};
    REQUIRE(::poll(&fd, 1, 5000) == 1);
  }
  // Runs ready handlers and one look at the reactor, without blocking.
  void turn() {
    io.poll();
    io.restart();
  }
};

struct Read {
  std::optional<boost::system::error_code> ec;
  std::size_t n = 0;
};

auto landing_in(Read& out) {
  out = {};
  return [&out](boost::system::error_code ec, std::size_t n) {
    out.ec = ec;
    out.n = n;
  };
}

void start_wait_first(Pair& p, asio::mutable_buffer into, Read& out) {
  gw::async_read_some_wait_first(p.reader, into, landing_in(out));
}

// Runs the pair's io_context until `r` completes, or 5 s pass: a read that
// waits for a report that never comes fails the test instead of blocking it.
void run_until_done(Pair& p, const Read& r) {
  const auto give_up = std::chrono::steady_clock::now() + 5s;
  while (!r.ec && std::chrono::steady_clock::now() < give_up) {
    if (p.io.stopped()) p.io.restart();
    p.io.run_for(10ms);
  }
}

}  // namespace

TEST_CASE("wait-first read: no recv until bytes come, then one that reads them") {
  Pair p;
  std::string into(64, '\0');
  Read r;
  start_wait_first(p, asio::buffer(into), r);
  p.turn();
  CHECK_FALSE(r.ec);
  CHECK(recv_calls == 0);

  p.send("reply");
  run_until_done(p, r);
  REQUIRE(r.ec);
  CHECK_FALSE(*r.ec);
  CHECK(into.substr(0, r.n) == "reply");
  CHECK(recv_calls == 1);
}

TEST_CASE("wait-first read: Asio's own read tries the empty socket first (what the count above saves)") {
  Pair p;
  std::string into(64, '\0');
  Read r;
  p.reader.async_read_some(asio::buffer(into), landing_in(r));
  p.turn();
  CHECK_FALSE(r.ec);
  CHECK(recv_calls == 1);  // EAGAIN
  p.send("reply");
  run_until_done(p, r);
  REQUIRE(r.ec);
  CHECK(into.substr(0, r.n) == "reply");
  CHECK(recv_calls == 2);
}

TEST_CASE("wait-first read: bytes that came after the socket was found empty, before the read, are read") {
  Pair p;
  p.turn();  // the reactor has nothing to report: the socket is empty
  p.send("early");
  p.wait_readable();  // there, and not yet reported
  std::string into(64, '\0');
  Read r;
  start_wait_first(p, asio::buffer(into), r);
  CHECK(recv_calls == 0);
  run_until_done(p, r);
  REQUIRE(r.ec);
  CHECK_FALSE(*r.ec);
  CHECK(into.substr(0, r.n) == "early");
}

TEST_CASE("wait-first read: a stream sent in uneven pieces arrives whole and in order") {
  Pair p;
  std::mt19937 random(7);
  std::string sent, received;
  for (int i = 0; i < 200; ++i) {
    std::string piece(1 + random() % 3000, '\0');
    for (auto& c : piece) c = static_cast<char>('a' + random() % 26);
    // Each piece starts on an empty socket: what came before was read whole.
    std::string into(1 + random() % 4096, '\0');
    Read r;
    start_wait_first(p, asio::buffer(into), r);
    p.send(piece);
    sent += piece;
    run_until_done(p, r);
    REQUIRE(r.ec);
    REQUIRE_FALSE(*r.ec);
    received += into.substr(0, r.n);
    while (received.size() < sent.size()) {  // the rest with Asio's own reads
      p.reader.async_read_some(asio::buffer(into), landing_in(r));
      run_until_done(p, r);
      REQUIRE(r.ec);
      REQUIRE_FALSE(*r.ec);
      received += into.substr(0, r.n);
    }
  }
  CHECK(received == sent);
}

TEST_CASE("wait-first read: the end of the stream completes it with eof, a reset with connection_reset") {
  for (const bool reset : {false, true}) {
    CAPTURE(reset);
    Pair p;
    std::string into(64, '\0');
    Read r;
    start_wait_first(p, asio::buffer(into), r);
    p.turn();
    if (reset) {
      p.writer.set_option(asio::socket_base::linger(true, 0));  // close sends RST
      p.writer.close();
    } else {
      p.writer.shutdown(tcp::socket::shutdown_send);
    }
    run_until_done(p, r);
    REQUIRE(r.ec);
    if (reset)
      CHECK(*r.ec == asio::error::connection_reset);
    else
      CHECK(*r.ec == asio::error::eof);
    CHECK(r.n == 0);
  }
}

TEST_CASE("wait-first read: cancel() and close() end it with operation_aborted") {
  for (const bool close : {false, true}) {
    CAPTURE(close);
    Pair p;
    std::string into(64, '\0');
    Read r;
    start_wait_first(p, asio::buffer(into), r);
    p.turn();
    REQUIRE_FALSE(r.ec);
    if (close)
      p.reader.close();
    else
      p.reader.cancel();
    run_until_done(p, r);
    REQUIRE(r.ec);
    CHECK(*r.ec == asio::error::operation_aborted);
  }
}

TEST_CASE("wait-first read: on a closed socket it fails at once, as Asio's own read") {
  Pair p;
  p.reader.close();
  std::string into(8, '\0');
  Read r;
  start_wait_first(p, asio::buffer(into), r);
  run_until_done(p, r);
  REQUIRE(r.ec);
  CHECK(*r.ec == asio::error::bad_descriptor);
}
