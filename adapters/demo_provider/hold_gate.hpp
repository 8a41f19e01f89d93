// The business requests the `hold` fault parked, until a test releases them
// (POST /__test/release) or reset cancels them. Bookkeeping only: the server
// owns the timers a request waits on and hands in how to wake each.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>

namespace demo_provider {

enum class hold_end { released, cancelled };

class hold_gate {
 public:
  using waker = std::function<void(hold_end)>;

  // Parks one request; returns its ticket. `wake` is called exactly once,
  // unless the request leaves first.
  std::uint64_t park(waker wake);
  // The request ended without being woken (its connection or the server went
  // away); does nothing for a ticket already woken.
  void leave(std::uint64_t ticket);

  // Wakes the `count` longest-held requests (all when nullopt) to go on
  // executing; returns how many were woken.
  std::size_t release(std::optional<std::size_t> count = std::nullopt);
  // Wakes every held request to end without executing (reset).
  std::size_t cancel_all();

  std::size_t held() const { return parked_.size(); }

 private:
  std::size_t wake(std::optional<std::size_t> count, hold_end how);

  std::map<std::uint64_t, waker> parked_;  // ticket order is arrival order
  std::uint64_t next_ticket_ = 0;
};

}  // namespace demo_provider
