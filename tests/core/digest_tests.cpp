// SHA-256, hex, random ids and constant-time equality.
#include "core/digest.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <set>

using namespace gw;

TEST_CASE("digest: SHA-256 of known inputs, raw and hex") {
  CHECK(sha256_hex("") == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  CHECK(sha256_hex("abc") == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  CHECK(sha256("abc").size() == 32);
  CHECK(to_hex(sha256("abc")) == sha256_hex("abc"));
}

TEST_CASE("digest: random ids are lower-case hex of the asked size, and never repeat") {
  std::set<std::string> seen;
  for (std::size_t bytes : {8u, 12u, 16u, 64u, 65u, 600u}) {
    for (int i = 0; i < 50; ++i) {
      const auto id = random_hex(bytes);
      REQUIRE(id.size() == 2 * bytes);
      CHECK(std::all_of(id.begin(), id.end(), [](char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); }));
      CHECK(seen.insert(id).second);
    }
    CHECK(random_bytes(bytes).size() == bytes);
  }
}

TEST_CASE("digest: constant-time equality is plain equality") {
  CHECK(constant_time_equal("token-1", "token-1"));
  CHECK_FALSE(constant_time_equal("token-1", "token-2"));
  CHECK_FALSE(constant_time_equal("token-1", "token-11"));
  CHECK(constant_time_equal("", ""));
}
