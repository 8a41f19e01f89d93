// The only Beast translation unit of demo-provider: listeners, connections,
// deadlines, and the timing of injected faults. What a request means is
// decided in provider_core; this file decides when bytes move.
#include "server.hpp"

#include "control_api.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/ssl/context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl/ssl_stream.hpp>

#include <exception>
#include <iostream>
#include <list>
#include <memory>
#include <optional>
#include <stdexcept>
#include <tuple>
#include <type_traits>

namespace demo_provider {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
namespace ssl = asio::ssl;
using tcp = asio::ip::tcp;
using tls_stream = beast::ssl_stream<beast::tcp_stream>;
using beast_request = http::request<http::string_body>;
using beast_response = http::response<http::string_body>;
using std::chrono::milliseconds;

constexpr auto nothrow = asio::as_tuple(asio::use_awaitable);
constexpr std::uint64_t body_limit = 1024 * 1024;
constexpr std::uint32_t header_limit = 16 * 1024;
// Once a request's first byte is in, the rest must follow within this, so a
// stalled client cannot hold a connection forever.
constexpr auto request_deadline = std::chrono::seconds(10);
constexpr auto write_deadline = std::chrono::seconds(10);
// A webhook receiver gets this long for resolve, connect, request and reply.
constexpr auto webhook_deadline = std::chrono::seconds(10);
// --idle-timeout-ms is a business-port behaviour the gateway must cope with;
// test harnesses talking to the control port should not have to.
constexpr auto control_idle_timeout = std::chrono::seconds(60);

beast::tcp_stream& tcp_of(beast::tcp_stream& stream) { return stream; }
beast::tcp_stream& tcp_of(tls_stream& stream) { return stream.next_layer(); }

// Shutdown first so the peer gets a FIN ("empty reply") rather than a reset
// where the kernel allows it.
void close_now(beast::tcp_stream& tcp) {
  beast::error_code ignored;
  tcp.socket().shutdown(tcp::socket::shutdown_both, ignored);
  tcp.close();
}

void report_failure(std::exception_ptr failure) {
  if (!failure) return;
  try {
    std::rethrow_exception(failure);
  } catch (const std::exception& e) {
    std::cerr << "demo-provider: connection failed: " << e.what() << '\n';
  }
}

asio::awaitable<void> pause_for(milliseconds duration) {
  asio::steady_timer timer(co_await asio::this_coro::executor, duration);
  co_await timer.async_wait(nothrow);
}

plain_request to_plain(const beast_request& request) {
  plain_request out;
  out.method = std::string(request.method_string());
  out.target = std::string(request.target());
  for (const auto& field : request) out.headers.emplace_back(field.name_string(), field.value());
  out.body = request.body();
  return out;
}

beast_response to_beast(const plain_reply& reply, unsigned version, bool keep_alive) {
  beast_response response{static_cast<http::status>(reply.status), version};
  response.set(http::field::server, "demo-provider");
  response.set(http::field::content_type, "application/json");
  // insert, not set: the reply_headers switch sends duplicates on purpose.
  for (const auto& [name, value] : reply.headers) response.insert(name, value);
  response.keep_alive(keep_alive);
  response.body() = reply.body;
  response.prepare_payload();
  return response;
}

// A request that could not be parsed gets one of these, then the connection
// closes: after a parse error the stream position is unknown.
std::optional<plain_reply> rejection_for(beast::error_code ec) {
  if (ec == http::error::body_limit) return json_reply(413, {{"error", "payload_too_large"}});
  if (ec == http::error::header_limit) return json_reply(431, {{"error", "headers_too_large"}});
  if (ec.category() == http::make_error_code(http::error::bad_target).category() &&
      ec != http::error::end_of_stream && ec != http::error::partial_message)
    return json_reply(400, {{"error", "bad_request"}});
  return std::nullopt;  // timeout, reset, close: nobody to answer
}

struct read_outcome {
  std::optional<beast_request> request;
  std::optional<plain_reply> rejection;
};

// Reads one request with a fresh parser. `idle` is true exactly while no byte
// of the next request has arrived: only then may `refuse` close the connection.
template <class Stream>
asio::awaitable<read_outcome> read_request(Stream& stream, beast::flat_buffer& buffer,
                                           milliseconds idle_timeout, bool& idle) {
  beast::tcp_stream& tcp = tcp_of(stream);
  beast::error_code ec;
  if (buffer.size() == 0) {
    idle = true;
    tcp.expires_after(idle_timeout);
    std::size_t received = 0;
    std::tie(ec, received) = co_await stream.async_read_some(buffer.prepare(4096), nothrow);
    idle = false;
    if (ec) co_return read_outcome{};
    buffer.commit(received);
  }

  http::request_parser<http::string_body> parser;
  parser.body_limit(body_limit);
  parser.header_limit(header_limit);
  tcp.expires_after(request_deadline);
  std::tie(ec, std::ignore) = co_await http::async_read_header(stream, buffer, parser, nothrow);
  // curl sends larger bodies only after "100 Continue" (or a 1 s wait).
  if (!ec && iequals(parser.get()[http::field::expect], "100-continue") && !parser.is_done()) {
    http::response<http::empty_body> go_on{http::status::continue_, parser.get().version()};
    std::tie(ec, std::ignore) = co_await http::async_write(stream, go_on, nothrow);
  }
  if (!ec && !parser.is_done())
    std::tie(ec, std::ignore) = co_await http::async_read(stream, buffer, parser, nothrow);
  tcp.expires_never();
  if (ec) co_return read_outcome{std::nullopt, rejection_for(ec)};
  co_return read_outcome{parser.release(), std::nullopt};
}

// A reply to HEAD keeps the Content-Length the GET would have, but sends
// only the header (RFC 9110 section 9.3.2).
template <class Stream>
asio::awaitable<bool> write_reply(Stream& stream, const plain_reply& reply, unsigned version,
                                  bool keep_alive, bool head = false) {
  beast_response response = to_beast(reply, version, keep_alive);
  tcp_of(stream).expires_after(write_deadline);
  beast::error_code ec;
  if (head) {
    http::response_serializer<http::string_body> serializer(response);
    std::tie(ec, std::ignore) = co_await http::async_write_header(stream, serializer, nothrow);
  } else {
    std::tie(ec, std::ignore) = co_await http::async_write(stream, response, nothrow);
  }
  tcp_of(stream).expires_never();
  co_return !ec;
}

// Posts one signed webhook on its own connection (Connection: close) and
// reports what came back; never throws.
asio::awaitable<webhook_delivery> deliver_webhook(const webhook_settings& settings, webhook_event event) {
  webhook_delivery delivery;
  const auto unix_now = std::chrono::duration_cast<std::chrono::seconds>(
      std::chrono::system_clock::now().time_since_epoch());
  delivery.sent = build_webhook(settings, event, unix_now.count());
  const auto executor = co_await asio::this_coro::executor;
  tcp::resolver resolver(executor);
  auto [resolve_ec, endpoints] = co_await resolver.async_resolve(settings.url.host, settings.url.port, nothrow);
  if (resolve_ec) {
    delivery.error = "resolve: " + resolve_ec.message();
    co_return delivery;
  }
  beast::tcp_stream stream(executor);
  stream.expires_after(webhook_deadline);
  auto [connect_ec, endpoint] = co_await stream.async_connect(endpoints, nothrow);
  if (connect_ec) {
    delivery.error = "connect: " + connect_ec.message();
    co_return delivery;
  }
  http::request<http::string_body> request{http::verb::post, settings.url.target, 11};
  request.set(http::field::host, settings.url.host + ":" + settings.url.port);
  request.set(http::field::user_agent, "demo-provider");
  for (const auto& [name, value] : delivery.sent.headers) request.insert(name, value);
  request.keep_alive(false);
  request.body() = delivery.sent.body;
  request.prepare_payload();
  auto [write_ec, written] = co_await http::async_write(stream, request, nothrow);
  if (write_ec) {
    delivery.error = "write: " + write_ec.message();
    co_return delivery;
  }
  beast::flat_buffer buffer;
  http::response_parser<http::string_body> parser;
  parser.body_limit(body_limit);
  auto [read_ec, read] = co_await http::async_read(stream, buffer, parser, nothrow);
  if (read_ec) {
    delivery.error = "read: " + read_ec.message();
    co_return delivery;
  }
  delivery.receiver_status = parser.get().result_int();
  delivery.receiver_body = parser.get().body();
  close_now(stream);
  co_return delivery;
}

// Ends a hold that was not woken (connection frame destroyed at shutdown).
class hold_ticket {
 public:
  hold_ticket(hold_gate& gate, std::uint64_t ticket) : gate_(gate), ticket_(ticket) {}
  ~hold_ticket() { gate_.leave(ticket_); }
  hold_ticket(const hold_ticket&) = delete;
  hold_ticket& operator=(const hold_ticket&) = delete;

