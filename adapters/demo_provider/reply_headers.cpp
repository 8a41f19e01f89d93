// Parsing and reporting of the reply_headers switch.
#include "reply_headers.hpp"

#include <nlohmann/json.hpp>

#include <array>
#include <string_view>

namespace demo_provider {
namespace {

// The server sets these on every reply itself; a second copy would make the
// reply unreadable (framing) or ambiguous (the JSON body's type) rather than
// test anything about headers.
constexpr std::array<std::string_view, 4> framing_headers{"Content-Length", "Transfer-Encoding", "Connection",
                                                          "Content-Type"};

}  // namespace

parsed_reply_headers parse_reply_headers(const nlohmann::json& body) {
  const auto fail = [](std::string why) { return parsed_reply_headers{std::nullopt, std::move(why)}; };
  if (!body.is_object()) return fail("the body must be a JSON object");
  const auto it = body.find("headers");
  if (it == body.end() || !it->is_array()) return fail("headers must be an array of [name, value] pairs");
  header_list out;
  for (const auto& pair : *it) {
    if (!pair.is_array() || pair.size() != 2 || !pair[0].is_string() || !pair[1].is_string())
      return fail("each header must be a [name, value] pair of strings");
    const auto& name = pair[0].get_ref<const std::string&>();
    const auto& value = pair[1].get_ref<const std::string&>();
    if (!valid_header_name(name)) return fail("header name '" + name + "' is not an HTTP token");
    for (const std::string_view framing : framing_headers)
      if (iequals(name, framing)) return fail("header " + name + " is set by the server itself");
    if (!valid_header_value(value)) return fail("the value of " + name + " must be non-empty visible ASCII");
    out.emplace_back(name, value);
  }
  return parsed_reply_headers{std::move(out), {}};
}

nlohmann::json reply_headers_json(const header_list& headers) {
  nlohmann::json list = nlohmann::json::array();
  for (const auto& [name, value] : headers) list.push_back({name, value});
  return nlohmann::json{{"headers", std::move(list)}};
}

}  // namespace demo_provider
