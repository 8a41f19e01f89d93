#include "support/stalling_proxy.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>

#include <thread>

namespace gw::test {

namespace asio = boost::asio;
using tcp = asio::ip::tcp;
constexpr auto use_tuple = asio::as_tuple(asio::use_awaitable);

// Coroutines hold a plain pointer: the proxy's destructor stops and joins
// the thread before State (and the io_context with their frames) goes.
struct StallingProxy::State {
  asio::io_context io{1};
  tcp::acceptor acceptor{io};
  // Everything runs on the one I/O thread: no locks. Frozen pumps wait on
  // this timer; thaw() cancels it.
  asio::steady_timer thawed{io};
  bool frozen = false;
  tcp::endpoint upstream;
  std::thread thread;
};

namespace {

using State = StallingProxy::State;

asio::awaitable<void> wait_thawed(State* s) {
  while (s->frozen) {
    s->thawed.expires_at(asio::steady_timer::time_point::max());
    co_await s->thawed.async_wait(use_tuple);
  }
}

asio::awaitable<void> pump(State* s, std::shared_ptr<tcp::socket> from,
                           std::shared_ptr<tcp::socket> to) {
  char buf[16384];
  for (;;) {
    auto [ec, n] = co_await from->async_read_some(asio::buffer(buf), use_tuple);
    if (ec) break;
    co_await wait_thawed(s);
    auto [wec, wn] = co_await asio::async_write(*to, asio::buffer(buf, n), use_tuple);
    if (wec) break;
  }
  boost::system::error_code ignored;
  to->shutdown(tcp::socket::shutdown_send, ignored);
}

asio::awaitable<void> serve(State* s, std::shared_ptr<tcp::socket> client) {
  co_await wait_thawed(s);
  auto server = std::make_shared<tcp::socket>(s->io);
  auto [ec] = co_await server->async_connect(s->upstream, use_tuple);
  if (ec) co_return;
  asio::co_spawn(s->io, pump(s, client, server), asio::detached);
  asio::co_spawn(s->io, pump(s, server, client), asio::detached);
}

asio::awaitable<void> accept_loop(State* s) {
  for (;;) {
    auto client = std::make_shared<tcp::socket>(s->io);
    auto [ec] = co_await s->acceptor.async_accept(*client, use_tuple);
    if (ec) co_return;
    asio::co_spawn(s->io, serve(s, client), asio::detached);
  }
}

}  // namespace

StallingProxy::StallingProxy(std::string upstream_host, std::uint16_t upstream_port)
    : state_(std::make_shared<State>()) {
  state_->upstream = tcp::endpoint(asio::ip::make_address(upstream_host), upstream_port);
  tcp::endpoint here(asio::ip::make_address("127.0.0.1"), 0);
  state_->acceptor.open(here.protocol());
  state_->acceptor.bind(here);
  state_->acceptor.listen();
  asio::co_spawn(state_->io, accept_loop(state_.get()), asio::detached);
  state_->thread = std::thread([s = state_.get()] { s->io.run(); });
}

StallingProxy::~StallingProxy() {
  state_->io.stop();
  state_->thread.join();
}

std::uint16_t StallingProxy::port() const { return state_->acceptor.local_endpoint().port(); }

void StallingProxy::freeze() {
  asio::post(state_->io, [s = state_.get()] { s->frozen = true; });
}

void StallingProxy::thaw() {
  asio::post(state_->io, [s = state_.get()] {
    s->frozen = false;
    s->thawed.cancel();
  });
}

}  // namespace gw::test
