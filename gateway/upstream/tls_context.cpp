// TLS client context construction (see tls_context.hpp).
#include "upstream/tls_context.hpp"

#include <boost/asio/ssl/context.hpp>

namespace gw::upstream::detail {

std::shared_ptr<boost::asio::ssl::context> make_tls_context(const std::optional<std::string>& ca_file,
                                                            std::string& error) {
  namespace ssl = boost::asio::ssl;
  auto context = std::make_shared<ssl::context>(ssl::context::tls_client);
  boost::system::error_code ec;
  context->set_options(ssl::context::default_workarounds | ssl::context::no_sslv2 | ssl::context::no_sslv3 |
                           ssl::context::no_tlsv1 | ssl::context::no_tlsv1_1,
                       ec);
  if (!ec) context->set_verify_mode(ssl::verify_peer, ec);
  if (!ec) {
    if (ca_file)
      context->load_verify_file(*ca_file, ec);
    else
      context->set_default_verify_paths(ec);
  }
  if (ec) {
    error = ca_file ? "cannot load CA file " + *ca_file + ": " + ec.message()
                    : "cannot load the system trust store: " + ec.message();
    return nullptr;
  }
  return context;
}

}  // namespace gw::upstream::detail
