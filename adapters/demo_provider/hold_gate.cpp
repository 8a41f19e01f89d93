// Parking, releasing and cancelling held business requests.
#include "hold_gate.hpp"

#include <utility>
#include <vector>

namespace demo_provider {

std::uint64_t hold_gate::park(waker wake) {
  const std::uint64_t ticket = next_ticket_++;
  parked_.emplace(ticket, std::move(wake));
  return ticket;
}

void hold_gate::leave(std::uint64_t ticket) { parked_.erase(ticket); }

std::size_t hold_gate::release(std::optional<std::size_t> count) { return wake(count, hold_end::released); }

std::size_t hold_gate::cancel_all() { return wake(std::nullopt, hold_end::cancelled); }

std::size_t hold_gate::wake(std::optional<std::size_t> count, hold_end how) {
  // Taken out before any waker runs, so a waker may park or leave again.
  std::vector<waker> woken;
  while (!parked_.empty() && (!count || woken.size() < *count)) {
    woken.push_back(std::move(parked_.begin()->second));
    parked_.erase(parked_.begin());
  }
  for (waker& w : woken) w(how);
  return woken.size();
}

}  // namespace demo_provider
