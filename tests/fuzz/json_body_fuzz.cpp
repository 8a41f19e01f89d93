// gw::parse_strict_json (core/strict_json.hpp), the reader of every JSON the
// gateway takes from outside (bodies, grant tokens, webhooks, config).
//
// Documented: it never throws, and it returns a discarded value for invalid
// JSON or for an object with a member twice at any depth. Checked against
// nlohmann's own parser and a SAX pass that counts member names as written:
// - any exception traps;
// - accepted text is valid JSON and parses to the same value as nlohmann's
//   parser, and walking the accepted tree finds as many members as the text
//   names (a member written twice collapses into one: a duplicate got in);
// - valid JSON is discarded only when some object repeats a member;
// - the accepted value, dumped and read again, is accepted and unchanged.
#include "core/strict_json.hpp"

#include <nlohmann/json.hpp>

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace {

using nlohmann::json;

void check(bool ok) {
  if (!ok) __builtin_trap();
}

// Counts the member names in the text, duplicates included.
struct KeyCounter : nlohmann::json_sax<json> {
  std::size_t keys = 0;
  bool null() override { return true; }
  bool boolean(bool) override { return true; }
  bool number_integer(number_integer_t) override { return true; }
  bool number_unsigned(number_unsigned_t) override { return true; }
  bool number_float(number_float_t, const string_t&) override { return true; }
  bool string(string_t&) override { return true; }
  bool binary(binary_t&) override { return true; }
  bool start_object(std::size_t) override { return true; }
  bool key(string_t&) override {
    ++keys;
    return true;
  }
  bool end_object() override { return true; }
  bool start_array(std::size_t) override { return true; }
  bool end_array() override { return true; }
  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception&) override { return false; }
};

// Members of every object in the tree, walked without recursion.
std::size_t members(const json& root) {
  std::size_t n = 0;
  std::vector<const json*> todo{&root};
  while (!todo.empty()) {
    const json* j = todo.back();
    todo.pop_back();
    if (j->is_object()) n += j->size();
    if (j->is_structured())
      for (const auto& child : *j) todo.push_back(&child);
  }
  return n;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  json strict;
  try {
    strict = gw::parse_strict_json(text);
  } catch (...) {
    __builtin_trap();  // documented: no exceptions
  }

  const json lenient = json::parse(text, nullptr, /*allow_exceptions=*/false);
  KeyCounter counter;
  const bool valid = json::sax_parse(text, &counter, json::input_format_t::json, /*strict=*/true);
  check(valid == !lenient.is_discarded());

  if (strict.is_discarded()) {
    // Valid JSON is refused only for a member written twice.
    if (valid) check(members(lenient) < counter.keys);
    return 0;
  }
  check(valid);
  check(strict == lenient);
  check(members(strict) == counter.keys);  // no member was written twice anywhere

  const json again = gw::parse_strict_json(strict.dump());
  check(!again.is_discarded() && again == strict);
  return 0;
}
