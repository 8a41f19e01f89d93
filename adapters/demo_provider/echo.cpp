// The echo switch's forms, and their parsing.
#include "echo.hpp"
#include "webhooks.hpp"

#include <nlohmann/json.hpp>

#include <array>
#include <string_view>
#include <utility>

namespace demo_provider {
namespace {

constexpr std::array<std::pair<echo_form, std::string_view>, 8> echo_form_names{{
    {echo_form::body, "body"},
    {echo_form::json_escaped, "json_escaped"},
    {echo_form::upper, "upper"},
    {echo_form::split, "split"},
    {echo_form::percent, "percent"},
    {echo_form::name, "name"},
    {echo_form::base64, "base64"},
    {echo_form::base64url, "base64url"},
}};

constexpr std::string_view echo_hex = "0123456789ABCDEF";

std::string echo_upper(std::string text) {
  for (auto& c : text)
    if (c >= 'a' && c <= 'z') c = static_cast<char>(c - 'a' + 'A');
  return text;
}

// Headers the server writes itself: an echo never adds one.
bool framing_name(std::string_view name) {
  for (std::string_view framing : {"Content-Length", "Transfer-Encoding", "Connection", "Content-Type"})
    if (iequals(name, framing)) return true;
  return false;
}

// "Bearer abc" -> "abc": the part of a value that names a credential.
std::string_view last_word(std::string_view value) {
  const auto space = value.rfind(' ');
  return space == std::string_view::npos ? value : value.substr(space + 1);
}

nlohmann::json echoed_headers(const plain_request& request) {
  nlohmann::json headers = nlohmann::json::object();
  for (const auto& [name, value] : request.headers) {
    nlohmann::json& field = headers[name];
    field = field.is_null() ? nlohmann::json(value) : nlohmann::json(field.get<std::string>() + ", " + value);
  }
  return headers;
}

std::string escaped_every_byte(std::string_view value) {
  std::string out = "\"";
  for (unsigned char c : value) {
    out += "\\u00";
    out += echo_hex[c >> 4];
    out += echo_hex[c & 15];
  }
  return out + "\"";
}

}  // namespace

parsed_echo parse_echo(const nlohmann::json& body) {
  const auto fail = [](std::string why) { return parsed_echo{std::nullopt, std::move(why)}; };
  if (!body.is_object()) return fail("the body must be a JSON object");
  for (auto it = body.begin(); it != body.end(); ++it)
    if (it.key() != "forms") return fail("unknown member " + it.key());
  const auto forms = body.find("forms");
  if (forms == body.end() || !forms->is_array()) return fail("forms must be an array of form names");
  std::vector<echo_form> out;
  for (const auto& item : *forms) {
    std::optional<echo_form> form;
    if (item.is_string())
      for (const auto& [f, name] : echo_form_names)
        if (name == item.get_ref<const std::string&>()) form = f;
    if (!form)
      return fail("each form must be one of body, json_escaped, upper, split, percent, name, base64, base64url");
    out.push_back(*form);
  }
  return parsed_echo{std::move(out), {}};
}

nlohmann::json echo_json(const std::vector<echo_form>& forms) {
  nlohmann::json list = nlohmann::json::array();
  for (const auto form : forms)
    for (const auto& [f, name] : echo_form_names)
      if (f == form) list.push_back(name);
  return nlohmann::json{{"forms", std::move(list)}};
}

void apply_echo(const std::vector<echo_form>& forms, const plain_request& request, plain_reply& reply) {
  if (forms.empty()) return;
  // The reply's own JSON keeps its members; a body that is not an object is kept under "reply".
  auto doc = nlohmann::json::parse(reply.body, nullptr, false);
  if (!doc.is_object()) doc = nlohmann::json{{"reply", reply.body}};
  bool body_changed = false;
  std::string escaped;  // the json_escaped member, written by hand: a JSON library would not escape letters
  header_list added;
  for (const auto form : forms) {
    switch (form) {
      case echo_form::body:
        doc["echo"] = {{"method", request.method}, {"target", request.target}, {"headers", echoed_headers(request)}};
        body_changed = true;
        break;
      case echo_form::json_escaped:
        escaped = "{";
        for (const auto& [name, value] : request.headers) {
          if (escaped.size() > 1) escaped += ',';
          escaped += json_text(name) + ":" + escaped_every_byte(value);
        }
        escaped += "}";
        body_changed = true;
        break;
      case echo_form::upper:
        for (const auto& [name, value] : request.headers) added.emplace_back("X-Echo-Upper-" + name, echo_upper(value));
        break;
      case echo_form::split:
        for (const auto& [name, value] : request.headers) {
          if (value.size() < 2) continue;
          // Halves without a space at either end, which a parser would trim.
          auto half = value.size() / 2;
          while (half + 1 < value.size() && (value[half - 1] == ' ' || value[half] == ' ')) ++half;
          if (value[half - 1] == ' ' || value[half] == ' ') continue;
          added.emplace_back("X-Echo-Split-" + name, value.substr(0, half));
          added.emplace_back("X-Echo-Split-" + name, value.substr(half));
        }
        break;
      case echo_form::percent:
        for (const auto& [name, value] : request.headers) {
          std::string encoded;
          for (unsigned char c : value) {
            encoded += '%';
            encoded += echo_hex[c >> 4];
            encoded += echo_hex[c & 15];
          }
          added.emplace_back("X-Echo-Percent-" + name, std::move(encoded));
        }
        break;
      case echo_form::name:
        for (const auto& [name, value] : request.headers) {
          const auto word = last_word(value);
          if (valid_header_name(word) && !framing_name(word)) added.emplace_back(std::string(word), name);
        }
        break;
      case echo_form::base64:
      case echo_form::base64url:
        for (const auto& [name, value] : request.headers) {
          const bool url = form == echo_form::base64url;
          added.emplace_back((url ? "X-Echo-Base64url-" : "X-Echo-Base64-") + name, encode_base64(value, url));
        }
        break;
    }
  }
  if (body_changed) {
    reply.body = json_text(doc);
    if (!escaped.empty()) {
      // Before the closing brace: the object has at least "reply" or its own members, or none.
      reply.body.pop_back();
      if (reply.body.size() > 1) reply.body += ',';
      reply.body += "\"echo_escaped\":" + escaped + "}";
    }
  }
  reply.headers.insert(reply.headers.end(), added.begin(), added.end());
}

}  // namespace demo_provider
