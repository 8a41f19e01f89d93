// The byte counting under the client, on a real loopback socket pair: a
// write the kernel accepted is counted; a write refused after the peer's
// reset counts nothing, which is what lets the client call it unsent.
#include "upstream/transport.hpp"

#include <doctest/doctest.h>

#include <thread>

namespace gw::upstream::detail {
namespace {

using tcp = net::ip::tcp;

struct WriteOutcome {
  error_code ec;
  std::size_t bytes = 0;
};

WriteOutcome write_some(net::io_context& io, Transport& t, std::string_view data) {
  WriteOutcome out;
  t.async_write_some(net::buffer(data), [&](error_code ec, std::size_t n) { out = {ec, n}; });
  io.restart();
  io.run();
  return out;
}

TEST_CASE("transport counts accepted bytes per exchange and nothing for a refused write") {
  net::io_context io;
  tcp::acceptor acceptor(io, tcp::endpoint(net::ip::make_address("127.0.0.1"), 0));
  Transport t(io.get_executor(), nullptr);
  t.socket().connect(acceptor.local_endpoint());
  tcp::socket peer(io);
  acceptor.accept(peer);

  t.start_counting();
  CHECK_FALSE(t.any_request_byte_sent());
  auto ok = write_some(io, t, "hello");
  CHECK_FALSE(ok.ec);
  CHECK(ok.bytes == 5);
  CHECK(t.any_request_byte_sent());
  CHECK(t.raw_bytes_sent() == 5);

  t.start_counting();  // a new exchange starts from zero
  CHECK_FALSE(t.any_request_byte_sent());

  // Unread data plus SO_LINGER 0: the peer answers with a reset.
  peer.set_option(net::socket_base::linger(true, 0));
  peer.close();
  error_code seen;
  for (int i = 0; i < 500 && !seen; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    char byte;
    t.socket().non_blocking(true);
    t.socket().receive(net::buffer(&byte, 1), TcpSocket::message_peek, seen);
    if (seen == net::error::would_block) seen = {};
  }
  REQUIRE(seen);

  auto refused = write_some(io, t, "second request");
  CHECK(refused.ec);
  CHECK(refused.bytes == 0);
  CHECK_FALSE(t.any_request_byte_sent());
}

}  // namespace
}  // namespace gw::upstream::detail
