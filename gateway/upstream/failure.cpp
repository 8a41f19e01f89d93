// Names of upstream failures, as they appear in logs and problem details.
#include "upstream/client.hpp"

namespace gw::upstream {

std::string_view to_string(Failure failure) {
  switch (failure) {
    case Failure::none: return "none";
    case Failure::queue_timeout: return "queue_timeout";
    case Failure::connect_failed: return "connect_failed";
    case Failure::tls_failed: return "tls_failed";
    case Failure::write_failed_unsent: return "write_failed_unsent";
    case Failure::failed_after_send: return "failed_after_send";
    case Failure::response_too_large: return "response_too_large";
  }
  return "unknown_failure";
}

}  // namespace gw::upstream
