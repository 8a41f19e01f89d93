// Grants and grant tokens (spec section 2). A token is the base64url (no
// padding) encoding of the compact JSON object
// {"realm","tenant","task","owner","epoch","secret"}.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace gw {

struct TaskScope {
  std::string tenant;
  std::string task;
  friend bool operator==(const TaskScope&, const TaskScope&) = default;
};

// What a grant names: public, safe to show and to log.
struct GrantIdentity {
  std::string realm;
  TaskScope scope;
  std::string owner;
  std::int64_t epoch = 0;
};

// What the bearer presents: the identity plus the secret made at grant time.
struct GrantToken {
  GrantIdentity identity;
  std::string secret;
};

std::string encode_grant_token(const GrantToken& token);

// nullopt for anything that is not exactly a token: bad base64url, not a JSON
// object, a missing or extra member, a member that is not a label/integer.
std::optional<GrantToken> decode_grant_token(std::string_view text);

// A fresh secret: 256 random bits, base64url, so it is itself a label.
std::string new_grant_secret();

}  // namespace gw
