// Asio types shared by the pool and its connections. Every I/O object of one
// endpoint's pool is bound to the pool's strand, so completions of the pool,
// its timers and its sockets never run concurrently even when the
// io_context runs on several threads.
#pragma once

#include <boost/asio/basic_waitable_timer.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/strand.hpp>

#include <chrono>

namespace gw::upstream::detail {

namespace net = boost::asio;
using error_code = boost::system::error_code;
using strand_type = net::strand<net::io_context::executor_type>;
using socket_type = net::basic_stream_socket<net::ip::tcp, strand_type>;
using resolver_type = net::ip::basic_resolver<net::ip::tcp, strand_type>;
using timer_type = net::basic_waitable_timer<std::chrono::steady_clock,
                                             net::wait_traits<std::chrono::steady_clock>, strand_type>;

}  // namespace gw::upstream::detail