 private:
  hold_gate& gate_;
  std::uint64_t ticket_;
};

// Waits, without polling, until the gate wakes this request: its timer never
// expires by itself, so only the waker's cancel() ends the wait.
asio::awaitable<hold_end> wait_until_released(hold_gate& gate) {
  asio::steady_timer timer(co_await asio::this_coro::executor, asio::steady_timer::time_point::max());
  std::optional<hold_end> end;
  hold_ticket ticket(gate, gate.park([&](hold_end how) {
    end = how;
    timer.cancel();
  }));
  while (!end) co_await timer.async_wait(nothrow);
  co_return *end;
}

// A business request counts as in progress (GET /__test/activity) from its
// recording until this leaves scope: answered, dropped or closed.
class in_progress_scope {
 public:
  explicit in_progress_scope(provider_core& core) : core_(core) {}
  ~in_progress_scope() { core_.finished(); }
  in_progress_scope(const in_progress_scope&) = delete;
  in_progress_scope& operator=(const in_progress_scope&) = delete;

 private:
  provider_core& core_;
};

asio::ip::address listen_address(const std::string& text) {
  beast::error_code ec;
  const auto address = asio::ip::make_address(text, ec);
  if (ec) throw std::runtime_error("--listen " + text + ": " + ec.message());
  return address;
}

// Business connections, so `refuse` can close the idle ones. Entries point
// into coroutine frames and are removed by those frames' guards.
struct tracked_connection {
  beast::tcp_stream* tcp;
  bool idle = false;
};
using connection_list = std::list<tracked_connection>;

class tracking_guard {
 public:
  tracking_guard(connection_list& list, beast::tcp_stream& tcp)
      : list_(list), entry_(list.insert(list.end(), tracked_connection{&tcp})) {}
  ~tracking_guard() { list_.erase(entry_); }
  tracking_guard(const tracking_guard&) = delete;
  tracking_guard& operator=(const tracking_guard&) = delete;

