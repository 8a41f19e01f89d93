#include "store/ledger_addresses.hpp"

#include <functional>
#include <stdexcept>
#include <string_view>
#include <utility>

namespace gw {
namespace {

std::string key_of(const TaskScope& scope) {
  std::string key;
  key.reserve(scope.tenant.size() + 1 + scope.task.size());
  key += scope.tenant;
  key += ' ';
  key += scope.task;
  return key;
}

}  // namespace

LedgerAddresses::LedgerAddresses(std::size_t slots) : slots_(slots) {
  if (slots == 0) throw std::invalid_argument("LedgerAddresses: no slots");
}

std::size_t LedgerAddresses::slot_of(const std::string& key) const {
  return std::hash<std::string_view>{}(key) % slots_.size();
}

std::optional<std::string> LedgerAddresses::find(const TaskScope& scope) const {
  const auto key = key_of(scope);
  const auto n = slot_of(key);
  std::lock_guard lock(stripes_[n % stripes_.size()]);
  const auto& slot = slots_[n];
  return slot.key == key ? slot.address : std::nullopt;
}

void LedgerAddresses::remember(const TaskScope& scope, std::optional<std::string> address) {
  auto key = key_of(scope);
  const auto n = slot_of(key);
  std::lock_guard lock(stripes_[n % stripes_.size()]);
  auto& slot = slots_[n];
  slot.key = std::move(key);
  slot.address = std::move(address);
}

}  // namespace gw
