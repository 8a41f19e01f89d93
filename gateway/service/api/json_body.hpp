// Reading a JSON request body into typed fields. Every failure is a
// Refusal whose detail names the field; unknown fields are refused so a
// typo is an error, not a silently ignored default.
#pragma once

#include "core/grant.hpp"
#include "core/labels.hpp"

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
  std::int64_t integer(const std::string& key, std::int64_t min = 0, std::int64_t max = max_integer) const;
  std::string string(const std::string& key) const;
  // Free text for people (a note, an evidence reference): 1 to `max` bytes
  // of UTF-8 with no control characters.
  std::string text(const std::string& key, std::size_t max) const;
  bool has(const std::string& key) const { return json_.contains(key) && !json_[key].is_null(); }
  // A grant token: a string that decodes, else invalid_grant.
  GrantToken grant_token(const std::string& key) const;

 private:
  const nlohmann::json& required(const std::string& key) const;
  nlohmann::json json_;
};

// The Fence-Grant header (or body member) as a token, else invalid_grant.
GrantToken parse_grant_token(std::string_view text, std::string_view where);

}  // namespace gw
