// The TLS client context of one endpoint: peer verification against the
// system trust store or the endpoint's CA bundle, TLS 1.2 at least.
#pragma once

#include <memory>
#include <optional>
#include <string>

namespace boost::asio::ssl {
class context;
}

namespace gw::upstream::detail {

// Null with `error` set when the trust store or CA file cannot be loaded;
// connections to that endpoint then fail as tls_failed, nothing sent.
std::shared_ptr<boost::asio::ssl::context> make_tls_context(const std::optional<std::string>& ca_file,
                                                            std::string& error);

}  // namespace gw::upstream::detail
