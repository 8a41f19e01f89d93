// resume_on: where and when an awaiting coroutine resumes with a callback's
// value. One io_context run by this thread; another thread where asked.
#include "service/db/resume.hpp"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>

#include <doctest/doctest.h>

#include <functional>
#include <thread>

namespace gw {

TEST_CASE("resume_on: a callback made inside start() resumes the coroutine only after start() returned") {
  asio::io_context io;
  int value = 0;
  bool resumed_inside_start = true;
  asio::co_spawn(
      io,
      [&]() -> asio::awaitable<void> {
        value = co_await resume_on<int>([&](const asio::any_io_executor&, std::function<void(int)> done) {
          done(7);  // a refusal on the spot
          resumed_inside_start = value != 0;
        });
      },
      asio::detached);
  io.run();
  CHECK_FALSE(resumed_inside_start);
  CHECK(value == 7);
}

TEST_CASE("resume_on: a later callback on the coroutine's own thread resumes it at once, not queued") {
  asio::io_context io;
  std::function<void(int)> complete;
  int value = 0;
  bool resumed_within_call = false;
  asio::co_spawn(
      io,
      [&]() -> asio::awaitable<void> {
        value = co_await resume_on<int>(
            [&](const asio::any_io_executor&, std::function<void(int)> done) { complete = std::move(done); });
      },
      asio::detached);
  io.poll();  // the coroutine is now waiting
  REQUIRE(complete);
  asio::post(io, [&] {
    complete(5);
    resumed_within_call = value == 5;  // queued, it would not have run yet
  });
  io.run();
  CHECK(resumed_within_call);
  CHECK(value == 5);
}

TEST_CASE("resume_on: a callback from another thread resumes the coroutine on its own thread") {
  asio::io_context io;
  auto work = asio::make_work_guard(io);
  std::thread other;
  std::thread::id resumed_on;
  asio::co_spawn(
      io,
      [&]() -> asio::awaitable<void> {
        const int v = co_await resume_on<int>([&](const asio::any_io_executor&, std::function<void(int)> done) {
          other = std::thread([done = std::move(done)] { done(3); });
        });
        CHECK(v == 3);
        resumed_on = std::this_thread::get_id();
        work.reset();
      },
      asio::detached);
  io.run();
  other.join();
  CHECK(resumed_on == std::this_thread::get_id());
}

}  // namespace gw
