#include "support/parallel.hpp"

#include <stdexcept>
#include <string>

namespace gw::test {

namespace {

std::string describe(const std::exception_ptr& e) {
  try {
    std::rethrow_exception(e);
  } catch (const std::exception& x) {
    return x.what();
  } catch (...) {
    // doctest's REQUIRE failure is no std::exception; doctest has already
    // reported the failed assertion itself.
    return "a non-std exception, e.g. a failed REQUIRE";
  }
}

}  // namespace

Workers::~Workers() {
  request_stop();
  threads_.clear();  // jthread joins
}

void Workers::spawn(std::function<void(std::stop_token)> fn) {
  threads_.emplace_back([this, fn = std::move(fn)](std::stop_token stop) {
    try {
      fn(stop);
    } catch (...) {
      std::lock_guard lock(mutex_);
      errors_.push_back(std::current_exception());
    }
  });
}

void Workers::spawn(std::function<void()> fn) {
  spawn([fn = std::move(fn)](std::stop_token) { fn(); });
}

void Workers::request_stop() {
  for (auto& t : threads_) t.request_stop();
}

void Workers::join() {
  for (auto& t : threads_)
    if (t.joinable()) t.join();
  threads_.clear();
  std::vector<std::exception_ptr> errors;
  {
    std::lock_guard lock(mutex_);
    errors.swap(errors_);
  }
  if (errors.empty()) return;
  std::string what = std::to_string(errors.size()) + " worker thread(s) threw:";
  for (const auto& e : errors) what += " [" + describe(e) + "]";
  throw std::runtime_error(what);
}

void run_parallel(int n, const std::function<void(int)>& fn) {
  Workers workers;
  for (int i = 0; i < n; ++i) workers.spawn([&fn, i] { fn(i); });
  workers.join();
}

}  // namespace gw::test
