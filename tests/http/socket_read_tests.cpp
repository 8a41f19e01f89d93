// gw::async_receive (gateway/socket_read.hpp) on real loopback TCP sockets.
// Each way of starting a read is checked for what it saves (the recv calls
// are counted: this binary wraps libc's recv and recvmsg, so the count is
// of system calls, not of time) and for what it must never lose: bytes in
// order whenever they come, the end of the stream, a reset, cancel() and
// close(), as Asio's own read reports them.
#include "socket_read.hpp"

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
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>

namespace {

std::atomic<int> counted_fd{-1};
std::atomic<int> recv_calls{0};

}  // namespace

// Every recv and recvmsg of this process passes here (Asio's reads and the
// gateway's are compiled into this binary, and an executable's definition
// comes before libc's); the ones on the socket under test are counted.
extern "C" ssize_t recv(int fd, void* buf, size_t n, int flags) {
  using Recv = ssize_t (*)(int, void*, size_t, int);
  static const auto real = reinterpret_cast<Recv>(dlsym(RTLD_NEXT, "recv"));
  if (fd == counted_fd.load()) ++recv_calls;
  return real(fd, buf, n, flags);
}
extern "C" ssize_t recvmsg(int fd, msghdr* msg, int flags) {
  using Recvmsg = ssize_t (*)(int, msghdr*, int);
  static const auto real = reinterpret_cast<Recvmsg>(dlsym(RTLD_NEXT, "recvmsg"));
  if (fd == counted_fd.load()) ++recv_calls;
  return real(fd, msg, flags);
}

