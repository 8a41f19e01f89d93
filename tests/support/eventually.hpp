// Waiting for another party without sleeping a guessed time: poll a
// condition until it holds or a generous deadline passes. The deadline only
// bounds a hang; it is never the thing a test asserts.
#pragma once

#include <chrono>
#include <thread>

namespace gw::test {

// True as soon as pred() is; false if it still is not after `limit`.
template <class Pred>
bool eventually(Pred pred, std::chrono::milliseconds limit = std::chrono::seconds(60)) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  for (;;) {
    if (pred()) return true;
    if (std::chrono::steady_clock::now() >= deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

}  // namespace gw::test
