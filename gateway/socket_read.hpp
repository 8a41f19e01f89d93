// TCP reads that spare the recv which finds nothing.
//
// Asio's reactor tries every read at once (a "speculative" recv) before it
// waits, and stops trying only after a read that found the end of the
// stream. So a keep-alive connection pays one recv that gets EAGAIN each
// time it waits: the agent's connection after every reply, the provider's
// right after every request. On this host a system call is most of what a
// request costs (docs/performance.md, "The static upstream apart").
//
// gw::async_receive reads as socket.async_read_some does, and is told how
// to start (ReadStart):
//  - if_reported: as Asio, try at once unless the socket was found drained
//    and the reactor has not reported it since. "Drained" is known only on
//    a socket with drain news (report_drain: Linux's TCP_INQ), from each
//    read's count of what is left: nothing, and no end of stream (which
//    counts as one byte). Every later arrival, end of stream included, is
//    an edge the reactor reports (epoll, edge-triggered), so the next read
//    waits for it without a recv, as nginx's does after a short read.
//    A reset is the one thing the count does not show; see try_first.
//  - wait: do not try before the reactor reports the socket. Right only
//    when the caller knows the socket held nothing a moment ago and no
//    report has been taken since: the upstream client, for the reply to a
//    request written on the spot to a connection it has just found quiet
//    (upstream/exchange.cpp). Otherwise a read would wait for a report that
//    already went by.
//  - try_first: try at once whatever the reactor says, then wait. For a read
//    that continues a message (the rest of a head or body): a reset that
//    came with its first bytes is then an error at once, not a wait for the
//    deadline.
//
// Built on the reactor's own operation interface (boost::asio::detail), as
// the reactive socket service does, for the epoll reactor of Boost 1.81
// (Debian 12's libboost1.81-dev, the project's pinned stack). Any other
// build, and a read whose caller connected a per-operation cancellation
// slot (the gateway cancels by closing or cancelling the socket, which
// reaches these reads like any other), takes Asio's own async_read_some.
#pragma once

#include <boost/asio/ip/tcp.hpp>
#include <boost/version.hpp>

#if BOOST_VERSION == 108100 && defined(BOOST_ASIO_HAS_EPOLL) && !defined(BOOST_ASIO_HAS_IO_URING_AS_DEFAULT) && \
    defined(__linux__)
#define GW_SOCKET_READ 1
#include <boost/asio/associated_cancellation_slot.hpp>
#include <boost/asio/async_result.hpp>
#include <boost/asio/detail/buffer_sequence_adapter.hpp>
#include <boost/asio/detail/handler_alloc_helpers.hpp>
#include <boost/asio/detail/handler_work.hpp>
#include <boost/asio/detail/reactor.hpp>
#include <boost/asio/detail/reactor_op.hpp>
#include <boost/asio/detail/socket_ops.hpp>

#include <cerrno>
#include <cstring>

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#endif

#include <cstddef>
#include <type_traits>
#include <utility>

namespace gw {

enum class ReadStart { if_reported, wait, try_first };

// Gives a TCP socket (or a listener, whose accepted sockets inherit it) the
// drain news if_reported reads use. False where the kernel has none: reads
// then try as Asio's do.
inline bool report_drain(int fd) {
#ifdef GW_SOCKET_READ
  const int on = 1;
  return ::setsockopt(fd, IPPROTO_TCP, TCP_INQ, &on, sizeof on) == 0;
#else
  (void)fd;
  return false;
#endif
}

#ifdef GW_SOCKET_READ
namespace socket_read_detail {

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

// True on a thread while it hands a wait or try_first read to the reactor:
// the reactor's own try happens inside start_op, and only that one is
// skipped. A perform after a report (later, maybe on another thread) reads.
inline thread_local bool starting = false;

template <class Buffers, class Handler, class IoExecutor>
class RecvOp : public ad::reactor_op {
 public:
  BOOST_ASIO_DEFINE_HANDLER_PTR(RecvOp);

