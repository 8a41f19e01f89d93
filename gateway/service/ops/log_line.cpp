#include "service/ops/log_line.hpp"

#include <nlohmann/json.hpp>

#include <array>
#include <charconv>
#include <cmath>

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

template <class Integer>
void append_integer(std::string& out, Integer value) {
  char digits[24];
  const auto end = std::to_chars(digits, digits + sizeof digits, value).ptr;
  out.append(digits, end);
}

}  // namespace

void append_json_replacing(std::string& out, std::string_view value) {
  out += '"';
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

LogLine::LogLine(std::chrono::system_clock::time_point at, LogLevel level, std::string_view event) {
  text_.reserve(512);  // a request line with its ids and timings fits
  text_ += "{\"time\":\"";
  append_utc_timestamp(text_, at);
  text_ += "\",\"level\":\"";
  text_ += name(level);
  text_ += "\",\"event\":";
  append_json_replacing(text_, event);
}

void LogLine::key(std::string_view name) {
  text_ += ',';
  append_json_replacing(text_, name);
  text_ += ':';
}

LogLine& LogLine::field(std::string_view name, std::string_view value) {
  key(name);
  append_json_replacing(text_, value);
  return *this;
}

LogLine& LogLine::signed_field(std::string_view name, std::int64_t value) {
  key(name);
  append_integer(text_, value);
  return *this;
}

LogLine& LogLine::unsigned_field(std::string_view name, std::uint64_t value) {
  key(name);
  append_integer(text_, value);
  return *this;
}

LogLine& LogLine::field(std::string_view name, double value) {
  key(name);
  if (!std::isfinite(value)) {
    text_ += "null";
    return *this;
  }
  // nlohmann's own formatter (grisu2, then its %g-like layout): std::to_chars
  // lays out some values differently.
  char digits[64];
  const auto end = nlohmann::detail::to_chars(digits, digits + sizeof digits, value);
  text_.append(digits, end);
  return *this;
}

LogLine& LogLine::field(std::string_view name, std::nullptr_t) {
  key(name);
  text_ += "null";
  return *this;
}

std::string LogLine::finish() {
  text_ += "}\n";
  return std::move(text_);
}

std::string request_line(std::chrono::system_clock::time_point at, LogLevel level, const RequestLine& r) {
  // Keys in the order nlohmann sorts them.
  LogLine line(at, level, "request");
  if (r.attempt) line.field("attempt", *r.attempt);
  line.field("code", r.code).field("db_ms", r.db_ms).field("duration_ms", r.duration_ms);
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
  if (r.forwarded) line.field("upstream_ms", r.forwarded->upstream_ms);
  return line.finish();
}

}  // namespace gw
