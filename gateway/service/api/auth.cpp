#include "service/api/auth.hpp"

#include "core/digest.hpp"
#include "core/recent_values.hpp"

#include <atomic>

namespace gw {
namespace {

std::atomic<std::uint64_t> next_generation{1};

// Tokens this thread saw accepted lately (core/recent_values.hpp): hashing
// the token was about 6% of a pass-through's instructions. Each is kept with
// the generation of the Authenticator that accepted it, so a reload's new
// one never answers from the old one's entries.
struct Accepted {
  std::uint64_t generation = 0;
  std::shared_ptr<const Principal> principal;
};

// Config checked the hash: 64 lower-case hex digits.
std::string digest_bytes(std::string_view hex) {
  const auto nibble = [](char c) { return c <= '9' ? c - '0' : c - 'a' + 10; };
  std::string out(hex.size() / 2, '\0');
  for (std::size_t i = 0; i < out.size(); ++i)
    out[i] = static_cast<char>(nibble(hex[2 * i]) * 16 + nibble(hex[2 * i + 1]));
  return out;
}

}  // namespace

Authenticator::Authenticator(const Config& config) : generation_(next_generation.fetch_add(1)) {
  for (const auto& a : config.agents)
    by_digest_[digest_bytes(a.token_sha256)] =
        std::make_shared<const Principal>(Principal{Principal::Kind::agent, a.name, a.tenants});
  for (const auto& o : config.operators)
    by_digest_[digest_bytes(o.token_sha256)] =
        std::make_shared<const Principal>(Principal{Principal::Kind::operator_, o.name, {}});
}

std::shared_ptr<const Principal> Authenticator::authenticate(const http::Request& request) const {
  auto header = request.header("Authorization");
  if (!header || header->size() <= 7 || !http::iequals(header->substr(0, 7), "Bearer "))
    return nullptr;
  auto token = header->substr(7);
  thread_local RecentValues<Accepted> recent;
  if (auto* seen = recent.find(token, [this](const Accepted& a) { return a.generation == generation_; }))
    return seen->principal;
  // Looking up by hash compares hashes, never the secret itself.
  auto it = by_digest_.find(sha256(token));
  if (it == by_digest_.end()) return nullptr;
  recent.remember(token, Accepted{generation_, it->second});
  return it->second;
}

}  // namespace gw
