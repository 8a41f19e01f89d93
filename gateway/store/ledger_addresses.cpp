#include "store/ledger_addresses.hpp"

#include <functional>
#include <stdexcept>
#include <string_view>
#include <utility>

namespace gw {
namespace {

// Whether `key` is tenant, a space, task: compared in place, so that the
// request path's lookups build no string.
bool is_key_of(const std::string& key, const TaskScope& scope) {
  const std::string_view k(key);
  return k.size() == scope.tenant.size() + 1 + scope.task.size() && k.starts_with(scope.tenant) &&
         k[scope.tenant.size()] == ' ' && k.ends_with(scope.task);
}

}  // namespace

LedgerAddresses::LedgerAddresses(std::size_t slots) : slots_(slots) {
  if (slots == 0) throw std::invalid_argument("LedgerAddresses: no slots");
}

std::size_t LedgerAddresses::slot_of(const TaskScope& scope) const {
  const std::hash<std::string_view> hash;
  return (hash(scope.tenant) * 31 + hash(scope.task)) % slots_.size();
}

std::optional<std::string> LedgerAddresses::find(const TaskScope& scope) const {
  const auto n = slot_of(scope);
  std::lock_guard lock(stripes_[n % stripes_.size()]);
  const auto& slot = slots_[n];
  return is_key_of(slot.key, scope) ? slot.address : std::nullopt;
}

void LedgerAddresses::remember(const TaskScope& scope, std::optional<std::string> address) {
  const auto n = slot_of(scope);
  std::lock_guard lock(stripes_[n % stripes_.size()]);
  auto& slot = slots_[n];
  if (!is_key_of(slot.key, scope)) {
    slot.key.assign(scope.tenant);
    slot.key += ' ';
    slot.key += scope.task;
  }
  slot.address = std::move(address);
}

}  // namespace gw
