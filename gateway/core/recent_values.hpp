// What secret-bearing strings (bearer tokens, grant tokens) turned into
// lately, so that an agent sending the same one on every request pays for
// hashing or decoding it once. Meant to be thread_local: no locks.
//
// Direct-mapped: a key has one slot, chosen by its hash, so a lookup
// compares with one entry however many agents a thread serves, and a new key
// replaces only the one in its slot. The compare is constant-time (a key is
// a secret: how far a wrong one matches must not show in the time taken),
// and only what the caller remembers is kept, so a stream of unknown keys
// grows nothing.
#pragma once

#include "core/digest.hpp"

#include <array>
#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

namespace gw {

template <class Value, std::size_t Slots = 64>
class RecentValues {
 public:
  static std::size_t slot_of(std::string_view key) { return std::hash<std::string_view>{}(key) % Slots; }

  // The value remembered for `key`, if `fits(value)` holds; null otherwise.
  template <class Fits>
  const Value* find(std::string_view key, Fits fits) const {
    const auto& e = entries_[slot_of(key)];
    return e.value && constant_time_equal(e.key, key) && fits(*e.value) ? &*e.value : nullptr;
  }
  const Value* find(std::string_view key) const {
    return find(key, [](const Value&) { return true; });
  }

  // Keeps `value` for `key`, in place of whatever its slot held.
  const Value& remember(std::string_view key, Value value) {
    auto& e = entries_[slot_of(key)];
    e.key.assign(key.data(), key.size());
    e.value = std::move(value);
    return *e.value;
  }

 private:
  struct Entry {
    std::string key;
    std::optional<Value> value;
  };
  std::array<Entry, Slots> entries_;
};

}  // namespace gw
