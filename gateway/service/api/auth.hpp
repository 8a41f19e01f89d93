// Bearer tokens: agents (bound to tenants) and operators. Config holds only
// SHA-256 hashes, so a leaked config file leaks no token.
#pragma once

#include "config/config.hpp"
#include "http/message.hpp"

#include <cstdint>
#include <memory>
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
  // Null: no `Authorization: Bearer` header, or a token nobody holds. The
  // principal is shared, not copied: this runs on every request.
  // Tokens a thread saw accepted lately are kept with their principal
  // (core/recent_values.hpp), so a kept-alive agent's token is hashed once,
  // not per request.
  std::shared_ptr<const Principal> authenticate(const http::Request& request) const;

 private:
  // Unique per instance, never reused: the recent-token entries of an
  // Authenticator a reload replaced never match its successor, even at the
  // same address.
  std::uint64_t generation_;
  // Keyed by the raw 32-byte SHA-256 of the token (config writes it in hex).
  std::unordered_map<std::string, std::shared_ptr<const Principal>> by_digest_;
};

}  // namespace gw
