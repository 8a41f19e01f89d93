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
using IoExecutor = net::io_context::executor_type;
using TcpSocket = net::basic_stream_socket<net::ip::tcp, IoExecutor>;
using Resolver = net::ip::basic_resolver<net::ip::tcp, IoExecutor>;
using Timer = net::basic_waitable_timer<std::chrono::steady_clock,
                                             net::wait_traits<std::chrono::steady_clock>, IoExecutor>;

}  // namespace gw::upstream::detail
