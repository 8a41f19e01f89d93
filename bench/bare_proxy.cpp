// bare-proxy: the least a reverse proxy on the gateway's stack (Asio C++20 coroutines, Beast's
// parsers) costs per request, for bench/floor.sh. It is a measuring instrument, not a server:
// no token, no route, no credential scan, no ids, no log, no limits, no timeouts. Each agent
// connection gets one upstream connection of its own; a request's head goes upstream with the
// path after the gateway's "/v1/tenants/T/tasks/K/providers/P" prefix and the provider's
// credential, and the reply comes back with its own Content-Length.
//
//   bare-proxy --port P --upstream-port U [--threads N] [--credential C]
#include "http/server.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http/empty_body.hpp>
#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/string_body.hpp>

#include <atomic>
#include <charconv>
#include <iostream>
#include <memory>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

namespace {

namespace asio = boost::asio;
namespace http = boost::beast::http;
using tcp = asio::ip::tcp;
constexpr auto use_tuple = asio::as_tuple(asio::use_awaitable);

struct Settings {
  unsigned short port = 0;
  tcp::endpoint upstream;
  unsigned threads = 2;
  std::string credential = "booking-secret";
};

// The path after "/v1/tenants/T/tasks/K/providers/P": seven segments, as the gateway cuts it.
std::string_view provider_path(std::string_view target) {
  std::size_t at = 0;
  for (int segment = 0; segment < 7 && at != std::string_view::npos; ++segment) at = target.find('/', at + 1);
  return at == std::string_view::npos ? std::string_view("/") : target.substr(at);
}

bool dropped(http::field f) {
  return f == http::field::host || f == http::field::authorization || f == http::field::connection ||
         f == http::field::content_length || f == http::field::date;
}

void append_fields(std::string& out, const http::fields& fields) {
  for (const auto& f : fields) {
    if (dropped(f.name())) continue;
    out.append(f.name_string()).append(": ").append(f.value()).append("\r\n");
  }
}

asio::awaitable<void> serve(tcp::socket agent, const Settings& s) {
  tcp::socket provider(agent.get_executor());
  if (auto [ec] = co_await provider.async_connect(s.upstream, use_tuple); ec) co_return;
  provider.set_option(tcp::no_delay(true));
  boost::beast::flat_buffer from_agent, from_provider;
  std::string head, reply;
  for (;;) {
    http::request_parser<http::empty_body> request;
    if (auto [ec, n] = co_await http::async_read(agent, from_agent, request, use_tuple); ec) break;
    const auto& rq = request.get();
    head.clear();
    head.append(rq.method_string()).append(" ").append(provider_path(rq.target())).append(" HTTP/1.1\r\n");
    head.append("Host: provider\r\nAuthorization: Bearer ").append(s.credential).append("\r\n");
    append_fields(head, rq.base());
    head.append("\r\n");
    if (auto [ec, n] = co_await asio::async_write(provider, asio::buffer(head), use_tuple); ec) break;
    http::response_parser<http::string_body> response;
    if (auto [ec, n] = co_await http::async_read(provider, from_provider, response, use_tuple); ec) break;
    const auto& r = response.get();
    reply.clear();
    reply.append("HTTP/1.1 ").append(std::to_string(r.result_int())).append(" ").append(r.reason()).append("\r\n");
    append_fields(reply, r.base());
    reply.append("Content-Length: ").append(std::to_string(r.body().size())).append("\r\n\r\n").append(r.body());
    if (auto [ec, n] = co_await asio::async_write(agent, asio::buffer(reply), use_tuple); ec) break;
  }
}

// Connections go to the first thread serving fewer than the gateway's packed_connections, else
// the one serving fewest: the gateway's own placement (http/server.cpp), so both wake alike.
struct Threads {
  std::vector<std::unique_ptr<asio::io_context>> ios;
  std::unique_ptr<std::atomic<int>[]> served;
  explicit Threads(unsigned n) : served(std::make_unique<std::atomic<int>[]>(n)) {
    for (unsigned i = 0; i < n; ++i) ios.push_back(std::make_unique<asio::io_context>(1));
  }
  std::size_t next() const {
    std::size_t fewest = 0;
    for (std::size_t i = 0; i < ios.size(); ++i) {
      if (served[i] < static_cast<int>(gw::http::Server::packed_connections)) return i;
      if (served[i] < served[fewest]) fewest = i;
    }
    return fewest;
  }
};

asio::awaitable<void> accept(tcp::acceptor& acceptor, Threads& threads, const Settings& s) {
  for (;;) {
    const auto i = threads.next();
    auto [ec, socket] = co_await acceptor.async_accept(*threads.ios[i], use_tuple);
    if (ec) co_return;
    socket.set_option(tcp::no_delay(true));
    ++threads.served[i];
    auto executor = socket.get_executor();
    asio::co_spawn(executor, serve(std::move(socket), s), [&threads, i](std::exception_ptr) { --threads.served[i]; });
  }
}

}  // namespace

int main(int argc, char** argv) {
  constexpr const char* usage = "usage: bare-proxy --port P --upstream-port U [--threads N] [--credential C]\n";
  Settings s;
  unsigned short upstream_port = 0;
  // A number flag's value: 1 to `most`, else 0 (refused below).
  const auto number = [](std::string_view text, unsigned most) -> unsigned {
    unsigned n = 0;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), n);
    return ec == std::errc{} && end == text.data() + text.size() && n <= most ? n : 0;
  };
  if (argc % 2 == 0) {
    std::cerr << usage;
    return 2;
  }
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string_view flag = argv[i];
    const std::string_view value = argv[i + 1];
    if (flag == "--port") s.port = static_cast<unsigned short>(number(value, 65535));
    else if (flag == "--upstream-port") upstream_port = static_cast<unsigned short>(number(value, 65535));
    else if (flag == "--threads") s.threads = number(value, 64);
    else if (flag == "--credential") s.credential = value;
    else {
      std::cerr << "bare-proxy: unknown flag " << flag << "\n" << usage;
      return 2;
    }
  }
  if (s.port == 0 || upstream_port == 0 || s.threads == 0) {
    std::cerr << usage;
    return 2;
  }
  s.upstream = tcp::endpoint(asio::ip::make_address("127.0.0.1"), upstream_port);

  Threads threads(s.threads);
  auto& first = *threads.ios.front();
  tcp::acceptor acceptor(first, tcp::endpoint(asio::ip::make_address("127.0.0.1"), s.port));
  asio::co_spawn(first, accept(acceptor, threads, s), asio::detached);
  asio::signal_set signals(first, SIGINT, SIGTERM);
  signals.async_wait([&](auto, int) {
    for (auto& io : threads.ios) io->stop();
  });
  std::vector<asio::executor_work_guard<asio::io_context::executor_type>> work;
  std::vector<std::thread> others;
  for (std::size_t i = 1; i < threads.ios.size(); ++i) {
    work.push_back(asio::make_work_guard(*threads.ios[i]));
    others.emplace_back([&io = *threads.ios[i]] { io.run(); });
  }
  first.run();
  for (auto& t : others) t.join();
}
