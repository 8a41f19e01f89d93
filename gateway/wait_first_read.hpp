// A TCP read that waits for the reactor's report before it tries the socket.
//
// Asio's reactor tries every read at once (a "speculative" recv) before it
// waits, and stops trying only after a read that found the end of the
// stream. A reply's first read, started right after its request was
// written, nearly always finds nothing: one recv that gets EAGAIN per
// forwarded request. On this host a system call is most of what a request
// costs (docs/performance.md, "The static upstream apart").
//
// The read here is queued behind the reactor without that try. It is only
// right when the caller knows the socket held nothing a moment ago and no
// report of the reactor has been taken since: then every byte, end of
// stream or reset that comes later is reported (epoll, edge-triggered:
// each arrival wakes the descriptor), and the read is performed then. The
// upstream client has that knowledge for a reused connection it has just
// found quiet (Connection::peer_closed) and written its request to on the
// spot, with no turn of the event loop in between (upstream/exchange.cpp).
// Without it a read would wait for a report that already went by.
//
// Built on the reactor's own operation interface (boost::asio::detail), as
// the reactive socket service does, for the epoll reactor of Boost 1.81
// (Debian 12's libboost1.81-dev, the project's pinned stack). Anything
// else, and a read whose caller connected a per-operation cancellation slot
// (the gateway cancels by closing or cancelling the socket, which reaches
// this operation like any other), takes Asio's own async_read_some.
#pragma once

#include <boost/asio/ip/tcp.hpp>
#include <boost/version.hpp>

#if BOOST_VERSION == 108100 && defined(BOOST_ASIO_HAS_EPOLL) && !defined(BOOST_ASIO_HAS_IO_URING_AS_DEFAULT)
#define GW_WAIT_FIRST_READ 1
#include <boost/asio/associated_cancellation_slot.hpp>
#include <boost/asio/async_result.hpp>
#include <boost/asio/detail/buffer_sequence_adapter.hpp>
#include <boost/asio/detail/handler_alloc_helpers.hpp>
#include <boost/asio/detail/handler_work.hpp>
#include <boost/asio/detail/reactor.hpp>
#include <boost/asio/detail/reactor_op.hpp>
#include <boost/asio/detail/socket_ops.hpp>
#endif

#include <cstddef>
#include <type_traits>
#include <utility>

namespace gw {

#ifdef GW_WAIT_FIRST_READ
namespace wait_first_detail {

namespace asio = boost::asio;
namespace ad = boost::asio::detail;

template <class Executor>
using Socket = asio::basic_stream_socket<asio::ip::tcp, Executor>;

// The socket's implementation (descriptor, state, reactor registration):
// a protected member of basic_socket, reached through a pointer to member
// formed in a derived class, which the language allows.
template <class Executor>
struct Access : Socket<Executor> {
  static constexpr auto impl = &Access::impl_;
};

// True on a thread while it starts such a read: the reactor's speculative
// try happens inside start_op, and only that try is skipped. A perform from
// a report (later, maybe on another thread) reads.
inline thread_local bool starting = false;

template <class Buffers, class Handler, class IoExecutor>
class RecvOp : public ad::reactor_op {
 public:
  BOOST_ASIO_DEFINE_HANDLER_PTR(RecvOp);

  RecvOp(ad::socket_type socket, ad::socket_ops::state_type state, const Buffers& buffers, Handler& handler,
         const IoExecutor& io_ex)
      : ad::reactor_op(boost::system::error_code(), &RecvOp::do_perform, &RecvOp::do_complete),
        socket_(socket),
        state_(state),
        buffers_(buffers),
        handler_(std::move(handler)),
        work_(handler_, io_ex) {}

