// One connection's deadline on one timer that is rarely touched.
//
// A keep-alive connection moves its deadline at every read and write. A
// fresh timer wait per operation (Beast's tcp_stream arms and cancels one
// around each) costs a timerfd_settime whenever that wait is the earliest,
// and a queued cancellation every time. Here a later deadline is only
// stored: the timer, waiting for the earlier instant, wakes then, finds the
// deadline moved and waits again. Only a sooner deadline re-arms it. The
// deadline is still enforced to the instant; only the wake-ups are lazy.
//
// The timer runs on the owner's executor, and every member is called from
// that executor's one thread (each I/O thread has its own io_context).
#pragma once

#include <boost/asio/any_io_executor.hpp>

#include <chrono>
#include <functional>
#include <memory>

namespace gw {

class Deadline {
 public:
  using clock = std::chrono::steady_clock;

  // `expire` runs on the executor when a deadline passes; typically it
  // closes the socket, so the pending operation completes with an error.
  // It never runs after stop() or the destructor.
  Deadline(const boost::asio::any_io_executor& executor, std::function<void()> expire);
  ~Deadline();
  Deadline(const Deadline&) = delete;
  Deadline& operator=(const Deadline&) = delete;

  void expires_after(clock::duration timeout) { expires_at(clock::now() + timeout); }
  void expires_at(clock::time_point due);
  void expires_never();
  // Whether `expire` ran for the deadline set last.
  bool expired() const;
  void stop();

 private:
  struct State;
  std::shared_ptr<State> state_;
};

}  // namespace gw