  bool& idle() { return entry_->idle; }

 private:
  connection_list& list_;
  connection_list::iterator entry_;
};

class provider_server {
 public:
  provider_server(asio::io_context& io, const options& opts, provider_core& core,
                  connection_list& business_connections, ssl::context* tls)
      : io_(io), opts_(opts), core_(core), business_connections_(business_connections), tls_(tls),
        business_endpoint_(listen_address(opts.listen), opts.port),
        control_endpoint_(business_endpoint_.address(), opts.control_port) {}

  void start() {
    // ec.message() alone: what() of a system_error would add Boost's source location.
    if (const auto ec = open_business_listener())
      throw std::runtime_error("business port " + std::to_string(opts_.port) + ": " + ec.message());
    beast::error_code ec;
    control_acceptor_ = listen_on(control_endpoint_, ec);
    if (ec)
      throw std::runtime_error("control port " + std::to_string(opts_.control_port) + ": " + ec.message());
    control_endpoint_.port(control_acceptor_->local_endpoint().port());
    asio::co_spawn(io_, accept_loop(control_acceptor_, false), report_failure);
  }

  unsigned short business_port() const { return business_endpoint_.port(); }
  unsigned short control_port() const { return control_endpoint_.port(); }

 private:
  std::shared_ptr<tcp::acceptor> listen_on(const tcp::endpoint& endpoint, beast::error_code& ec) {
    auto acceptor = std::make_shared<tcp::acceptor>(io_);
    acceptor->open(endpoint.protocol(), ec);
    // Reopening after `refuse` must win the port back although connections
    // accepted on it may still sit in TIME_WAIT.
    if (!ec) acceptor->set_option(asio::socket_base::reuse_address(true), ec);
    if (!ec) acceptor->bind(endpoint, ec);
    if (!ec) acceptor->listen(asio::socket_base::max_listen_connections, ec);
    return ec ? nullptr : acceptor;
  }

