// gatewayctl's exit codes, and the functions that turn a gateway reply (or
// the lack of one) into one of them with the error to print: a line for
// people, or one JSON object with --json.
// Documented in `gatewayctl --help` and docs/operations.md ("gatewayctl").
#pragma once

#include "gatewayctl/transport.hpp"

#include <nlohmann/json.hpp>

#include <optional>
#include <string>

namespace gwctl {

enum class Exit : int {
  ok = 0,
  refused = 1,        // a 4xx problem other than 404: the gateway said no
  usage = 2,          // bad flags or arguments, or an unreadable --token-file: nothing was sent
  no_reply = 3,       // cannot connect, timeout, or bytes that are not an HTTP reply / not the API's JSON
  not_found = 4,      // the gateway's 404 for a route it has: no such operation or task
  gateway_error = 5,  // 5xx: the gateway could not answer (authority_unavailable, internal_error)
  wrong_url = 6,      // --url does not lead to the operator API: the gateway's 404 for the route
                      // itself (a wrong path prefix), or a reply that is not the gateway's
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

// The exit code for a reply's status class: 2xx ok; 404 not_found; other
// 4xx refused; 5xx gateway_error; 1xx and 3xx are no API reply (no_reply).
Exit exit_for_status(unsigned status);

// The exit code for a whole reply: exit_for_status, except that a reply
// without the gateway's Gateway-Status header (another server answered) and
// the gateway's 404 for the route itself (`"missing": "route"`) are
// wrong_url. A 5xx stays gateway_error either way (a proxy in front of a
// gateway that is down: try again later).
Exit exit_for_reply(const HttpReply& reply);

// One error, whatever its source: a reply that is not 2xx, no reply, a bad
// reply, a usage error.
struct ErrorReport {
  Exit exit = Exit::no_reply;
  std::string code;    // a gateway code, or usage, unreachable, timeout, bad_reply, not_gateway
  std::string detail;
  std::string hint;    // "" when none; never the token
  unsigned http_status = 0;  // 0: no HTTP reply
  std::string request_id;    // the reply's X-Request-Id, "" when none
  std::optional<nlohmann::ordered_json> problem;  // the gateway's problem body, when it sent one
};

// The report for a reply that is not 2xx.
ErrorReport report_reply(const HttpReply& reply);

// For stderr, ending in '\n'. Text: "error: <code>: <detail>", then
// "hint: ..." when there is one (both escaped for the terminal). JSON: one
// line, {"error": {"code", "detail", "exit_code", "http_status" (null
// without a reply), "request_id" (null when none), "hint" (null when none),
// "problem" (the gateway's problem+json, null when none)}}.
std::string format_error(const ErrorReport& report, bool json);

// format_error(report_reply(reply), false).
std::string error_text(const HttpReply& reply);

}  // namespace gwctl
