#include "core/field_name.hpp"

#include <algorithm>
#include <array>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <utility>

namespace gw {
namespace {

struct Spelling {
  std::string_view text;
  FieldName name;
};

// In FieldName's order, so that canonical_spelling is an index.
constexpr std::array<Spelling, field_name_count> spellings{{
    {"", FieldName::other},
    {"Connection", FieldName::connection},
    {"Content-Length", FieldName::content_length},
    {"Expect", FieldName::expect},
    {"Keep-Alive", FieldName::keep_alive},
    {"Proxy-Authenticate", FieldName::proxy_authenticate},
    {"Proxy-Authorization", FieldName::proxy_authorization},
    {"Proxy-Connection", FieldName::proxy_connection},
    {"TE", FieldName::te},
    {"Trailer", FieldName::trailer},
    {"Transfer-Encoding", FieldName::transfer_encoding},
    {"Upgrade", FieldName::upgrade},
    {"Authorization", FieldName::authorization},
    {"Committed-Version", FieldName::committed_version},
    {"Expected-Version", FieldName::expected_version},
    {"Fence-Grant", FieldName::fence_grant},
    {"Fence-Realm", FieldName::fence_realm},
    {"Fence-Epoch", FieldName::fence_epoch},
    {"Fence-Owner", FieldName::fence_owner},
    {"Forwarded", FieldName::forwarded},
    {"Host", FieldName::host},
    {"Idempotency-Key", FieldName::idempotency_key},
    {"Idempotent-Replayed", FieldName::idempotent_replayed},
    {"traceparent", FieldName::traceparent},
    {"tracestate", FieldName::tracestate},
    {"X-Request-Id", FieldName::x_request_id},
    {"X-HTTP-Method-Override", FieldName::x_http_method_override},
    {"X-HTTP-Method", FieldName::x_http_method},
    {"X-Method-Override", FieldName::x_method_override},
    {"X-Original-URL", FieldName::x_original_url},
    {"X-Rewrite-URL", FieldName::x_rewrite_url},
    {"Content-Type", FieldName::content_type},
    {"Date", FieldName::date},
    {"Set-Cookie", FieldName::set_cookie},
    {"Gateway-", FieldName::gateway_family},
    {"Fence-", FieldName::fence_family},
    {"X-Forwarded-", FieldName::x_forwarded_family},
}};
constexpr std::size_t first_family = 34;  // spellings[34..]: the families' prefixes

constexpr char fold(char c) {
  if (c == '_') return '-';
  return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c;
}

// fold() as a table: one load per byte.
constexpr auto folded = [] {
  std::array<char, 256> t{};
  for (int c = 0; c < 256; ++c) t[c] = fold(static_cast<char>(c));
  return t;
}();

constexpr std::size_t longest = [] {
  std::size_t n = 0;
  for (const auto& s : spellings) n = std::max(n, s.text.size());
  return n;
}();

// Every name the gateway singles out is letters and '-' only (asserted
// below), so a name is compared eight bytes at a time: a letter of either
// case ORed with 0x20 is its lower case, and a '-' or a '_' XORed with '-'
// is 0 or 0x72. A name is read as at most three 64-bit words: at 0, 8, ...
// and its last eight bytes (overlapping); shorter than 8, its first and last
// four; shorter than 4, byte by byte. Both sides are read the same way.
constexpr std::size_t max_words = 3;
static_assert(longest <= 8 * max_words);
static_assert(std::endian::native == std::endian::little, "words are read as little-endian");

using Words = std::array<std::uint64_t, max_words>;

constexpr std::size_t word_count(std::size_t n) { return n <= 8 ? 1 : (n + 7) / 8; }

// The offset of word k of a name of n >= 8 bytes.
constexpr std::size_t word_offset(std::size_t n, std::size_t k) { return std::min(8 * k, n - 8); }

template <class Byte>
constexpr std::uint64_t bytes_at(Byte byte, std::size_t at, std::size_t count) {
  std::uint64_t w = 0;
  for (std::size_t i = 0; i < count; ++i) w |= std::uint64_t{static_cast<unsigned char>(byte(at + i))} << (8 * i);
  return w;
}

// The words of n bytes, byte(i) being the i-th: at compile time for the
// names below, as load() reads them at run time.
template <class Byte>
constexpr Words words(Byte byte, std::size_t n) {
  Words w{};
  if (n >= 8) {
    for (std::size_t k = 0; k < word_count(n); ++k) w[k] = bytes_at(byte, word_offset(n, k), 8);
  } else if (n >= 4) {
    w[0] = bytes_at(byte, 0, 4) | bytes_at(byte, n - 4, 4) << 32;
  } else {
    w[0] = bytes_at(byte, 0, n);
  }
  return w;
}

std::uint64_t load64(const char* p) {
  std::uint64_t w;
  std::memcpy(&w, p, sizeof w);
  return w;
}

std::uint64_t load32(const char* p) {
  std::uint32_t w;
  std::memcpy(&w, p, sizeof w);
  return w;
}

// The name's word k, as words() makes it.
std::uint64_t load(std::string_view name, std::size_t k) {
  const std::size_t n = name.size();
  if (n >= 8) return load64(name.data() + word_offset(n, k));
  if (n >= 4) return load32(name.data()) | load32(name.data() + n - 4) << 32;
  return bytes_at([&](std::size_t i) { return name[i]; }, 0, n);
}

// A whole name (not a family) as its words compare: its lower-case bytes,
// 0x20 where it has a letter, 0x72 where it has a '-'.
struct Pattern {
  Words lower{}, letters{}, dashes{};
  FieldName name = FieldName::other;
};
// The whole names hashed by their length and their first and last letters
// (case folded): no two share a slot, so a name is compared with one
// pattern at most. The multipliers are the first pair that separates them.
constexpr std::size_t slots = 128;

struct Hash {
  std::size_t length = 0, first = 0;
  constexpr std::size_t operator()(std::size_t n, char head, char tail) const {
    return (n * length + static_cast<std::size_t>(head & 0x1f) * first + static_cast<std::size_t>(tail & 0x1f)) %
           slots;
  }
};

constexpr Hash hash = [] {
  for (std::size_t length = 1; length < 64; ++length)
    for (std::size_t first = 1; first < 64; ++first) {
      const Hash h{length, first};
      std::array<bool, slots> taken{};
      bool clash = false;
      for (std::size_t i = 1; i < first_family && !clash; ++i) {
        const auto t = spellings[i].text;
        clash = std::exchange(taken[h(t.size(), t.front(), t.back())], true);
      }
      if (!clash) return h;
    }
  return Hash{};
}();
static_assert(hash.length != 0, "no multipliers separate the names: change Hash");

struct Slot {
  Pattern pattern;
  std::size_t size = 0;  // 0: empty
};
constexpr auto table = [] {
  std::array<Slot, slots> out{};
  for (std::size_t i = 1; i < first_family; ++i) {
    const auto text = spellings[i].text;
    auto& s = out[hash(text.size(), text.front(), text.back())];
    s.size = text.size();
    auto& p = s.pattern;
    p.lower = words([&](std::size_t j) { return fold(text[j]); }, text.size());
    p.letters = words([&](std::size_t j) { return text[j] == '-' ? '\0' : '\x20'; }, text.size());
    p.dashes = words([&](std::size_t j) { return text[j] == '-' ? '\x72' : '\0'; }, text.size());
    p.name = spellings[i].name;
  }
  return out;
}();

// Whether `name` (of the pattern's length) folds to the pattern; `underscore`
// is set when it does by way of a '_'.
bool matches(std::string_view name, const Pattern& p, bool& underscore) {
  std::uint64_t differ = 0;  // '_' where the pattern has '-': bytes of 0x72
  for (std::size_t k = 0; k < word_count(name.size()); ++k) {
    const std::uint64_t x = (load(name, k) | p.letters[k]) ^ p.lower[k];
    if ((x & ~p.dashes[k]) != 0) return false;
    differ |= x;
  }
  // A byte of 0x72's bits but not all of them is neither '-' nor '_'.
  for (std::uint64_t rest = differ; rest != 0; rest >>= 8)
    if (const auto b = rest & 0xff; b != 0 && b != 0x72) return false;
  underscore = differ != 0;
  return true;
}

static_assert([] {
  for (std::size_t i = 0; i < spellings.size(); ++i)
    if (spellings[i].name != static_cast<FieldName>(i)) return false;
  return true;
}(), "spellings is in FieldName's order");
static_assert(spellings[first_family].name == FieldName::gateway_family &&
              spellings[first_family - 1].name == FieldName::set_cookie);
static_assert(fold(spellings[first_family].text[0]) != fold(spellings[first_family + 1].text[0]) &&
                  fold(spellings[first_family].text[0]) != fold(spellings[first_family + 2].text[0]) &&
                  fold(spellings[first_family + 1].text[0]) != fold(spellings[first_family + 2].text[0]),
              "classify_field tells the families by their first letter");
static_assert(std::all_of(spellings.begin() + 1, spellings.begin() + first_family,
                          [](const Spelling& s) {
                            return std::all_of(s.text.begin(), s.text.end(), [](char c) {
                              return c == '-' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
                            });
                          }),
              "matches() compares letters and '-' only");
static_assert(std::all_of(spellings.begin(), spellings.end(),
                          [](const Spelling& s) { return s.text.find('_') == std::string_view::npos; }),
              "FieldClass::underscore assumes no name the gateway singles out has one");

}  // namespace

FieldClass classify_field(std::string_view name) {
  if (name.empty()) return {};
  const char first = folded[static_cast<unsigned char>(name.front())];
  if (name.size() <= longest) {
    // Letters are told by their low five bits; a name whose ends are not
    // letters lands on some slot and fails its comparison there.
    const auto& s = table[hash(name.size(), name.front(), name.back())];
    bool underscore = false;
    if (s.size == name.size() && matches(name, s.pattern, underscore)) return {s.pattern.name, underscore};
  }
  // The families' prefixes start with distinct letters.
  for (std::size_t i = first_family; i < spellings.size(); ++i) {
    const auto prefix = spellings[i].text;
    if (fold(prefix.front()) != first || name.size() < prefix.size()) continue;
    bool underscore = false;
    for (std::size_t j = 0; j < prefix.size(); ++j) {
      if (folded[static_cast<unsigned char>(name[j])] != fold(prefix[j])) return {};
      underscore |= name[j] == '_';
    }
    return {spellings[i].name, underscore};
  }
  return {};
}

std::string_view canonical_spelling(FieldName name) { return spellings[static_cast<std::size_t>(name)].text; }

}  // namespace gw