  beast::error_code open_business_listener() {
    beast::error_code ec;
    auto acceptor = listen_on(business_endpoint_, ec);
    if (ec) return ec;
    // Port 0 becomes the chosen port here, so a reopen binds the same one.
    business_endpoint_.port(acceptor->local_endpoint().port());
    business_acceptor_ = acceptor;
    asio::co_spawn(io_, accept_loop(acceptor, true), report_failure);
    return {};
  }

  void close_business_listener() {
    if (business_acceptor_) {
      beast::error_code ignored;
      business_acceptor_->close(ignored);
      business_acceptor_.reset();
    }
    // Closing completes their pending reads later, never inside this loop.
    for (tracked_connection& connection : business_connections_)
      if (connection.idle) close_now(*connection.tcp);
  }

  asio::awaitable<void> accept_loop(std::shared_ptr<tcp::acceptor> acceptor, bool business) {
    for (;;) {
      auto [ec, socket] = co_await acceptor->async_accept(nothrow);
      if (!acceptor->is_open()) co_return;  // closed by `refuse` or at shutdown
      if (ec) {
        // E.g. out of descriptors: back off instead of spinning on the error.
        co_await pause_for(milliseconds(50));
        continue;
      }
      if (!business)
        asio::co_spawn(io_, serve_control(beast::tcp_stream(std::move(socket))), report_failure);
      else if (tls_)
        asio::co_spawn(io_, serve_business(tls_stream(std::move(socket), *tls_)), report_failure);
      else
        asio::co_spawn(io_, serve_business(beast::tcp_stream(std::move(socket))), report_failure);
    }
  }

  plain_reply answer(const plain_request& request, const fault& injected) {
    try {
      return core_.answer(request, injected, provider_core::clock::now());
    } catch (const std::exception& e) {
      std::cerr << "demo-provider: business request failed: " << e.what() << '\n';
      return json_reply(500, {{"error", "internal"}});
    }
  }

  template <class Stream>
  asio::awaitable<void> serve_business(Stream stream) {
    beast::tcp_stream& tcp = tcp_of(stream);
    tracking_guard tracked(business_connections_, tcp);
    const std::uint64_t connection = ++connections_accepted_;
    if constexpr (std::is_same_v<Stream, tls_stream>) {
      tcp.expires_after(request_deadline);
      const auto [ec] = co_await stream.async_handshake(ssl::stream_base::server, nothrow);
      if (ec) {
        close_now(tcp);
        co_return;
      }
    }

    beast::flat_buffer buffer;
    // Under `refuse` no business connection may wait for another request.
    while (!core_.faults().refusing()) {
      read_outcome in = co_await read_request(stream, buffer, opts_.idle_timeout, tracked.idle());
      if (!in.request) {
        if (in.rejection) co_await write_reply(stream, *in.rejection, 11, false);
        break;
      }
      const beast_request& request = *in.request;
      plain_request plain = to_plain(request);
      plain.connection = connection;
      core_.record(plain);
      in_progress_scope in_progress(core_);

      const fault injected = core_.faults().take();
      if (injected.mode == fault_mode::delay) co_await pause_for(injected.delay);
      // Cancelled by reset: closed without executing or answering.
      if (injected.mode == fault_mode::hold &&
          co_await wait_until_released(core_.holds()) == hold_end::cancelled)
        break;
      const plain_reply reply = answer(plain, injected);
      // The execution is reported whatever the client learns of it.
      send_queued_webhooks();
      // The effect happened; the client must learn nothing about it.
      if (injected.mode == fault_mode::drop_after_execute) break;
      if (injected.mode == fault_mode::late_reply) co_await pause_for(injected.delay);

      const bool keep_alive = request.keep_alive() && !core_.faults().refusing();
      const bool head = request.method() == http::verb::head;
      if (!co_await write_reply(stream, reply, request.version(), keep_alive, head) || !keep_alive) break;
      if (injected.mode == fault_mode::close_after_reply) break;  // kept-alive, as far as the client knows
    }
    close_now(tcp);
  }

