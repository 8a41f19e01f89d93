// Which request methods the proxy forwards, and whether they are fenced
// (spec section 3): fail closed, so nothing mutates a provider unfenced
// because of how its method was spelled.
#pragma once

#include <set>
#include <string>
#include <string_view>

namespace gw {

enum class MethodRule {
  unfenced,  // agent authentication only: listed in the provider's unfenced_methods
  fenced,    // grant, key, expected version and the ledger
  refused,   // never forwarded
};

// TRACE and CONNECT, in any case: TRACE makes a provider echo the request
// back, injected credential included; CONNECT asks for a tunnel.
bool never_forwarded(std::string_view method);

// Refused if never_forwarded; unfenced only on an exact, case-sensitive match
// in `unfenced` (methods are case-sensitive, and a provider framework that
// upper-cases "get" must not meet an unfenced "geT"); every other token is
// fenced: POST, "post", PURGE, any extension method.
MethodRule method_rule(std::string_view method, const std::set<std::string>& unfenced);

}  // namespace gw
