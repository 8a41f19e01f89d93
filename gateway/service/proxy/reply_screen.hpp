// What of a provider's reply reaches the agent and the ledger: the headers
// reply_headers keeps (service/proxy/forwarding.hpp) and the body, unless they
// reveal one of the provider's credentials, any tenant's, in any form
// core/secret_scan.hpp knows (an echo endpoint sends the request back). Then
// the whole reply is withheld: the provider's status is kept, since the
// outcome still counts (the provider did act), and headers and body are the
// gateway's own, saying why. What is withheld is what the ledger keeps, so
// neither a replay nor the database ever holds the credential. Pure; tested
// as tables in tests/service/reply_screen_tests.cpp.
#pragma once

#include "config/config.hpp"
#include "http/message.hpp"
#include "service/proxy/outcome_reply.hpp"

#include <string>

namespace gw {

// The header a withheld reply carries, and its value.
inline constexpr std::string_view withheld_header = "Gateway-Reply-Withheld";
inline constexpr std::string_view withheld_reason = "credential";

struct ScreenedReply {
  ProviderReply reply;
  bool withheld = false;
};

// One pass over the kept headers and the body (core/secret_scan.hpp).
ScreenedReply screen_reply(unsigned status, http::Fields provider_headers, std::string body,
                           const ProviderConfig& provider);

// What stands in for a withheld reply: Content-Type: application/json and
// Gateway-Reply-Withheld: credential, and a small JSON body naming the
// provider (none when the status carries no body: 1xx, 204, 304).
ProviderReply withheld_reply(unsigned status, const ProviderConfig& provider);

}  // namespace gw
