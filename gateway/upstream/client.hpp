// The upstream HTTP client: pooled keep-alive connections to providers, with
// deadlines, and an exact answer to "did any byte of the request leave?".
// That answer decides not_executed (safe to retry) versus unknown (held), so
// it is counted from what the socket accepted, never guessed (spec section 3).
// No Beast here, and of Asio only the awaitable type: the rest stays in this
// library's .cpp files.
#pragma once

#include "core/header_field.hpp"

#include <boost/asio/awaitable.hpp>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace boost::asio {
class io_context;
}

namespace gw::upstream {

// One provider's connection settings. Pools are keyed by name+host+port+tls.
// ca_file is taken from the first send for a key. The pool-wide limits
// (max_connections, max_queued, idle_retire) follow the highest `generation`
// the pool has seen, from a send or from Client::update, so settings
// reloaded while requests are in flight take over and an older request
// cannot bring the old limits back. The per-request limits (timeouts, body
// limit) come with every send, and stay those of that send.
struct Endpoint {
  std::string name;  // pool key + logs
  bool tls = false;
  std::string host, port;
  std::optional<std::string> ca_file;  // custom CA bundle (PEM); otherwise system trust store
  std::chrono::milliseconds connect_timeout{2000};   // DNS + TCP connect + TLS handshake
  std::chrono::milliseconds request_timeout{10000};  // whole exchange after a connection is obtained: write + read reply
  std::size_t max_connections = 16;                  // concurrent exchanges per endpoint; excess requests queue
  std::size_t max_queued = 1024;                     // requests waiting for a slot; past it, refused at once
  std::chrono::milliseconds queue_timeout{2000};     // max wait for a connection slot (nothing sent)
  std::chrono::milliseconds idle_retire{2000};       // pooled idle connections older than this are closed, never reused
  std::size_t max_response_body = 1 << 20;
  std::uint64_t generation = 0;  // which settings these are: newer ones have higher numbers
};

using Header = HeaderField;  // the server's type too: lists move across unconverted

struct Request {
  std::string method;
  std::string target;
  std::vector<Header> headers;  // written in order; Host is added when absent
  std::string body;             // Content-Length is always computed from this
  // Only for a GET or HEAD the caller may have sent twice (an unprotected
  // read): if a kept-alive connection fails before any byte of a response
  // (the provider closed it just as it was written: the keep-alive race, not
  // a timeout), it is sent once more on a new connection, as RFC 9110
  // section 9.2.2 allows for idempotent requests. Never set for a protected
  // request.
  bool resend_if_stale = false;
  // Whose request this is (the gateway passes the tenant): an idle connection
  // is reused only by a request of the same partition, so a provider that
  // confused a connection's replies can at worst mix one tenant's own.
  // Empty is a partition too, for callers that carry no tenant's credential.
  std::string partition{};
};

struct Response {
  unsigned status = 0;
  std::vector<Header> headers;  // in order, names as the provider spelled them
  std::string body;             // de-chunked bytes, exactly
};

// Where the exchange stopped. Everything before write_failed_unsent means no
// request byte left this process; the last two mean at least one did.
enum class Failure {
  none,
  queue_timeout,        // no connection slot in time, the queue full, or the client shut down
  connect_failed,       // DNS, TCP connect, or the connect deadline
  tls_failed,           // handshake or certificate verification
  write_failed_unsent,  // the write failed with 0 bytes accepted, or the request was malformed
  failed_after_send,    // timeout, reset, EOF or a malformed reply after >= 1 byte was sent
  response_too_large,   // body over max_response_body or header over 64 KiB
};

struct Result {
  std::optional<Response> response;  // set iff failure == none
  Failure failure = Failure::none;
  bool request_bytes_sent = false;   // true once ANY byte of the request was accepted by the socket/TLS layer
  std::string detail;                // human text for logs
};

namespace detail {
class ClientState;
}

class Client {
 public:
  // `io` runs the pools' housekeeping, and the exchanges of send() without
  // an io_context of its own. Every io_context given to the client (`io` and
  // each send's `on`) must be run by exactly one thread: connections use no
  // strands (see upstream/asio_types.hpp).
  explicit Client(boost::asio::io_context& io);
  ~Client();  // shutdown(); in-flight exchanges still complete their callbacks
  Client(const Client&) = delete;
  Client& operator=(const Client&) = delete;

  // Thread-safe. done() runs on an io_context thread, exactly once, never
  // inside send(). A sent request is never resent by the client, except as
  // Request::resend_if_stale allows.
  void send(const Endpoint& endpoint, Request request, std::function<void(Result)> done);
  // The same, with the exchange on `on` (a connection opened on it, and
  // done() called there): the gateway passes the io_context of the thread
  // serving the request, so a forward stays on one thread.
  void send(boost::asio::io_context& on, const Endpoint& endpoint, Request request,
            std::function<void(Result)> done);

  // The same for a coroutine, awaited: the exchange runs on the io_context
  // the coroutine runs on (each of the gateway's I/O threads has its own),
  // or on `io` when its executor is no io_context's. When a kept-alive
  // connection is free it runs in the coroutine itself: no callback, no
  // hand-off through the queue. Otherwise it is send()'s.
  boost::asio::awaitable<Result> exchange(const Endpoint& endpoint, Request request);

  // Thread-safe. New pool-wide limits for the endpoint's pool (made now if
  // there is none yet), when `endpoint.generation` is newer than the pool's:
  // a lower max_connections lets the exchanges in flight finish and admits
  // new ones only under it; a higher one starts queued requests at once.
  // No connection, busy or idle, is closed by it.
  void update(const Endpoint& endpoint);

  // Stops accepting (later sends fail as queue_timeout, unsent), closes idle
  // connections and fails queued requests; in-flight exchanges finish or hit
  // their deadline.
  void shutdown();

 private:
  std::unique_ptr<detail::ClientState> state_;
};

std::string_view to_string(Failure);

}  // namespace gw::upstream
