#include "service/api/json_body.hpp"

#include "core/labels.hpp"
#include "core/recent_values.hpp"
#include "core/strict_json.hpp"
#include "service/api/refusal.hpp"

namespace gw {

JsonBody::JsonBody(std::string_view text, std::set<std::string> allowed) {
  json_ = parse_strict_json(text);
  if (json_.is_discarded())
    throw Refusal(Code::invalid_request, "body is not valid JSON, or has a member twice");
  if (!json_.is_object()) throw Refusal(Code::invalid_request, "body must be a JSON object");
  for (auto it = json_.begin(); it != json_.end(); ++it)
    if (!allowed.count(it.key()))
      throw Refusal(Code::invalid_request, "unknown field '" + it.key() + "'");
}

const nlohmann::json& JsonBody::required(const std::string& key) const {
  auto it = json_.find(key);
  if (it == json_.end() || it->is_null())
    throw Refusal(Code::invalid_request, "field '" + key + "' is required");
  return *it;
}

std::string JsonBody::label(const std::string& key) const {
  const auto& v = required(key);
  if (!v.is_string() || !is_label(v.get_ref<const std::string&>()))
    throw Refusal(Code::invalid_request,
                    "field '" + key + "' must be a label: 1 to 80 printable ASCII characters (33-126)");
  return v.get<std::string>();
}

std::int64_t JsonBody::integer(const std::string& key, std::int64_t min, std::int64_t max) const {
  auto v = json_integer(required(key));
  if (!v || *v < min || *v > max)
    throw Refusal(Code::invalid_request, "field '" + key + "' must be an integer from " + std::to_string(min) +
                                               " to " + std::to_string(max));
  return *v;
}

std::string JsonBody::string(const std::string& key) const {
  const auto& v = required(key);
  if (!v.is_string()) throw Refusal(Code::invalid_request, "field '" + key + "' must be a string");
  return v.get<std::string>();
}

std::string JsonBody::text(const std::string& key, std::size_t max) const {
  const auto& v = required(key);
  const auto bad = [&] {
    return Refusal(Code::invalid_request, "field '" + key + "' must be a string of 1 to " + std::to_string(max) +
                                                " characters without control characters");
  };
  if (!v.is_string()) throw bad();
  const auto& s = v.get_ref<const std::string&>();
  if (s.empty() || s.size() > max) throw bad();
  for (unsigned char c : s)
    if (c < 0x20 || c == 0x7f) throw bad();
  return s;
}

GrantToken JsonBody::grant_token(const std::string& key) const {
  return parse_grant_token(string(key), "field '" + key + "'");
}

GrantToken parse_grant_token(std::string_view text, std::string_view where) {
  // An agent sends its grant with every mutation; decoding it (base64url, then
  // strict JSON) was a sixth of a protected request's instructions. Decoding
  // is a function of the text alone, so what it gave is kept for the text.
  thread_local RecentValues<GrantToken> recent;
  if (auto* seen = recent.find(text)) return *seen;
  auto token = decode_grant_token(text);
  if (!token)
    throw Refusal(Code::invalid_grant,
                    std::string(where) + " is not a grant token (base64url JSON with realm, tenant, "
                                         "task, owner, epoch and secret)");
  return recent.remember(text, std::move(*token));
}

}  // namespace gw
