// One request/response exchange on an open connection: write the request,
// read one final response, and say whether the connection may be reused.
#pragma once

#include "upstream/client.hpp"

#include <functional>
#include <memory>

namespace gw::upstream::detail {

class Connection;

// `reusable` is the connection the exchange ended on (the one it was given,
// or the new one a resend opened), set only after a complete response with
// keep-alive semantics on both sides and nothing unread behind it.
// Whether a connection is new or kept alive from an exchange before.
enum class ConnectionUse { fresh, reused };

using ExchangeHandler = std::function<void(Result result, std::shared_ptr<Connection> reusable)>;

// Runs under endpoint.request_timeout (write + read) and completes on the
// connection's io_context, never inline. `request` must have passed
// request_problem(); `endpoint` must outlive the exchange. On any failure the
// connection is closed; a request that reached the socket is never written a
// second time, except once on a new connection as Request::resend_if_stale
// allows when `use` says the connection had served an exchange before.
void run_exchange(std::shared_ptr<Connection> conn, Request request, const Endpoint& endpoint, ConnectionUse use,
                  ExchangeHandler done);

}  // namespace gw::upstream::detail
