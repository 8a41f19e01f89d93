#include "service/auth.hpp"

#include "core/digest.hpp"

#include <array>
#include <atomic>

namespace gw {
namespace {

std::atomic<std::uint64_t> next_generation{1};

// Tokens this thread saw accepted lately. Hashing the token was about 6% of
// a pass-through's instructions, and an agent sends the same one on every
// request of a kept-alive connection. Only accepted tokens are kept (a
// stream of wrong ones cannot evict the right ones or grow anything), each
// with the generation of the Authenticator that accepted it, and compared
// in constant time.
struct RecentToken {
  std::uint64_t generation = 0;
  std::string token;
  std::shared_ptr<const Principal> principal;
};

struct RecentTokens {
  std::array<RecentToken, 4> entries;
  std::size_t next = 0;  // the entry the next accepted token replaces
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
  thread_local RecentTokens recent;
  for (const auto& entry : recent.entries)
    if (entry.generation == generation_ && constant_time_equal(entry.token, token)) return entry.principal;
  // Looking up by hash compares hashes, never the secret itself.
  auto it = by_digest_.find(sha256(token));
  if (it == by_digest_.end()) return nullptr;
  auto& slot = recent.entries[recent.next];
  recent.next = (recent.next + 1) % recent.entries.size();
  slot.generation = generation_;
  slot.token.assign(token.data(), token.size());
  slot.principal = it->second;
  return it->second;
}

}  // namespace gw
