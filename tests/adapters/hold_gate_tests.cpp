// The hold gate: parked requests are woken once, in arrival order, released
// or cancelled; a request that leaves is never woken.
#include "hold_gate.hpp"

#include <doctest/doctest.h>

#include <vector>

using namespace demo_provider;

namespace {

struct woken_log {
  std::vector<std::pair<int, hold_end>> calls;
  hold_gate::waker waker(int id) {
    return [this, id](hold_end how) { calls.emplace_back(id, how); };
  }
};

}  // namespace

TEST_CASE("hold gate: release wakes the longest held first, each exactly once") {
  hold_gate gate;
  woken_log log;
  gate.park(log.waker(1));
  gate.park(log.waker(2));
  gate.park(log.waker(3));
  CHECK(gate.held() == 3);
  CHECK(log.calls.empty());  // parking wakes nobody

  CHECK(gate.release(1) == 1);
  CHECK(log.calls == std::vector<std::pair<int, hold_end>>{{1, hold_end::released}});
  CHECK(gate.held() == 2);

  CHECK(gate.release() == 2);
  CHECK(log.calls == std::vector<std::pair<int, hold_end>>{
                         {1, hold_end::released}, {2, hold_end::released}, {3, hold_end::released}});
  CHECK(gate.held() == 0);
  CHECK(gate.release() == 0);
  CHECK(log.calls.size() == 3);
}

TEST_CASE("hold gate: a count above what is held releases what there is") {
  hold_gate gate;
  woken_log log;
  gate.park(log.waker(1));
  CHECK(gate.release(5) == 1);
  CHECK(gate.held() == 0);
}

TEST_CASE("hold gate: cancel_all wakes every held request as cancelled") {
  hold_gate gate;
  woken_log log;
  gate.park(log.waker(1));
  gate.park(log.waker(2));
  CHECK(gate.cancel_all() == 2);
  CHECK(log.calls == std::vector<std::pair<int, hold_end>>{{1, hold_end::cancelled}, {2, hold_end::cancelled}});
  CHECK(gate.held() == 0);
}

TEST_CASE("hold gate: a request that left is not woken, and leaving twice is harmless") {
  hold_gate gate;
  woken_log log;
  const auto first = gate.park(log.waker(1));
  gate.park(log.waker(2));
  gate.leave(first);
  CHECK(gate.held() == 1);
  CHECK(gate.release() == 1);
  CHECK(log.calls == std::vector<std::pair<int, hold_end>>{{2, hold_end::released}});
  gate.leave(first);  // e.g. the woken request's frame ending later
  CHECK(gate.held() == 0);
}

TEST_CASE("hold gate: a waker may park again while the gate is waking others") {
  hold_gate gate;
  int parked_again = 0;
  gate.park([&](hold_end) { gate.park([&](hold_end) { ++parked_again; }); });
  CHECK(gate.release() == 1);
  CHECK(gate.held() == 1);  // the new one waits for the next release
  CHECK(gate.release() == 1);
  CHECK(parked_again == 1);
}
