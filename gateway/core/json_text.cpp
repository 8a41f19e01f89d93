#include "core/json_text.hpp"

#include <array>
#include <cstring>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace gw {

namespace {

// Björn Höhrmann's UTF-8 decoder, the table nlohmann's serializer uses: the
// same table is what makes the same bytes invalid. 256 byte classes, then
// the transitions (state * 16 + class).
constexpr std::uint8_t utf8_accept = 0, utf8_reject = 1;
constexpr std::array<std::uint8_t, 400> utf8_table = {{
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,  // 00..1F
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,  // 20..3F
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,  // 40..5F
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,  // 60..7F
    1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9,  // 80..9F
    7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7,  // A0..BF
    8, 8, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2,  // C0..DF
    10, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 4, 3, 3,                                                  // E0..EF
    11, 6, 6, 6, 5, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8,                                                  // F0..FF
    0, 1, 2, 3, 5, 8, 7, 1, 1, 1, 4, 6, 1, 1, 1, 1,                                                   // s0
    1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 1, 1, 1, 1, 1, 0, 1, 0, 1, 1, 1, 1, 1, 1,  // s1..s2
    1, 2, 1, 1, 1, 1, 1, 2, 1, 2, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 2, 1, 1, 1, 1, 1, 1, 1, 1,  // s3..s4
    1, 2, 1, 1, 1, 1, 1, 1, 1, 2, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 3, 1, 3, 1, 1, 1, 1, 1, 1,  // s5..s6
    1, 3, 1, 1, 1, 1, 1, 3, 1, 3, 1, 1, 1, 1, 1, 1, 1, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,  // s7..s8
}};

constexpr std::string_view replacement_character = "\xEF\xBF\xBD";

bool plain_ascii(unsigned char c) { return c >= 0x20 && c < 0x80 && c != '"' && c != '\\'; }

void append_escaped_ascii(std::string& out, unsigned char c) {
  switch (c) {
    case '\b': out += "\\b"; return;
    case '\t': out += "\\t"; return;
    case '\n': out += "\\n"; return;
    case '\f': out += "\\f"; return;
    case '\r': out += "\\r"; return;
    case '"': out += "\\\""; return;
    case '\\': out += "\\\\"; return;
    default:
      if (c <= 0x1F) {
        constexpr char hex[] = "0123456789abcdef";
        const char escape[] = {'\\', 'u', '0', '0', hex[c >> 4], hex[c & 0xF]};
        out.append(escape, sizeof escape);
      } else {
        out += static_cast<char>(c);
      }
  }
}

}  // namespace

// Sixteen bytes at a time where SSE2 is (every x86-64): ids, names and
// routes are nearly always all plain, and most are shorter than sixteen, so
// the last piece is copied into a block padded with plain bytes rather than
// read a byte at a time. SSE2's signed compare takes bytes from 0x80 up as
// negative, so one "less than 0x20" finds both control characters and
// non-ASCII.
std::size_t json_plain_prefix(std::string_view value) {
#if defined(__SSE2__)
  const __m128i space = _mm_set1_epi8(0x20), quote = _mm_set1_epi8('"'), backslash = _mm_set1_epi8('\\');
  const auto first_stop = [&](__m128i v) {
    const __m128i stop =
        _mm_or_si128(_mm_cmplt_epi8(v, space), _mm_or_si128(_mm_cmpeq_epi8(v, quote), _mm_cmpeq_epi8(v, backslash)));
    return _mm_movemask_epi8(stop);
  };
  std::size_t i = 0;
  for (; i + 16 <= value.size(); i += 16)
    if (const int mask = first_stop(_mm_loadu_si128(reinterpret_cast<const __m128i*>(value.data() + i))); mask != 0)
      return i + static_cast<std::size_t>(__builtin_ctz(static_cast<unsigned>(mask)));
  if (i == value.size()) return i;
  alignas(16) char last[16];
  std::memset(last, 'a', sizeof last);
  std::memcpy(last, value.data() + i, value.size() - i);
  const int mask = first_stop(_mm_load_si128(reinterpret_cast<const __m128i*>(last)));
  return mask == 0 ? value.size() : i + static_cast<std::size_t>(__builtin_ctz(static_cast<unsigned>(mask)));
#else
  std::size_t i = 0;
  while (i < value.size() && plain_ascii(static_cast<unsigned char>(value[i]))) ++i;
  return i;
#endif
}

void append_json_replacing(std::string& out, std::string_view value) {
  out += '"';
  const std::size_t plain = json_plain_prefix(value);
  out.append(value.data(), plain);
  value.remove_prefix(plain);  // the rest starts at a character's first byte
  std::uint8_t state = utf8_accept;
  // Where `out` ended after the last whole character: an invalid sequence is
  // cut back to there and replaced.
  std::size_t accepted = out.size();
  std::size_t pending = 0;  // bytes of the sequence under way
  for (std::size_t i = 0; i < value.size(); ++i) {
    const auto byte = static_cast<unsigned char>(value[i]);
    if (state == utf8_accept && byte < 0x80) {
      // The common case: a run of ASCII that needs no escape, in one append.
      if (plain_ascii(byte)) {
        auto end = i + 1;
        while (end < value.size() && plain_ascii(static_cast<unsigned char>(value[end]))) ++end;
        out.append(value.data() + i, end - i);
        i = end - 1;
      } else {
        append_escaped_ascii(out, byte);
      }
      accepted = out.size();
      continue;
    }
    state = utf8_table[256u + state * 16u + utf8_table[byte]];
    if (state == utf8_accept) {
      out += static_cast<char>(byte);
      accepted = out.size();
      pending = 0;
    } else if (state == utf8_reject) {
      // As nlohmann: a byte that broke a sequence is read again on its own.
      if (pending > 0) --i;
      out.resize(accepted);
      out += replacement_character;
      accepted = out.size();
      pending = 0;
      state = utf8_accept;
    } else {
      out += static_cast<char>(byte);
      ++pending;
    }
  }
  if (state != utf8_accept) {  // cut short at the end
    out.resize(accepted);
    out += replacement_character;
  }
  out += '"';
}

void JsonObjectWriter::key(JsonKey name) {
  auto& out = *out_;
  if (!first_) out += ',';
  first_ = false;
  out += '"';
  out += name.name();
  out += "\":";
}

JsonObjectWriter& JsonObjectWriter::member(JsonKey name, std::string_view value) {
  key(name);
  append_json_replacing(*out_, value);
  return *this;
}

JsonObjectWriter JsonObjectWriter::object(JsonKey name) {
  key(name);
  return JsonObjectWriter(*out_);
}

}  // namespace gw