  plain_reply handle_control(const plain_request& request) {
    const bool was_refusing = core_.faults().refusing();
    plain_reply reply;
    try {
      reply = demo_provider::handle_control(request, core_);
    } catch (const std::exception& e) {
      reply = json_reply(500, {{"error", "internal"}, {"detail", e.what()}});
    }
    const bool refusing = core_.faults().refusing();
    if (refusing && !was_refusing) close_business_listener();
    if (!refusing && was_refusing) {
      if (const auto ec = open_business_listener())
        reply = json_reply(500, {{"error", "listener_reopen_failed"}, {"detail", ec.message()}});
    }
    return reply;
  }

  void send_queued_webhooks() {
    for (webhook_event& event : core_.take_webhooks())
      asio::co_spawn(io_, deliver_and_record(std::move(event)), report_failure);
  }

  asio::awaitable<void> deliver_and_record(webhook_event event) {
    core_.webhook_delivered(co_await deliver_webhook(*core_.webhook_config(), std::move(event)));
  }

  asio::awaitable<void> serve_control(beast::tcp_stream stream) {
    beast::flat_buffer buffer;
    bool idle = false;  // control connections are never closed by `refuse`
    for (;;) {
      read_outcome in = co_await read_request(stream, buffer, control_idle_timeout, idle);
      if (!in.request) {
        if (in.rejection) co_await write_reply(stream, *in.rejection, 11, false);
        break;
      }
      plain_reply reply = handle_control(to_plain(*in.request));
      // POST /__test/webhooks queued one: send it now and answer with how it went.
      for (webhook_event& event : core_.take_webhooks()) {
        webhook_delivery delivery = co_await deliver_webhook(*core_.webhook_config(), std::move(event));
        reply = json_reply(delivery.receiver_status ? 200 : 502, delivery_json(delivery));
        core_.webhook_delivered(std::move(delivery));
      }
      const bool keep_alive = in.request->keep_alive();
      if (!co_await write_reply(stream, reply, in.request->version(), keep_alive) || !keep_alive) break;
    }
    close_now(stream);
  }

  asio::io_context& io_;
  const options& opts_;
  provider_core& core_;
  connection_list& business_connections_;
  ssl::context* tls_;
  tcp::endpoint business_endpoint_;
  tcp::endpoint control_endpoint_;
  std::shared_ptr<tcp::acceptor> business_acceptor_;  // null while refusing
  std::shared_ptr<tcp::acceptor> control_acceptor_;
  std::uint64_t connections_accepted_ = 0;  // business connections, for the request records
};

}  // namespace

int run_server(const options& opts, provider_core& core) {
  // Both outlive the io_context: connection frames destroyed with it still
  // deregister from the list and still hold streams built on the context.
  connection_list business_connections;
  std::optional<ssl::context> tls;
  if (!opts.tls_cert.empty()) {
    tls.emplace(ssl::context::tls_server);
    tls->set_options(ssl::context::default_workarounds | ssl::context::no_sslv2 |
                     ssl::context::no_sslv3 | ssl::context::no_tlsv1 | ssl::context::no_tlsv1_1);
    tls->use_certificate_chain_file(opts.tls_cert);
    tls->use_private_key_file(opts.tls_key, ssl::context::pem);
  }

  asio::io_context io(1);  // one thread: provider_core needs no locks
  provider_server server(io, opts, core, business_connections, tls ? &*tls : nullptr);
  server.start();
  std::cout << "demo-provider kind=" << to_string(opts.kind) << " port=" << server.business_port()
            << " control_port=" << server.control_port() << std::endl;

  asio::signal_set signals(io, SIGINT, SIGTERM);
  signals.async_wait([&io](beast::error_code, int) { io.stop(); });
  io.run();
  return 0;
}

}  // namespace demo_provider
