// gw::Deadline (gateway/deadline.hpp) on a real io_context: a deadline moved
// later is not enforced early, one moved sooner is, and nothing fires after
// expires_never, stop or destruction. Times are checked only as "not before
// the deadline" (a rule), never as "within so long" (a speed).
#include "deadline.hpp"

#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <doctest/doctest.h>

#include <chrono>
#include <memory>
#include <optional>
#include <thread>

using namespace std::chrono_literals;
namespace asio = boost::asio;
using clock_type = gw::Deadline::clock;

namespace {

// Runs `io` until `until` returns true (checked on a 5 ms poll), at most `limit`.
template <class Until>
void run_until(asio::io_context& io, Until until, std::chrono::milliseconds limit = 5000ms) {
  const auto give_up = clock_type::now() + limit;
  while (!until() && clock_type::now() < give_up) {
    if (io.stopped()) io.restart();  // out of work once a deadline has fired
    io.run_for(5ms);
  }
}

}  // namespace

TEST_CASE("deadline: expires at its instant, and says so") {
  asio::io_context io;
  std::optional<clock_type::time_point> fired;
  gw::Deadline d(io.get_executor(), [&] { fired = clock_type::now(); });
  const auto due = clock_type::now() + 30ms;
  d.expires_at(due);
  CHECK_FALSE(d.expired());
  run_until(io, [&] { return fired.has_value(); });
  REQUIRE(fired);
  CHECK(*fired >= due);
  CHECK(d.expired());
}

TEST_CASE("deadline: moved later while the timer waits, it is enforced at the later instant only") {
  asio::io_context io;
  int fired = 0;
  std::optional<clock_type::time_point> at;
  gw::Deadline d(io.get_executor(), [&] {
    ++fired;
    at = clock_type::now();
  });
  d.expires_after(20ms);
  const auto later = clock_type::now() + 120ms;
  d.expires_at(later);  // stored; the timer still wakes at 20 ms and waits again
  run_until(io, [&] { return fired > 0; });
  REQUIRE(fired == 1);
  CHECK(*at >= later);
}

TEST_CASE("deadline: moved sooner, the timer is re-armed for the sooner instant") {
  asio::io_context io;
  std::optional<clock_type::time_point> at;
  gw::Deadline d(io.get_executor(), [&] { at = clock_type::now(); });
  d.expires_after(60s);
  const auto sooner = clock_type::now() + 20ms;
  d.expires_at(sooner);
  run_until(io, [&] { return at.has_value(); });
  REQUIRE(at);  // not 60 s from now
  CHECK(*at >= sooner);
}

TEST_CASE("deadline: expires_never, stop and destruction each mean no call") {
  asio::io_context io;
  int fired = 0;
  SUBCASE("expires_never") {
    gw::Deadline d(io.get_executor(), [&] { ++fired; });
    d.expires_after(10ms);
    d.expires_never();
    io.run_for(100ms);
    CHECK_FALSE(d.expired());
  }
  SUBCASE("stop") {
    gw::Deadline d(io.get_executor(), [&] { ++fired; });
    d.expires_after(10ms);
    d.stop();
    d.expires_after(10ms);  // ignored once stopped
    io.run_for(100ms);
  }
  SUBCASE("destroyed with its wait pending") {
    auto d = std::make_unique<gw::Deadline>(io.get_executor(), [&] { ++fired; });
    d->expires_after(10ms);
    d.reset();
    io.run_for(100ms);
  }
  SUBCASE("destroyed after its timer fired, before the wake-up ran") {
    auto d = std::make_unique<gw::Deadline>(io.get_executor(), [&] { ++fired; });
    d->expires_after(1ms);
    std::this_thread::sleep_for(20ms);  // a busy thread: the timer is due before anything runs
    asio::post(io, [&] { d.reset(); });
    io.run_for(100ms);
  }
  CHECK(fired == 0);
}

TEST_CASE("deadline: set again after it expired, it expires again") {
  asio::io_context io;
  int fired = 0;
  gw::Deadline d(io.get_executor(), [&] { ++fired; });
  d.expires_after(5ms);
  run_until(io, [&] { return fired == 1; });
  d.expires_after(5ms);
  CHECK_FALSE(d.expired());
  run_until(io, [&] { return fired == 2; });
  CHECK(fired == 2);
  CHECK(d.expired());
}