  RecvOp(ad::socket_type socket, bool skip_reactor_try, const Buffers& buffers, Handler& handler,
         const IoExecutor& io_ex)
      : ad::reactor_op(boost::system::error_code(), &RecvOp::do_perform, &RecvOp::do_complete),
        socket_(socket),
        skip_reactor_try_(skip_reactor_try),
        buffers_(buffers),
        handler_(std::move(handler)),
        work_(handler_, io_ex) {}

  // One recvmsg, as Asio's stream read (EINTR again, EAGAIN not done, 0
  // bytes the end of the stream), plus the count of what is left, when the
  // socket gives it: nothing left is "exhausted", which makes the reactor
  // wait for its next report before it tries the socket again.
  static status do_perform(ad::reactor_op* base) {
    auto* o = static_cast<RecvOp*>(base);
    if (starting && o->skip_reactor_try_) return not_done;
    ad::buffer_sequence_adapter<asio::mutable_buffer, Buffers> bufs(o->buffers_);
    alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))];
    for (;;) {
      msghdr msg{};
      msg.msg_iov = bufs.buffers();
      msg.msg_iovlen = bufs.count();
      msg.msg_control = control;
      msg.msg_controllen = sizeof control;
      const ssize_t n = ::recvmsg(o->socket_, &msg, 0);
      if (n < 0) {
        if (errno == EINTR) continue;
        if (errno == EAGAIN || errno == EWOULDBLOCK) return not_done;
        o->ec_ = boost::system::error_code(errno, asio::error::get_system_category());
        o->bytes_transferred_ = 0;
        return done;
      }
      o->ec_ = {};
      o->bytes_transferred_ = static_cast<std::size_t>(n);
      if (n == 0) {
        o->ec_ = asio::error::eof;
        return done_and_exhausted;  // Asio's own rule
      }
      for (cmsghdr* c = CMSG_FIRSTHDR(&msg); c; c = CMSG_NXTHDR(&msg, c)) {
        if (c->cmsg_level != IPPROTO_TCP || c->cmsg_type != TCP_CM_INQ) continue;
        int left = 0;
        std::memcpy(&left, CMSG_DATA(c), sizeof left);
        if (left == 0) return done_and_exhausted;
      }
      return done;
    }
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
  bool skip_reactor_try_;
  Buffers buffers_;
  Handler handler_;
  ad::handler_work<Handler, IoExecutor> work_;
};

struct Initiate {
  template <class Handler, class Executor, class Buffers>
  void operator()(Handler&& handler, Socket<Executor>* socket, const Buffers& buffers, ReadStart start) const {
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
    p.p = new (p.v) Op(impl.socket_, start != ReadStart::if_reported, buffers, h, io_ex);
    if (!(impl.state_ & ad::socket_ops::non_blocking) &&
        !ad::socket_ops::set_internal_non_blocking(impl.socket_, impl.state_, true, p.p->ec_)) {
      reactor.post_immediate_completion(p.p, is_continuation);
    } else if (start == ReadStart::try_first && p.p->perform()) {
      reactor.post_immediate_completion(p.p, is_continuation);
    } else {
      starting = true;
      reactor.start_op(ad::reactor::read_op, impl.socket_, impl.reactor_data_, p.p, is_continuation, true);
      starting = false;
    }
    p.v = p.p = 0;
  }
};

}  // namespace socket_read_detail
#endif

// socket.async_read_some(buffers, token), started as `start` says (above).
// Same completion, errors and cancellation by close() or cancel().
template <class Executor, class Buffers, class Token>
auto async_receive(boost::asio::basic_stream_socket<boost::asio::ip::tcp, Executor>& socket, const Buffers& buffers,
                   ReadStart start, Token&& token) {
#ifdef GW_SOCKET_READ
  return boost::asio::async_initiate<Token, void(boost::system::error_code, std::size_t)>(
      socket_read_detail::Initiate{}, token, &socket, buffers, start);
#else
  (void)start;
  return socket.async_read_some(buffers, std::forward<Token>(token));
#endif
}

}  // namespace gw
