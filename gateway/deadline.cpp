#include "deadline.hpp"

#include <boost/asio/steady_timer.hpp>

namespace gw {

// Shared with the pending wait, which may complete after the owner is gone.
struct Deadline::State : std::enable_shared_from_this<State> {
  State(const boost::asio::any_io_executor& executor, std::function<void()> f)
      : timer(executor), expire(std::move(f)) {}

  void arm(clock::time_point at) {
    waiting = true;
    armed = at;
    timer.expires_at(at);  // a wait in progress completes as aborted
    timer.async_wait([self = shared_from_this()](const boost::system::error_code& ec) { self->woke(ec); });
  }

  void woke(const boost::system::error_code& ec) {
    // Aborted: re-armed (another wait is pending) or stopped.
    if (ec || stopped) return;
    waiting = false;
    if (due == clock::time_point::max()) return;
    if (clock::now() < due) return arm(due);  // moved on since the wait began
    due = clock::time_point::max();
    expired = true;
    expire();
  }

  boost::asio::steady_timer timer;
  std::function<void()> expire;
  clock::time_point due = clock::time_point::max();
  clock::time_point armed = clock::time_point::max();  // the pending wait's instant
  bool waiting = false;
  bool stopped = false;
  bool expired = false;
};

Deadline::Deadline(const boost::asio::any_io_executor& executor, std::function<void()> expire)
    : state_(std::make_shared<State>(executor, std::move(expire))) {}

Deadline::~Deadline() { stop(); }

void Deadline::expires_at(clock::time_point due) {
  auto& s = *state_;
  s.due = due;
  s.expired = false;
  if (!s.stopped && (!s.waiting || due < s.armed)) s.arm(due);
}

void Deadline::expires_never() {
  state_->due = clock::time_point::max();
  state_->expired = false;
}

bool Deadline::expired() const { return state_->expired; }

void Deadline::stop() {
  auto& s = *state_;
  if (s.stopped) return;
  s.stopped = true;
  s.expire = nullptr;
  s.timer.cancel();
}

}  // namespace gw