  // As Asio's reactive_socket_recv_op, but for the try at the start.
  static status do_perform(ad::reactor_op* base) {
    if (starting) return not_done;
    auto* o = static_cast<RecvOp*>(base);
    using Adapter = ad::buffer_sequence_adapter<asio::mutable_buffer, Buffers>;
    const bool stream = (o->state_ & ad::socket_ops::stream_oriented) != 0;
    bool finished = false;
    if constexpr (Adapter::is_single_buffer) {
      const asio::mutable_buffer b = Adapter::first(o->buffers_);
      finished = ad::socket_ops::non_blocking_recv1(o->socket_, b.data(), b.size(), 0, stream, o->ec_,
                                                    o->bytes_transferred_);
    } else {
      Adapter bufs(o->buffers_);
      finished = ad::socket_ops::non_blocking_recv(o->socket_, bufs.buffers(), bufs.count(), 0, stream, o->ec_,
                                                   o->bytes_transferred_);
    }
    if (!finished) return not_done;
    return stream && o->bytes_transferred_ == 0 ? done_and_exhausted : done;  // Asio's rule: the stream ended
  }

  // As Asio's reactive_socket_recv_op: the operation's memory is freed
  // before the handler runs, and a null owner (shutdown) only destroys.
  static void do_complete(void* owner, ad::operation* base, const boost::system::error_code&, std::size_t) {
    auto* o = static_cast<RecvOp*>(base);
    ptr p = {ad::addressof(o->handler_), o, o};
    ad::handler_work<Handler, IoExecutor> w(std::move(o->work_));
    ad::binder2<Handler, boost::system::error_code, std::size_t> handler(o->handler_, o->ec_,
                                                                          o->bytes_transferred_);
    p.h = ad::addressof(handler.handler_);
    p.reset();
    if (owner) {
      ad::fenced_block b(ad::fenced_block::half);
      w.complete(handler, handler.handler_);
    }
  }

 private:
  ad::socket_type socket_;
  ad::socket_ops::state_type state_;
  Buffers buffers_;
  Handler handler_;
  ad::handler_work<Handler, IoExecutor> work_;
};

struct Initiate {
  template <class Handler, class Executor, class Buffers>
  void operator()(Handler&& handler, Socket<Executor>* socket, const Buffers& buffers) const {
    using H = std::decay_t<Handler>;
    H h(std::forward<Handler>(handler));
    auto& object = socket->*Access<Executor>::impl;
    auto& impl = object.get_implementation();
    const auto& io_ex = object.get_executor();
    using Adapter = ad::buffer_sequence_adapter<asio::mutable_buffer, Buffers>;
    if (asio::get_associated_cancellation_slot(h).is_connected() || Adapter::all_empty(buffers) ||
        impl.socket_ == ad::invalid_socket) {
      socket->async_read_some(buffers, std::move(h));
      return;
    }
    auto& reactor = asio::use_service<ad::reactor>(object.get_service().context());
    const bool is_continuation = boost_asio_handler_cont_helpers::is_continuation(h);
    using Op = RecvOp<Buffers, H, std::decay_t<decltype(io_ex)>>;
    typename Op::ptr p = {ad::addressof(h), Op::ptr::allocate(h), 0};
    p.p = new (p.v) Op(impl.socket_, impl.state_, buffers, h, io_ex);
    if ((impl.state_ & ad::socket_ops::non_blocking) ||
        ad::socket_ops::set_internal_non_blocking(impl.socket_, impl.state_, true, p.p->ec_)) {
      starting = true;
      reactor.start_op(ad::reactor::read_op, impl.socket_, impl.reactor_data_, p.p, is_continuation, true);
      starting = false;
    } else {
      reactor.post_immediate_completion(p.p, is_continuation);
    }
    p.v = p.p = 0;
  }
};

}  // namespace wait_first_detail
#endif

// socket.async_read_some(buffers, token), except that the socket is not
// tried before the reactor reports it readable (see above for when that is
// right). Same completion, errors and cancellation by close() or cancel().
template <class Executor, class Buffers, class Token>
auto async_read_some_wait_first(boost::asio::basic_stream_socket<boost::asio::ip::tcp, Executor>& socket,
                                const Buffers& buffers, Token&& token) {
#ifdef GW_WAIT_FIRST_READ
  return boost::asio::async_initiate<Token, void(boost::system::error_code, std::size_t)>(
      wait_first_detail::Initiate{}, token, &socket, buffers);
#else
  return socket.async_read_some(buffers, std::forward<Token>(token));
#endif
}

}  // namespace gw
