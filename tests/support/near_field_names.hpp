// Random header names made to come close to the ones the gateway's rules
// single out (core/field_name.hpp): their spellings in any case, '_' for
// '-', cut short, run on, a byte changed; and now and then any token. For
// tests that hold a rule against the same rule written plainly.
#pragma once

#include "core/field_name.hpp"

#include <cctype>
#include <random>
#include <string>

namespace gw::test {

inline std::string near_field_name(std::mt19937& rng) {
  static const std::string alphabet =
      "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_!#$%&'*+.^`|~";
  const auto pick = [&](std::size_t n) { return std::uniform_int_distribution<std::size_t>(0, n - 1)(rng); };
  std::string name;
  if (pick(8) == 0) {
    for (std::size_t i = 1 + pick(24); i > 0; --i) name += alphabet[pick(alphabet.size())];
    return name;
  }
  name = std::string(canonical_spelling(static_cast<FieldName>(1 + pick(field_name_count - 1))));
  for (auto& c : name) {
    if (pick(2) == 0) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    if (c == '-' && pick(4) == 0) c = '_';
    if (pick(40) == 0) c = alphabet[pick(alphabet.size())];
  }
  switch (pick(5)) {
    case 0:
      name.resize(1 + pick(name.size()));
      break;
    case 1:
      for (std::size_t i = 1 + pick(6); i > 0; --i) name += alphabet[pick(alphabet.size())];
      break;
    default:
      break;
  }
  return name;
}

}  // namespace gw::test
