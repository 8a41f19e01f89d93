// Parsing and reporting of the reply_headers switch.
#include "reply_headers.hpp"

#include <nlohmann/json.hpp>

#include <array>
#include <optional>
#include <string_view>

namespace demo_provider {
namespace {

// The server sets these on every reply itself; a second copy would make the
// reply unreadable (framing) or ambiguous (the JSON body's type) rather than
// test anything about headers.
constexpr std::array<std::string_view, 4> framing_headers{"Content-Length", "Transfer-Encoding", "Connection",
                                                          "Content-Type"};

// Hex digits to bytes; nullopt unless an even number of [0-9a-f].
std::optional<std::string> from_hex(std::string_view hex) {
  const auto digit = [](char c) { return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1; };
  if (hex.size() % 2 != 0) return std::nullopt;
  std::string out;
  for (std::size_t i = 0; i < hex.size(); i += 2) {
    const int hi = digit(hex[i]), lo = digit(hex[i + 1]);
    if (hi < 0 || lo < 0) return std::nullopt;
    out += static_cast<char>(hi * 16 + lo);
  }
  return out;
}

std::string to_hex(std::string_view bytes) {
  static constexpr char digits[] = "0123456789abcdef";
  std::string out;
  for (unsigned char c : bytes) {
    out += digits[c >> 4];
    out += digits[c & 15];
  }
  return out;
}

// RFC 9110 field-value with obs-text: visible ASCII, space and tab inside,
// and bytes 0x80-0xFF, which need not be UTF-8.
bool valid_raw_value(std::string_view value) {
  if (value.empty() || value.front() == ' ' || value.back() == ' ') return false;
  for (unsigned char c : value)
    if (!(c == '\t' || (c >= 0x20 && c != 0x7f))) return false;
  return true;
}

}  // namespace

parsed_reply_headers parse_reply_headers(const nlohmann::json& body) {
  const auto fail = [](std::string why) { return parsed_reply_headers{std::nullopt, std::move(why)}; };
  if (!body.is_object()) return fail("the body must be a JSON object");
  const auto it = body.find("headers");
  if (it == body.end() || !it->is_array()) return fail("headers must be an array of [name, value] pairs");
  header_list out;
  for (const auto& pair : *it) {
    const bool raw = pair.is_array() && pair.size() == 2 && pair[1].is_object();
    if (!pair.is_array() || pair.size() != 2 || !pair[0].is_string() || !(pair[1].is_string() || raw))
      return fail("each header must be a [name, value] pair of strings");
    const auto& name = pair[0].get_ref<const std::string&>();
    if (!valid_header_name(name)) return fail("header name '" + name + "' is not an HTTP token");
    for (const std::string_view framing : framing_headers)
      if (iequals(name, framing)) return fail("header " + name + " is set by the server itself");
    if (raw) {
      // Bytes a JSON string cannot carry: obs-text such as ISO-8859-1.
      const auto hex = pair[1].find("hex");
      auto bytes = hex != pair[1].end() && hex->is_string() ? from_hex(hex->get_ref<const std::string&>())
                                                            : std::nullopt;
      if (!bytes || !valid_raw_value(*bytes))
        return fail("the hex value of " + name + " must be lower-case hex of a field value (0x80-0xFF allowed)");
      out.emplace_back(name, std::move(*bytes));
      continue;
    }
    const auto& value = pair[1].get_ref<const std::string&>();
    if (!valid_header_value(value)) return fail("the value of " + name + " must be non-empty visible ASCII");
    out.emplace_back(name, value);
  }
  return parsed_reply_headers{std::move(out), {}};
}

nlohmann::json reply_headers_json(const header_list& headers) {
  nlohmann::json list = nlohmann::json::array();
  for (const auto& [name, value] : headers) {
    if (valid_header_value(value))
      list.push_back({name, value});
    else
      list.push_back({name, {{"hex", to_hex(value)}}});
  }
  return nlohmann::json{{"headers", std::move(list)}};
}

}  // namespace demo_provider
