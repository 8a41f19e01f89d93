// Bearer tokens: agents (bound to tenants) and operators. Config holds only
// SHA-256 hashes, so a leaked config file leaks no token.
#pragma once

#include "config/config.hpp"
#include "http/message.hpp"

#include <optional>
#include <set>
#include <string>
#include <unordered_map>

namespace gw {

struct Principal {
  enum class Kind { agent, operator_ } kind = Kind::agent;
  std::string name;
  std::set<std::string> tenants;  // agents only

  bool may_act_for(const std::string& tenant) const {
    return kind == Kind::agent && tenants.count(tenant) > 0;
  }
};

class Authenticator {
 public:
  explicit Authenticator(const Config& config);
  // nullopt: no `Authorization: Bearer` header, or a token nobody holds.
  std::optional<Principal> authenticate(const http::Request& request) const;

 private:
  std::unordered_map<std::string, Principal> by_hash_;
};

}  // namespace gw
