#include "service/ops/log_line.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
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

// How many bytes `value` starts with that go into a JSON string as they are
// (plain_ascii), eight at a time: ids, names, routes are nearly always all of
// it. A word needs a closer look when a byte is below 0x20, is '"' or '\\',
// or has its top bit set (Hacker's Delight 6-1: a zero byte after the XOR,
// a byte below n after the subtraction; exact as to whether there is one).
std::size_t plain_prefix(std::string_view value) {
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

// `value`'s decimal digits, written into `digits`.
template <class Integer>
std::string_view integer_text(char (&digits)[24], Integer value) {
  const auto end = std::to_chars(digits, digits + sizeof digits, value).ptr;
  return {digits, static_cast<std::size_t>(end - digits)};
}

}  // namespace

void append_json_replacing(std::string& out, std::string_view value) {
  out += '"';
  const std::size_t plain = plain_prefix(value);
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

LogLine::LogLine(std::string recycled, std::chrono::system_clock::time_point at, LogLevel level,
                 std::string_view event)
    : text_(std::move(recycled)) {
  text_.clear();
  text_.reserve(512);  // a request line with its ids and timings fits
  text_ += "{\"time\":\"";
  append_utc_timestamp(text_, at);
  text_ += "\",\"level\":\"";
  text_ += name(level);
  text_ += "\",\"event\":";
  append_json_replacing(text_, event);
}

// `,"name":` and the value. Short values that need no escape (ids, routes,
// numbers: nearly all) go through a buffer on the stack in one append; the
// name needs no look, LogKey checked it when the program was compiled.
// `quoted`: the value is a string.
void LogLine::put(LogKey name, std::string_view value, bool quoted) {
  constexpr std::size_t room = 128;
  const auto key = name.name();
  if (key.size() + value.size() + 6 > room || (quoted && plain_prefix(value) != value.size())) {
    text_ += ",\"";
    text_ += key;
    text_ += "\":";
    if (quoted)
      append_json_replacing(text_, value);
    else
      text_ += value;
    return;
  }
  char piece[room];
  char* at = piece;
  *at++ = ',';
  *at++ = '"';
  at = std::copy(key.begin(), key.end(), at);
  *at++ = '"';
  *at++ = ':';
  if (quoted) *at++ = '"';
  at = std::copy(value.begin(), value.end(), at);
  if (quoted) *at++ = '"';
  text_.append(piece, static_cast<std::size_t>(at - piece));
}

LogLine& LogLine::field(LogKey name, std::string_view value) {
  put(name, value, true);
  return *this;
}

LogLine& LogLine::raw_field(LogKey name, std::string_view json) {
  put(name, json, false);
  return *this;
}

LogLine& LogLine::signed_field(LogKey name, std::int64_t value) {
  char digits[24];
  return raw_field(name, integer_text(digits, value));
}

LogLine& LogLine::unsigned_field(LogKey name, std::uint64_t value) {
  char digits[24];
  return raw_field(name, integer_text(digits, value));
}

LogLine& LogLine::field(LogKey name, double value) {
  if (!std::isfinite(value)) return raw_field(name, "null");
  // nlohmann's own formatter (grisu2, then its %g-like layout): std::to_chars
  // lays out some values differently.
  char digits[64];
  const auto end = nlohmann::detail::to_chars(digits, digits + sizeof digits, value);
  return raw_field(name, {digits, static_cast<std::size_t>(end - digits)});
}

LogLine& LogLine::field(LogKey name, std::chrono::microseconds value) {
  // Below 10^15 microseconds (31 years) the milliseconds have at most 15
  // significant digits, so us / 1000.0 is the double nearest to them, and
  // the shortest decimal that reads back as that double (what nlohmann
  // prints) is those digits: the integer part, then three decimals less
  // their trailing zeros, one kept ("3.0").
  constexpr std::int64_t exact = 1'000'000'000'000'000;
  const std::int64_t us = value.count();
  if (us <= -exact || us >= exact) return field(name, static_cast<double>(us) / 1000.0);
  const std::uint64_t magnitude = us < 0 ? static_cast<std::uint64_t>(-us) : static_cast<std::uint64_t>(us);
  char text[32];
  char* at = text;
  if (us < 0) *at++ = '-';
  at = std::to_chars(at, text + sizeof text, magnitude / 1000).ptr;
  *at++ = '.';
  const auto thousandths = static_cast<unsigned>(magnitude % 1000);
  at[0] = static_cast<char>('0' + thousandths / 100);
  at[1] = static_cast<char>('0' + thousandths / 10 % 10);
  at[2] = static_cast<char>('0' + thousandths % 10);
  std::size_t decimals = 3;
  while (decimals > 1 && at[decimals - 1] == '0') --decimals;
  at += decimals;
  return raw_field(name, {text, static_cast<std::size_t>(at - text)});
}

LogLine& LogLine::field(LogKey name, std::nullptr_t) { return raw_field(name, "null"); }

std::string LogLine::finish() {
  text_ += "}\n";
  return std::move(text_);
}

std::string request_line(std::string recycled, std::chrono::system_clock::time_point at, LogLevel level,
                         const RequestLine& r) {
  // Keys in the order nlohmann sorts them.
  LogLine line(std::move(recycled), at, level, "request");
  if (r.attempt) line.field("attempt", *r.attempt);
  line.field("code", r.code).field("db_ms", r.db_time).field("duration_ms", r.duration);
  if (r.epoch) line.field("epoch", *r.epoch);
  if (!r.error.empty()) line.field("error", r.error);
  line.field("method", r.method);
  if (!r.operation.empty()) line.field("operation", r.operation);
  if (r.parent_span_id) line.field("parent_span_id", *r.parent_span_id);
  if (!r.provider.empty()) line.field("provider", r.provider);
  if (r.forwarded) {
    if (r.forwarded->provider_status)
      line.field("provider_status", *r.forwarded->provider_status);
    else
      line.field("provider_status", nullptr);
  }
  line.field("request_id", r.request_id).field("route", r.route);
  if (r.forwarded) line.field("span_id", r.forwarded->span_id);
  line.field("status", r.status);
  if (r.tenant && r.task) line.field("task", *r.task).field("tenant", *r.tenant);
  line.field("trace_id", r.trace_id);
  if (r.forwarded) line.field("upstream_ms", r.forwarded->upstream_time);
  return line.finish();
}

}  // namespace gw