namespace {

namespace asio = boost::asio;
using tcp = asio::ip::tcp;
using namespace std::chrono_literals;

// A connected pair on loopback: `reader` is read, `writer` is the peer.
// With `drain_news` the reader is accepted from a listener given it.
struct Pair {
  asio::io_context io;
  tcp::socket reader{io}, writer{io};
  explicit Pair(bool drain_news = false) {
    tcp::acceptor acceptor(io, tcp::endpoint(asio::ip::make_address("127.0.0.1"), 0));
    if (drain_news) REQUIRE(gw::report_drain(acceptor.native_handle()));
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

void start_read(Pair& p, asio::mutable_buffer into, gw::ReadStart start, Read& out) {
  gw::async_receive(p.reader, into, start, landing_in(out));
}
void start_wait_first(Pair& p, asio::mutable_buffer into, Read& out) {
  start_read(p, into, gw::ReadStart::wait, out);
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

// One read started as `start`, run until it completes: what it got.
std::string receive(Pair& p, std::size_t room, gw::ReadStart start, Read& r) {
  std::string into(room, '\0');
  start_read(p, asio::buffer(into), start, r);
  run_until_done(p, r);
  REQUIRE(r.ec);
  return into.substr(0, r.n);
}


// Starts a read as `start` on a socket with nothing to read, checks that it
// waits with `calls` recv calls made so far, then sends `bytes` and checks
// that the read gets them with one recv more.
void check_waits_then_reads(Pair& p, gw::ReadStart start, int calls, const std::string& bytes) {
  std::string into(64, '\0');
  Read r;
  start_read(p, asio::buffer(into), start, r);
  p.turn();
  CHECK_FALSE(r.ec);
  CHECK(recv_calls == calls);
  p.send(bytes);
  run_until_done(p, r);
  REQUIRE(r.ec);
  CHECK_FALSE(*r.ec);
  CHECK(into.substr(0, r.n) == bytes);
  CHECK(recv_calls == calls + 1);
}

}  // namespace

TEST_CASE("socket read, wait: no recv until bytes come, then one that reads them") {
  Pair p;
  check_waits_then_reads(p, gw::ReadStart::wait, 0, "reply");
}

TEST_CASE("socket read, wait: Asio's own read tries the empty socket first (what the count above saves)") {
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

TEST_CASE("socket read, wait: bytes that came after the socket was found empty, before the read, are read") {
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

TEST_CASE("socket read, wait: a stream sent in uneven pieces arrives whole and in order") {
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

TEST_CASE("socket read, wait: the end of the stream completes it with eof, a reset with connection_reset") {
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

TEST_CASE("socket read, wait: cancel() and close() end it with operation_aborted") {
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

TEST_CASE("socket read: on a closed socket every start fails at once, as Asio's own read") {
  for (const auto start : {gw::ReadStart::wait, gw::ReadStart::if_reported, gw::ReadStart::try_first}) {
    CAPTURE(static_cast<int>(start));
    Pair p;
    p.reader.close();
    std::string into(8, '\0');
    Read r;
    start_read(p, asio::buffer(into), start, r);
    run_until_done(p, r);
    REQUIRE(r.ec);
    CHECK(*r.ec == asio::error::bad_descriptor);
  }
}

TEST_CASE("socket read, if_reported: after a read that left nothing, the next waits with no recv") {
  Pair p(true);
  Read r;
  p.send("request one");
  p.wait_readable();
  CHECK(receive(p, 64, gw::ReadStart::if_reported, r) == "request one");
  CHECK_FALSE(*r.ec);
  CHECK(recv_calls == 1);
  // No try: the socket said it was drained.
  check_waits_then_reads(p, gw::ReadStart::if_reported, 1, "request two");
}

TEST_CASE("socket read, if_reported: without drain news it tries first, as Asio's own read") {
  Pair p;
  Read r;
  p.send("request one");
  p.wait_readable();
  CHECK(receive(p, 64, gw::ReadStart::if_reported, r) == "request one");
  std::string into(64, '\0');
  start_read(p, asio::buffer(into), gw::ReadStart::if_reported, r);
  p.turn();
  CHECK(recv_calls == 2);  // the try that found nothing
  p.send("two");
  run_until_done(p, r);
  REQUIRE(r.ec);
  CHECK(into.substr(0, r.n) == "two");
}

TEST_CASE("socket read, if_reported: an end of stream that came with the last bytes is read at once") {
  Pair p(true);
  Read r;
  p.send("last request");
  p.writer.shutdown(tcp::socket::shutdown_send);
  p.wait_readable();
  CHECK(receive(p, 64, gw::ReadStart::if_reported, r) == "last request");
  CHECK_FALSE(*r.ec);
  // Nothing more will be reported: the read must not wait for it.
  receive(p, 64, gw::ReadStart::if_reported, r);
  CHECK(*r.ec == asio::error::eof);
}

TEST_CASE("socket read, if_reported: bytes left behind a full read are read at once") {
  Pair p(true);
  Read r;
  p.send("0123456789");
  p.wait_readable();
  CHECK(receive(p, 4, gw::ReadStart::if_reported, r) == "0123");
  CHECK(receive(p, 4, gw::ReadStart::if_reported, r) == "4567");
  CHECK(receive(p, 4, gw::ReadStart::if_reported, r) == "89");
  CHECK(recv_calls == 3);
}

TEST_CASE("socket read, try_first: a reset that came with the bytes is an error at once") {
  Pair p(true);
  Read r;
  p.send("partial he");
  p.writer.set_option(asio::socket_base::linger(true, 0));
  p.writer.close();  // RST: the count of what is left does not show it
  p.wait_readable();
  std::string got = receive(p, 64, gw::ReadStart::if_reported, r);
  if (!*r.ec) {
    CHECK(got == "partial he");
    receive(p, 64, gw::ReadStart::try_first, r);
  }
  CHECK(*r.ec == asio::error::connection_reset);
}

TEST_CASE("socket read, try_first: bytes already there are read with one recv, none there with one and a wait") {
  Pair p(true);
  Read r;
  p.send("abc");
  p.wait_readable();
  CHECK(receive(p, 64, gw::ReadStart::try_first, r) == "abc");
  CHECK(recv_calls == 1);
  // The try, and no second one from the reactor.
  check_waits_then_reads(p, gw::ReadStart::try_first, 2, "def");
}

TEST_CASE("socket read, if_reported with drain news: a stream in uneven pieces arrives whole and in order") {
  Pair p(true);
  std::mt19937 random(11);
  std::string sent, received;
  Read r;
  for (int i = 0; i < 300; ++i) {
    std::string piece(1 + random() % 3000, '\0');
    for (auto& c : piece) c = static_cast<char>('a' + random() % 26);
    if (random() % 2) p.turn();  // sometimes the reactor looks before the bytes come
    p.send(piece);
    sent += piece;
    while (received.size() < sent.size()) {
      const auto start = random() % 3 ? gw::ReadStart::if_reported : gw::ReadStart::try_first;
      received += receive(p, 1 + random() % 4096, start, r);
      REQUIRE_FALSE(*r.ec);
    }
  }
  CHECK(received == sent);
}

TEST_CASE("socket read: drain news given to a listener reach the sockets it accepts") {
  asio::io_context io;
  tcp::acceptor acceptor(io, tcp::endpoint(asio::ip::make_address("127.0.0.1"), 0));
  REQUIRE(gw::report_drain(acceptor.native_handle()));
  tcp::socket client(io), accepted(io);
  client.connect(acceptor.local_endpoint());
  acceptor.accept(accepted);
  int on = 0;
  socklen_t size = sizeof on;
  REQUIRE(::getsockopt(accepted.native_handle(), IPPROTO_TCP, TCP_INQ, &on, &size) == 0);
  CHECK(on == 1);
}
