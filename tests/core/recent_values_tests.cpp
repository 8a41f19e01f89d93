// The recent values a thread keeps for secret-bearing keys
// (core/recent_values.hpp): exact keys only, one slot per key, and a
// caller's own test on the value.
#include "core/recent_values.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <string>
#include <vector>

using namespace gw;

TEST_CASE("recent values: nothing is found before it is remembered, and then only by its exact key") {
  RecentValues<int> recent;
  CHECK(recent.find("key-1") == nullptr);
  CHECK(recent.find("") == nullptr);  // an empty slot is not an empty key's value
  CHECK(recent.remember("key-1", 7) == 7);
  REQUIRE(recent.find("key-1") != nullptr);
  CHECK(*recent.find("key-1") == 7);
  // A prefix, an extension, one byte changed, another case: all unknown,
  // including whichever of them share key-1's slot.
  for (const char* other : {"key-", "key-1x", "key-2", "KEY-1", ""}) CHECK(recent.find(other) == nullptr);
  // A key of the same length in the same slot: only the compare can tell.
  std::string twin;
  for (int i = 0; twin.empty(); ++i) {
    const auto candidate = "k" + std::to_string(1000 + i);  // five characters, like key-1
    if (RecentValues<int>::slot_of(candidate) == RecentValues<int>::slot_of("key-1")) twin = candidate;
  }
  CHECK(recent.find(twin) == nullptr);
}

TEST_CASE("recent values: keys in different slots are all kept, and a new key replaces only its slot's") {
  RecentValues<std::string, 16> recent;
  // Sixteen keys, one per slot.
  std::vector<std::string> keys(16);
  for (int i = 0, found = 0; found < 16; ++i) {
    const auto key = "grant-" + std::to_string(i);
    auto& k = keys[RecentValues<std::string, 16>::slot_of(key)];
    if (k.empty()) k = key, ++found;
  }
  for (const auto& k : keys) recent.remember(k, "value of " + k);
  for (const auto& k : keys) {
    REQUIRE(recent.find(k) != nullptr);
    CHECK(*recent.find(k) == "value of " + k);
  }
  // Another key: the one in its slot goes, every other stays.
  std::string newcomer;
  for (int i = 1000; newcomer.empty(); ++i)
    if (std::find(keys.begin(), keys.end(), "grant-" + std::to_string(i)) == keys.end())
      newcomer = "grant-" + std::to_string(i);
  const auto slot = RecentValues<std::string, 16>::slot_of(newcomer);
  recent.remember(newcomer, "newest");
  CHECK(*recent.find(newcomer) == "newest");
  CHECK(recent.find(keys[slot]) == nullptr);
  for (std::size_t i = 0; i < keys.size(); ++i)
    if (i != slot) CHECK(recent.find(keys[i]) != nullptr);
}

TEST_CASE("recent values: a value the caller's test refuses is not found, and a newer one for the key is") {
  struct Seen {
    int generation;
    std::string what;
  };
  RecentValues<Seen> recent;
  recent.remember("token", Seen{1, "old"});
  const auto of = [](int g) { return [g](const Seen& s) { return s.generation == g; }; };
  REQUIRE(recent.find("token", of(1)) != nullptr);
  CHECK(recent.find("token", of(2)) == nullptr);
  recent.remember("token", Seen{2, "new"});
  REQUIRE(recent.find("token", of(2)) != nullptr);
  CHECK(recent.find("token", of(2))->what == "new");
  CHECK(recent.find("token", of(1)) == nullptr);  // one slot per key: the newer replaced it
}
