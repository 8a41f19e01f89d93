// Helpers on plain_request / plain_reply: header lookup, paths, JSON text.
#include "plain_http.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cctype>

namespace demo_provider {
namespace {

int hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

}  // namespace

bool iequals(std::string_view a, std::string_view b) {
  return std::ranges::equal(a, b, [](unsigned char x, unsigned char y) {
    return std::tolower(x) == std::tolower(y);
  });
}

std::optional<std::string_view> find_header(const header_list& headers, std::string_view name) {
  for (const auto& [field, value] : headers)
    if (iequals(field, name)) return std::string_view(value);
  return std::nullopt;
}

bool valid_header_name(std::string_view name) {
  constexpr std::string_view specials = "!#$%&'*+-.^_`|~";
  return !name.empty() && std::ranges::all_of(name, [&](unsigned char c) {
    return std::isalnum(c) || specials.find(static_cast<char>(c)) != std::string_view::npos;
  });
}

bool valid_header_value(std::string_view value) {
  if (value.empty() || value.front() == ' ' || value.back() == ' ') return false;
  return std::ranges::all_of(value, [](unsigned char c) { return c >= 0x20 && c <= 0x7e; });
}

std::string_view path_of(std::string_view target) {
  return target.substr(0, target.find('?'));
}

std::optional<std::string> percent_decode(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] != '%') {
      out.push_back(text[i]);
      continue;
    }
    if (i + 2 >= text.size()) return std::nullopt;
    const int high = hex_digit(text[i + 1]);
    const int low = hex_digit(text[i + 2]);
    if (high < 0 || low < 0) return std::nullopt;
    out.push_back(static_cast<char>(high * 16 + low));
    i += 2;
  }
  return out;
}

std::string json_text(const nlohmann::json& value) {
  return value.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

plain_reply json_reply(unsigned status, const nlohmann::json& body) {
  return plain_reply{status, json_text(body), {}};
}

plain_reply error_reply(unsigned status, std::string_view error) {
  return json_reply(status, {{"error", error}});
}

}  // namespace demo_provider
