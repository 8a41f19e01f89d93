#include "service/proxy/reply_screen.hpp"

#include "core/secret_scan.hpp"
#include "http/reply_head.hpp"
#include "service/proxy/forwarding.hpp"

#include <nlohmann/json.hpp>

namespace gw {

ProviderReply withheld_reply(unsigned status, const ProviderConfig& provider) {
  ProviderReply r;
  r.status = status;
  r.headers.emplace_back("Content-Type", "application/json");
  r.headers.emplace_back(std::string(withheld_header), std::string(withheld_reason));
  if (http::reply_has_body(status))
    r.body = nlohmann::json{{"provider", provider.name},
                            {"provider_reply", "withheld"},
                            {"provider_status", status},
                            {"detail",
                             "the provider's reply contained a provider credential, so its headers and body were "
                             "withheld; its status is kept"}}
                 .dump();
  return r;
}

ScreenedReply screen_reply(unsigned status, http::Fields provider_headers, std::string body,
                           const ProviderConfig& provider) {
  auto headers = reply_headers(std::move(provider_headers), provider);
  // Without a scan (a config put together by hand) nothing passes as clean.
  bool reveals = true;
  if (provider.credential_scan) {
    SecretScan::Pass pass(*provider.credential_scan);
    for (const auto& [name, value] : headers) pass.header(name, value);
    pass.body(body);
    reveals = pass.found();
  }
  if (!reveals) return {ProviderReply{status, std::move(headers), std::move(body)}, false};
  return {withheld_reply(status, provider), true};
}

}  // namespace gw
