// Threads for tests that cannot take the test binary down: an exception (a
// failed REQUIRE included) escaping a std::thread calls std::terminate. Here
// each worker's exception is caught, and rethrown on the test's own thread
// once all are joined.
#pragma once

#include <exception>
#include <functional>
#include <mutex>
#include <stop_token>
#include <thread>
#include <vector>

namespace gw::test {

class Workers {
 public:
  Workers() = default;
  // Asks every worker to stop and joins them; a test already failing (this
  // runs during unwinding) is not failed twice.
  ~Workers();
  Workers(const Workers&) = delete;
  Workers& operator=(const Workers&) = delete;

  // Starts fn on a new thread; fn should return once its stop_token asks it to.
  void spawn(std::function<void(std::stop_token)> fn);
  void spawn(std::function<void()> fn);

  // Asks every worker to stop (stop_token) without waiting.
  void request_stop();
  // Waits for every worker; then, if any threw, throws one
  // std::runtime_error naming each worker's exception.
  void join();

 private:
  std::mutex mutex_;
  std::vector<std::exception_ptr> errors_;
  std::vector<std::jthread> threads_;
};

// Runs fn(0) .. fn(n-1) on n threads at once and joins them (Workers::join).
void run_parallel(int n, const std::function<void(int)>& fn);

}  // namespace gw::test
