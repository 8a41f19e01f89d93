// Reading a JSON request body into typed fields. Every failure is a
// Rejection whose detail names the field; unknown fields are refused so a
// typo is an error, not a silently ignored default.
#pragma once

#include "core/grant.hpp"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <set>
#include <string>
#include <string_view>

namespace gw {

class JsonBody {
 public:
  // Requires a JSON object with no members outside `allowed`.
  JsonBody(std::string_view text, std::set<std::string> allowed);

  std::string label(const std::string& key) const;
  std::int64_t integer(const std::string& key, std::int64_t min = 0) const;
  std::string string(const std::string& key) const;
  // A grant token: a string that decodes, else invalid_grant.
  GrantToken grant_token(const std::string& key) const;

 private:
  const nlohmann::json& required(const std::string& key) const;
  nlohmann::json json_;
};

// The Fence-Grant header (or body member) as a token, else invalid_grant.
GrantToken parse_grant_token(std::string_view text, std::string_view where);

}  // namespace gw
