// gatewayctl's exit codes, and the one function that turns a gateway reply
// into one of them with the "error: <code>: <detail>" line to print.
// Documented in `gatewayctl --help` and docs/operations.md ("gatewayctl").
#pragma once

#include "gatewayctl/transport.hpp"

#include <optional>
#include <string>

namespace gwctl {

enum class Exit : int {
  ok = 0,
  refused = 1,        // a 4xx problem other than 404: the gateway said no
  usage = 2,          // bad flags or arguments: nothing was sent
  no_reply = 3,       // cannot connect, timeout, or a reply that is not the API's
  not_found = 4,      // 404: no such operation or task (or no such route at that URL)
  gateway_error = 5,  // 5xx: the gateway could not answer (authority_unavailable, internal_error)
};

int code_of(Exit e);

// What a problem reply says. For a body that is not problem+json (a proxy's
// HTML page, say) the code is the Gateway-Status header or "http_<status>",
// and the detail the start of the body.
struct Problem {
  std::string code;
  std::string detail;
};
Problem read_problem(const HttpReply& reply);

// The exit code for a reply's status: 2xx ok; 404 not_found; other 4xx
// refused; 5xx gateway_error; 1xx and 3xx are no API reply (no_reply).
Exit exit_for_status(unsigned status);

// The lines for stderr about a reply that is not 2xx, ending in '\n': the
// error line first, then, for some, a hint (never the token itself).
std::string error_text(const HttpReply& reply);

}  // namespace gwctl
