#include "core/grant.hpp"

#include "core/base64url.hpp"
#include "core/digest.hpp"
#include "core/json_text.hpp"
#include "core/labels.hpp"
#include "core/strict_json.hpp"

#include <nlohmann/json.hpp>

namespace gw {

std::string encode_grant_token(const GrantToken& token) {
  // Written in place (one per claim), in this order, the bytes an
  // nlohmann::ordered_json of the same members dumps.
  const auto& id = token.identity;
  std::string text;
  text.reserve(64 + id.realm.size() + id.scope.tenant.size() + id.scope.task.size() + id.owner.size() +
               token.secret.size());
  JsonObjectWriter(text)
      .member("realm", id.realm)
      .member("tenant", id.scope.tenant)
      .member("task", id.scope.task)
      .member("owner", id.owner)
      .member("epoch", id.epoch)
      .member("secret", token.secret)
      .close();
  return base64url_encode(text);
}

std::optional<GrantToken> decode_grant_token(std::string_view text) {
  auto bytes = base64url_decode(text);
  if (!bytes) return std::nullopt;
  auto j = parse_strict_json(*bytes);
  if (!j.is_object() || j.size() != 6) return std::nullopt;
  GrantToken token;
  auto& id = token.identity;
  for (auto [key, out] : {std::pair{"realm", &id.realm}, {"tenant", &id.scope.tenant},
                          {"task", &id.scope.task}, {"owner", &id.owner}, {"secret", &token.secret}}) {
    auto it = j.find(key);
    if (it == j.end() || !it->is_string()) return std::nullopt;
    *out = it->get<std::string>();
    if (!is_label(*out)) return std::nullopt;
  }
  auto epoch = j.find("epoch");
  if (epoch == j.end()) return std::nullopt;
  auto value = json_integer(*epoch);
  if (!value) return std::nullopt;
  id.epoch = *value;
  return token;
}

std::string new_grant_secret() { return base64url_encode(random_bytes(32)); }

}  // namespace gw
