#include "service/auth.hpp"

#include "core/digest.hpp"

namespace gw {

Authenticator::Authenticator(const Config& config) {
  for (const auto& a : config.agents)
    by_hash_[a.token_sha256] = Principal{Principal::Kind::agent, a.name, a.tenants};
  for (const auto& o : config.operators)
    by_hash_[o.token_sha256] = Principal{Principal::Kind::operator_, o.name, {}};
}

std::optional<Principal> Authenticator::authenticate(const http::Request& request) const {
  auto header = request.header("Authorization");
  if (!header || header->size() <= 7 || !http::iequals(header->substr(0, 7), "Bearer "))
    return std::nullopt;
  auto token = header->substr(7);
  // Looking up by hash compares hashes, never the secret itself.
  auto it = by_hash_.find(sha256_hex(token));
  if (it == by_hash_.end()) return std::nullopt;
  return it->second;
}

}  // namespace gw
