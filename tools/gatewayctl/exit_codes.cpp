#include "gatewayctl/exit_codes.hpp"

#include "gatewayctl/format.hpp"

namespace gwctl {

int code_of(Exit e) { return static_cast<int>(e); }

Problem read_problem(const HttpReply& reply) {
  const auto body = nlohmann::json::parse(reply.body, nullptr, false);
  Problem p;
  if (body.is_object()) {
    if (auto c = body.find("code"); c != body.end() && c->is_string()) p.code = c->get<std::string>();
    if (auto d = body.find("detail"); d != body.end() && d->is_string()) p.detail = d->get<std::string>();
  }
  if (p.code.empty()) p.code = !reply.gateway_status.empty() ? reply.gateway_status : "http_" + std::to_string(reply.status);
  if (p.detail.empty()) {
    constexpr std::size_t shown = 200;
    p.detail = reply.body.empty() ? "HTTP " + std::to_string(reply.status) + " with an empty body"
                                  : "HTTP " + std::to_string(reply.status) + ": " + reply.body.substr(0, shown) +
                                        (reply.body.size() > shown ? "..." : "");
  }
  return p;
}

Exit exit_for_status(unsigned status) {
  if (status >= 200 && status < 300) return Exit::ok;
  if (status == 404) return Exit::not_found;
  if (status >= 400 && status < 500) return Exit::refused;
  if (status >= 500 && status < 600) return Exit::gateway_error;
  return Exit::no_reply;
}

namespace {

// The gateway's problem body, when the reply is one.
std::optional<nlohmann::ordered_json> gateway_problem(const HttpReply& reply) {
  if (reply.gateway_status.empty()) return std::nullopt;
  auto body = nlohmann::ordered_json::parse(reply.body, nullptr, false);
  if (!body.is_object()) return std::nullopt;
  return body;
}

// The gateway's 404 for a path no route matches. Gateways before the
// "missing" member said only "no such route".
bool route_missing(const HttpReply& reply) {
  const auto problem = gateway_problem(reply);
  if (!problem) return false;
  if (auto m = problem->find("missing"); m != problem->end()) return *m == "route";
  auto d = problem->find("detail");
  return d != problem->end() && *d == "no such route";
}

}  // namespace

Exit exit_for_reply(const HttpReply& reply) {
  const auto exit = exit_for_status(reply.status);
  if (exit == Exit::gateway_error) return exit;
  if (reply.gateway_status.empty()) return Exit::wrong_url;
  if (reply.status == 404 && route_missing(reply)) return Exit::wrong_url;
  return exit;
}

ErrorReport report_reply(const HttpReply& reply) {
  const auto p = read_problem(reply);
  ErrorReport r;
  r.exit = exit_for_reply(reply);
  r.code = p.code;
  r.detail = p.detail;
  r.http_status = reply.status;
  r.request_id = reply.request_id;
  r.problem = gateway_problem(reply);
  if (r.exit == Exit::wrong_url && reply.gateway_status.empty()) {
    r.code = "not_gateway";
    r.detail = "HTTP " + std::to_string(reply.status) + " without the gateway's Gateway-Status header: " + p.detail;
    r.hint = "another server answered: is --url the gateway? (http://host:port[/prefix], the part before /v1)";
  } else if (r.exit == Exit::wrong_url) {
    r.hint = "the gateway has no such route: is --url's path prefix right (the part before /v1)?";
  } else if (p.code == "unauthenticated") {
    r.hint = "the token was not accepted; gatewayctl takes it from --token, --token-file or GATEWAY_TOKEN";
  } else if (p.code == "forbidden") {
    r.hint = "the admin routes need an operator token, not an agent token";
  } else if (r.exit == Exit::gateway_error && !reply.request_id.empty()) {
    r.hint = "the gateway log has the cause under request id " + reply.request_id;
  }
  return r;
}

std::string format_error(const ErrorReport& r, bool json) {
  if (json) {
    auto null_if_empty = [](const std::string& s) {
      return s.empty() ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(s);
    };
    nlohmann::ordered_json error{
        {"code", r.code},
        {"detail", r.detail},
        {"exit_code", code_of(r.exit)},
        {"http_status", r.http_status ? nlohmann::ordered_json(r.http_status) : nlohmann::ordered_json(nullptr)},
        {"request_id", null_if_empty(r.request_id)},
        {"hint", null_if_empty(r.hint)},
        {"problem", r.problem ? *r.problem : nlohmann::ordered_json(nullptr)}};
    // Bytes that are not UTF-8 (a detail quoting a reply) are replaced, never thrown on.
    return nlohmann::ordered_json{{"error", std::move(error)}}.dump(-1, ' ', false,
                                                                   nlohmann::json::error_handler_t::replace) +
           "\n";
  }
  std::string out = "error: " + escape_for_terminal(r.code) + ": " + escape_for_terminal(r.detail) + "\n";
  if (!r.hint.empty()) out += "hint: " + escape_for_terminal(r.hint) + "\n";
  return out;
}

std::string error_text(const HttpReply& reply) { return format_error(report_reply(reply), false); }

}  // namespace gwctl
