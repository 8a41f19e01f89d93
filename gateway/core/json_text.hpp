// JSON text written straight into a string, for the replies and lines made
// on every request: an nlohmann::json object is a map (an allocation per key
// and per string) and its dump checks every byte as UTF-8, which for a claim
// was a third of the gateway's own work. What these write is the bytes
// nlohmann's dump gives for the same values (tests/core/json_text_tests.cpp
// compares them), so a reader cannot tell the two apart.
//
// Pure: no I/O.
#pragma once

#include <charconv>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace gw {

// `value` as a JSON string, as nlohmann's dump with error_handler_t::replace
// writes it: \b \t \n \f \r \" \\ short, other control characters \u00xx,
// the rest as is, and each invalid UTF-8 sequence one U+FFFD.
void append_json_replacing(std::string& out, std::string_view value);

// How many bytes `value` starts with that go into a JSON string as they are
// (printable ASCII but '"' and '\\').
std::size_t json_plain_prefix(std::string_view value);

// `value`'s decimal digits, as nlohmann prints an integer, written into `digits`.
template <std::integral T>
  requires(!std::same_as<T, bool>)
std::string_view integer_text(char (&digits)[24], T value) {
  const auto end = std::to_chars(digits, digits + sizeof digits, value).ptr;
  return {digits, static_cast<std::size_t>(end - digits)};
}

// A member's name, a literal that goes into JSON as it is (printable ASCII,
// no '"' or '\\'): checked when the program is compiled, so writing one
// spends no time on it.
class JsonKey {
 public:
  template <std::size_t N>
  consteval JsonKey(const char (&name)[N]) : name_(name, N - 1) {
    for (const char c : name_)
      if (c < 0x20 || c >= 0x7f || c == '"' || c == '\\') throw "a JSON key must need no escape";
  }
  std::string_view name() const { return name_; }

 private:
  std::string_view name_;
};

// An object written in place, its members in the order they are given: to
// give nlohmann::json's bytes, give them in ascending key order, as it
// prints an object. Opened by the constructor, closed by close().
class JsonObjectWriter {
 public:
  explicit JsonObjectWriter(std::string& out) : out_(&out) { out += '{'; }

  JsonObjectWriter& member(JsonKey name, std::string_view value);
  template <std::integral T>
    requires(!std::same_as<T, bool>)
  JsonObjectWriter& member(JsonKey name, T value) {
    key(name);
    char digits[24];
    *out_ += integer_text(digits, value);
    return *this;
  }
  // A member whose value is an object: write its members on the writer
  // returned, close it, then go on with this one.
  JsonObjectWriter object(JsonKey name);
  void close() { *out_ += '}'; }

 private:
  void key(JsonKey name);

  std::string* out_;
  bool first_ = true;
};

}  // namespace gw
