// Asio types shared by the pool and its connections. Every I/O object is
// bound to a plain io_context executor, not a strand: each io_context the
// client is given is run by one thread (client.hpp), as the gateway runs one
// per I/O thread, so a connection's completions never run concurrently and a
// strand would only add a queue and a lock to every completion.
#pragma once

#include <boost/asio/basic_waitable_timer.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>

#include <chrono>

namespace gw::upstream::detail {

namespace net = boost::asio;
using error_code = boost::system::error_code;
using io_executor = net::io_context::executor_type;
using socket_type = net::basic_stream_socket<net::ip::tcp, io_executor>;
using resolver_type = net::ip::basic_resolver<net::ip::tcp, io_executor>;
using timer_type = net::basic_waitable_timer<std::chrono::steady_clock,
                                             net::wait_traits<std::chrono::steady_clock>, io_executor>;

}  // namespace gw::upstream::detail
