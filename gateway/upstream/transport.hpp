// The byte stream under one upstream connection: plain TCP or TLS over TCP,
// behind one AsyncStream type so Beast's reader and writer are instantiated
// once. It counts what the layers accepted, because "was any request byte
// sent?" must be an observed fact:
//  - raw: bytes the TCP socket accepted (each write_some's bytes_transferred);
//  - app: plaintext bytes the TLS stream reported as written.
// Both are needed for TLS: Asio's SSL write reports 0 bytes when the flush to
// the socket fails, even if part of the encrypted record already left, so
// the raw count catches what the app count would miss. Any raw byte written
// after start_counting() can only belong to the request, because nothing
// else writes on the connection before the request has been written.
#pragma once

#include "upstream/asio_types.hpp"
#include "socket_read.hpp"

#include <boost/asio/associated_executor.hpp>
#include <boost/asio/async_result.hpp>
#include <boost/asio/bind_executor.hpp>
#include <boost/asio/ssl/stream.hpp>

#include <cstddef>
#include <optional>
#include <utility>

namespace gw::upstream::detail {

// Starts stream.async_write_some and adds its bytes_transferred to `counter`
// before the caller's handler sees it, on the handler's executor.
template <class Stream, class Buffers, class Token>
auto async_write_some_counted(Stream& stream, const Buffers& buffers, std::size_t& counter, Token&& token) {
  return net::async_initiate<Token, void(error_code, std::size_t)>(
      [&stream, &counter](auto handler, const Buffers& b) {
        auto executor = net::get_associated_executor(handler, stream.get_executor());
        stream.async_write_some(
            b, net::bind_executor(executor, [&counter, handler = std::move(handler)](
                                                error_code ec, std::size_t n) mutable {
              counter += n;
              std::move(handler)(ec, n);
            }));
      },
      token, buffers);
}

// A TCP socket that counts the bytes the kernel accepted from it.
class CountingSocket {
 public:
  using executor_type = IoExecutor;
  using lowest_layer_type = TcpSocket::lowest_layer_type;

  explicit CountingSocket(const IoExecutor& executor) : socket_(executor) {}

  executor_type get_executor() noexcept { return socket_.get_executor(); }
  lowest_layer_type& lowest_layer() { return socket_.lowest_layer(); }
  const lowest_layer_type& lowest_layer() const { return socket_.lowest_layer(); }
  TcpSocket& socket() { return socket_; }
  std::size_t written() const { return written_; }

  template <class Buffers, class Token>
  auto async_read_some(const Buffers& buffers, Token&& token) {
    if (std::exchange(wait_first_, false))
      return async_receive(socket_, buffers, ReadStart::wait, std::forward<Token>(token));
    return socket_.async_read_some(buffers, std::forward<Token>(token));
  }
  // The next read waits for the reactor's report before it tries the
  // socket (socket_read.hpp, ReadStart::wait, says when that is right).
  void wait_before_next_read() { wait_first_ = true; }
  template <class Buffers, class Token>
  auto async_write_some(const Buffers& buffers, Token&& token) {
    return async_write_some_counted(socket_, buffers, written_, std::forward<Token>(token));
  }

  // What the kernel takes right now, without waiting (counted too):
  // would_block when the send buffer is full.
  template <class Buffers>
  std::size_t write_now(const Buffers& buffers, error_code& ec) {
    if (!socket_.non_blocking()) socket_.non_blocking(true, ec);
    const std::size_t n = ec ? 0 : socket_.write_some(buffers, ec);
    written_ += n;
    return n;
  }

 private:
  TcpSocket socket_;
  std::size_t written_ = 0;
  bool wait_first_ = false;
};

class Transport {
 public:
  using executor_type = IoExecutor;

  // `tls` null means plain TCP; the context must outlive the transport.
  Transport(const IoExecutor& executor, net::ssl::context* tls) : raw_(executor) {
    if (tls) tls_.emplace(raw_, *tls);
  }
  Transport(const Transport&) = delete;
  Transport& operator=(const Transport&) = delete;

  executor_type get_executor() noexcept { return raw_.get_executor(); }
  TcpSocket& socket() { return raw_.socket(); }
  net::ssl::stream<CountingSocket&>* tls() { return tls_ ? &*tls_ : nullptr; }

  // Called right before the request is written: from here on, any byte
  // accepted by either layer is a request byte.
  void start_counting() {
    app_written_ = 0;
    raw_mark_ = raw_.written();
  }
  bool any_request_byte_sent() const { return app_written_ > 0 || raw_.written() > raw_mark_; }
  std::size_t raw_bytes_sent() const { return raw_.written() - raw_mark_; }

  // Plain TCP: counting_socket::write_now. Under TLS nothing is written
  // here (0 bytes, no error): the record layer writes asynchronously.
  template <class Buffers>
  std::size_t write_now(const Buffers& buffers, error_code& ec) {
    return tls_ ? 0 : raw_.write_now(buffers, ec);
  }

  // Plain TCP: the reply's first read waits for the reactor's report,
  // with no recv that finds nothing first. Only for a socket found empty
  // (Connection::peer_closed) with no turn of the event loop since, which
  // the caller vouches for (socket_read.hpp). Under TLS the record
  // layer reads as it needs.
  void wait_before_next_read() {
    if (!tls_) raw_.wait_before_next_read();
  }

  template <class Buffers, class Token>
  auto async_read_some(const Buffers& buffers, Token&& token) {
    return net::async_initiate<Token, void(error_code, std::size_t)>(
        [this](auto handler, const Buffers& b) {
          if (tls_)
            tls_->async_read_some(b, std::move(handler));
          else
            raw_.async_read_some(b, std::move(handler));
        },
        token, buffers);
  }

  template <class Buffers, class Token>
  auto async_write_some(const Buffers& buffers, Token&& token) {
    return net::async_initiate<Token, void(error_code, std::size_t)>(
        [this](auto handler, const Buffers& b) {
          if (tls_)
            async_write_some_counted(*tls_, b, app_written_, std::move(handler));
          else
            raw_.async_write_some(b, std::move(handler));  // counted by raw_
        },
        token, buffers);
  }

 private:
  CountingSocket raw_;
  std::optional<net::ssl::stream<CountingSocket&>> tls_;
  std::size_t app_written_ = 0;
  std::size_t raw_mark_ = 0;
};

}  // namespace gw::upstream::detail
