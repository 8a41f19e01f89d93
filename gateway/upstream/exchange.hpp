// One request/response exchange on an open connection: write the request,
// read one final response, and say whether the connection may be reused.
#pragma once

#include "upstream/asio_types.hpp"
#include "upstream/client.hpp"

#include <boost/asio/awaitable.hpp>

#include <memory>

namespace gw::upstream::detail {

class Connection;

// Whether a connection is new or kept alive from an exchange before; and
// for one kept alive, whether the exchange starts on the same turn of the
// event loop as the check that found it quiet (Connection::peer_closed), so
// that the reply's first read can wait for the reactor with no recv first
// (socket_read.hpp).
enum class ConnectionUse { fresh, reused, reused_just_checked };

struct Exchanged {
  Result result;
  // The connection the exchange ended on (the one it was given, or the new
  // one a resend opened), set only after a complete response with keep-alive
  // semantics on both sides and nothing unread behind it.
  std::shared_ptr<Connection> reusable;
};

// An exchange that ran out of memory midway: whether a byte of the request
// had left is not known, so it counts as sent (a protected request is held).
Exchanged out_of_memory();

// Runs under endpoint.request_timeout (write + read), on the connection's
// io_context: awaited by a coroutine running there. `request` must have
// passed request_problem(); `endpoint` must outlive the exchange. On any
// failure the connection is closed; a request that reached the socket is
// never written a second time, except once on a new connection as
// Request::resend_if_stale allows when `use` says the connection had served
// an exchange before. Never throws but for memory.
net::awaitable<Exchanged> exchange(std::shared_ptr<Connection> conn, Request request, const Endpoint& endpoint,
                                   ConnectionUse use);

}  // namespace gw::upstream::detail
