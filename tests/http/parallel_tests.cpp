// support/parallel.hpp itself: a worker's exception reaches the test's own
// thread after every worker finished, instead of std::terminate.
#include "support/parallel.hpp"

#include <doctest/doctest.h>

#include <atomic>
#include <stdexcept>

using namespace gw::test;

TEST_CASE("parallel: a throwing worker fails the joining thread, after the others finished") {
  std::atomic<int> finished{0};
  auto run = [&] {
    run_parallel(4, [&](int i) {
      if (i == 2) throw std::runtime_error("worker two failed");
      ++finished;
    });
  };
  CHECK_THROWS_WITH_AS(run(), doctest::Contains("1 worker thread(s) threw: [worker two failed]"), std::runtime_error);
  CHECK(finished == 3);
}

TEST_CASE("parallel: workers stop when asked, and a clean run does not throw") {
  std::atomic<int> started{0};
  Workers workers;
  for (int i = 0; i < 3; ++i)
    workers.spawn([&](std::stop_token stop) {
      ++started;
      while (!stop.stop_requested()) std::this_thread::yield();
    });
  workers.request_stop();
  CHECK_NOTHROW(workers.join());
  CHECK(started == 3);
}
