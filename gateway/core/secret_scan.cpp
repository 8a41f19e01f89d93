#include "core/secret_scan.hpp"

#include "core/base64url.hpp"

#include <array>
#include <deque>
#include <stdexcept>

namespace gw {
namespace {

// Each byte as the scan reads it: 0-9 for digits, 10-35 for letters of
// either case, -1 for everything else (dropped), -2 for the two bytes that
// may start an escape ('%' and '\\'), dropped too.
constexpr std::int8_t escape_start = -2;
constexpr std::array<std::int8_t, 256> make_symbols() {
  std::array<std::int8_t, 256> table{};
  for (auto& v : table) v = -1;
  table['%'] = table['\\'] = escape_start;
  for (int c = '0'; c <= '9'; ++c) table[c] = static_cast<std::int8_t>(c - '0');
  for (int c = 'a'; c <= 'z'; ++c) table[c] = static_cast<std::int8_t>(c - 'a' + 10);
  for (int c = 'A'; c <= 'Z'; ++c) table[c] = static_cast<std::int8_t>(c - 'A' + 10);
  return table;
}
constexpr auto symbol_of = make_symbols();

int hex_value(unsigned char c) {
  const int s = symbol_of[c];
  return s >= 0 && s < 16 ? s : -1;
}

// The secret as the scan reads it.
std::string folded(std::string_view text) {
  std::string out;
  for (unsigned char c : text)
    if (symbol_of[c] >= 0) out += static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
  return out;
}

// The base64 characters that depend on the secret's bits alone when it
// starts `align` bytes into a three-byte group: what any base64 text holding
// the secret at that alignment contains, whatever surrounds it. base64url
// differs only in '+' and '/', which the scan drops.
std::string base64_core(std::string_view secret, std::size_t align) {
  const std::string encoded = base64_encode(std::string(align, '\0') + std::string(secret));
  const std::size_t first = (8 * align + 5) / 6, end = 8 * (align + secret.size()) / 6;
  return first < end ? encoded.substr(first, end - first) : std::string();
}

// A longer form is searched for by its two ends: a reply holding the whole
// secret holds both, and the automaton stays small for a 64 KiB credential.
constexpr std::size_t max_needle = 128;

// The automaton's moves keep "a needle ends here" in their top bit.
constexpr std::uint32_t match_bit = 0x80000000u;

}  // namespace

std::size_t secret_alphanumerics(std::string_view secret) {
  std::size_t n = 0;
  for (unsigned char c : secret) n += symbol_of[c] >= 0;
  return n;
}

SecretScan::SecretScan(const std::vector<std::string_view>& secrets) {
  const auto add = [&](std::string form) {
    form = folded(form);
    if (form.empty()) return;
    if (form.size() <= max_needle) {
      needles_.push_back(std::move(form));
    } else {
      needles_.push_back(form.substr(0, max_needle));
      needles_.push_back(form.substr(form.size() - max_needle));
    }
  };
  for (const auto secret : secrets) {
    add(std::string(secret));
    for (std::size_t align = 0; align < 3; ++align) add(base64_core(secret, align));
  }

  // The trie of the needles (0 is the root, so 0 as a child means none),
  // then the failure links breadth first, which turn it into moves for
  // every state and symbol.
  std::vector<std::array<std::uint32_t, symbols>> child(1);
  std::vector<std::uint8_t> ends(1, 0);  // per state: some needle ends here
  for (const auto& needle : needles_) {
    std::uint32_t at = 0;
    for (unsigned char c : needle) {
      const auto s = static_cast<std::size_t>(symbol_of[c]);
      if (!child[at][s]) {
        child[at][s] = static_cast<std::uint32_t>(child.size());
        child.emplace_back();
        ends.push_back(0);
      }
      at = child[at][s];
    }
    ends[at] = 1;
  }
  // A move keeps its target row's start below the match bit: 59 million
  // states, far past any config's credentials (the table would be 8 GiB).
  if (child.size() * symbols >= match_bit) throw std::length_error("too many credential forms to scan for");
  next_.assign(child.size() * symbols, 0);
  std::vector<std::uint32_t> fail(child.size(), 0);
  std::deque<std::uint32_t> queue;
  for (std::size_t s = 0; s < symbols; ++s)
    if (const auto v = child[0][s]) {
      next_[s] = v;
      queue.push_back(v);
    }
  while (!queue.empty()) {
    const auto u = queue.front();
    queue.pop_front();
    for (std::size_t s = 0; s < symbols; ++s) {
      const auto fallback = next_[fail[u] * symbols + s];
      if (const auto v = child[u][s]) {
        fail[v] = fallback;
        ends[v] |= ends[fallback];
        next_[u * symbols + s] = v;
        queue.push_back(v);
      } else {
        next_[u * symbols + s] = fallback;
      }
    }
  }
  // Each move names its state by where the state's row starts: a byte's
  // move is then one add and one load, no multiply on the loop's chain.
  for (auto& move : next_) move = (ends[move] ? match_bit : 0) | static_cast<std::uint32_t>(move * symbols);
}

bool SecretScan::reveals(std::string_view text) const {
  Pass pass(*this);
  pass.body(text);
  return pass.found();
}

void SecretScan::Pass::step(Reader& r, unsigned char c) {
  const int s = symbol_of[c];
  if (s < 0) return;
  const auto move = scan_->next_[r.state + static_cast<std::size_t>(s)];
  r.state = move & ~match_bit;
  found_ = found_ || (move & match_bit) != 0;
}

// step() over every byte, with the state in a register: the loop every
// reply's bytes go through. Says whether a byte could start an escape ('%'
// or '\\'), noted among the bytes the automaton skips anyway.
bool SecretScan::Pass::plain(Reader& r, std::string_view bytes) {
  const std::uint32_t* next = scan_->next_.data();
  std::uint32_t state = r.state, moves = 0;
  bool escapes = false;
  for (unsigned char c : bytes) {
    const int s = symbol_of[c];
    if (s < 0) {
      escapes |= s == escape_start;
      continue;
    }
    const auto move = next[state + static_cast<std::size_t>(s)];
    state = move & ~match_bit;
    moves |= move;
  }
  r.state = state;
  found_ = found_ || (moves & match_bit) != 0;
  return escapes;
}

// Both readings of one text. Bytes with no '%' or '\\' decode to
// themselves, so while no escape is open and both readers are in the same
// state (a reply without escapes: nearly all), one pass moves both.
void SecretScan::Pass::read(Reader& as_is, Reader& decoding, std::string_view bytes) {
  const bool same = decoding.escape == 0 && decoding.state == as_is.state;
  const bool escapes = plain(as_is, bytes);
  if (same && !escapes)
    decoding.state = as_is.state;
  else
    decoded(decoding, bytes);
}

// Percent escapes (%XX, either hex case) and JSON escapes (\uXXXX, \/ and
// the rest) decoded, one level: what an escape does not complete is read as
// the literal bytes it was. A decoded byte is never decoded again.
void SecretScan::Pass::decoded(Reader& r, std::string_view bytes) {
  enum : std::uint8_t { none, percent, percent_digit, backslash, u0, u1, u2, u3 };
  static constexpr char digit_chars[] = "0123456789abcdef";
  for (std::size_t i = 0; i < bytes.size(); ++i) {
    const auto c = static_cast<unsigned char>(bytes[i]);
    switch (r.escape) {
      case none:
        if (c == '%')
          r.escape = percent;
        else if (c == '\\')
          r.escape = backslash;
        else
          step(r, c);
        continue;
      case percent:
        if (const int h = hex_value(c); h >= 0) {
          r.pending = static_cast<std::uint16_t>(h);
          r.escape = percent_digit;
          continue;
        }
        break;  // '%' was literal (and is not a letter or digit)
      case percent_digit:
        if (const int h = hex_value(c); h >= 0) {
          step(r, static_cast<unsigned char>(r.pending * 16 + h));
          r.escape = none;
          continue;
        }
        step(r, static_cast<unsigned char>(digit_chars[r.pending]));
        break;
      case backslash:
        if (c == 'u') {
          r.pending = 0;
          r.escape = u0;
          continue;
        }
        if (c == '"' || c == '\\' || c == '/' || c == 'b' || c == 'f' || c == 'n' || c == 'r' || c == 't') {
          r.escape = none;  // none of them decodes to a letter or a digit
          continue;
        }
        break;
      default: {  // u0-u3: that many hex digits of \uXXXX read
        const auto digits = static_cast<unsigned>(r.escape - u0);
        if (const int h = hex_value(c); h >= 0) {
          r.pending = static_cast<std::uint16_t>(r.pending * 16 + h);
          if (digits == 3) {
            if (r.pending < 0x80) step(r, static_cast<unsigned char>(r.pending));
            r.escape = none;
          } else {
            ++r.escape;
          }
          continue;
        }
        step(r, 'u');
        for (unsigned d = digits; d-- > 0;) step(r, static_cast<unsigned char>(digit_chars[(r.pending >> (4 * d)) & 15]));
        break;
      }
    }
    // The escape did not complete: this byte starts afresh.
    r.escape = none;
    --i;
  }
}

void SecretScan::Pass::header(std::string_view name, std::string_view value) {
  if (found_) return;
  read(all_plain_, all_decoded_, name);
  read(all_plain_, all_decoded_, value);
  read(values_plain_, values_decoded_, value);
}

void SecretScan::Pass::body(std::string_view bytes) {
  if (found_) return;
  read(all_plain_, all_decoded_, bytes);
}

}  // namespace gw
