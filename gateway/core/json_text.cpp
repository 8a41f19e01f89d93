#include "core/json_text.hpp"

#include <array>
#include <charconv>
#include <cstring>

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

// Eight bytes at a time: ids, names and routes are nearly always all plain. A word needs a closer look when a byte is below 0x20, is '"' or '\\',
// or has its top bit set (Hacker's Delight 6-1: a zero byte after the XOR,
// a byte below n after the subtraction; exact as to whether there is one).
std::size_t json_plain_prefix(std::string_view value) {
  constexpr std::uint64_t ones = 0x0101010101010101u, highs = 0x8080808080808080u;
  const auto has_zero = [](std::uint64_t x) { return (x - ones) & ~x & highs; };
  std::size_t i = 0;
  for (; i + 8 <= value.size(); i += 8) {
    std::uint64_t w;
    std::memcpy(&w, value.data() + i, 8);
    if (((w - 0x20 * ones) & ~w & highs) | has_zero(w ^ ('"' * ones)) | has_zero(w ^ ('\\' * ones)) | (w & highs)) break;
  }
  while (i < value.size() && plain_ascii(static_cast<unsigned char>(value[i]))) ++i;
  return i;
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

namespace {

template <class Integer>
void append_integer(std::string& out, Integer value) {
  char digits[24];
  out.append(digits, static_cast<std::size_t>(std::to_chars(digits, digits + sizeof digits, value).ptr - digits));
}

}  // namespace

JsonObjectWriter& JsonObjectWriter::signed_member(JsonKey name, std::int64_t value) {
  key(name);
  append_integer(*out_, value);
  return *this;
}

JsonObjectWriter& JsonObjectWriter::unsigned_member(JsonKey name, std::uint64_t value) {
  key(name);
  append_integer(*out_, value);
  return *this;
}

JsonObjectWriter JsonObjectWriter::object(JsonKey name) {
  key(name);
  return JsonObjectWriter(*out_);
}

}  // namespace gw
