#include "gatewayctl/exit_codes.hpp"

#include "gatewayctl/format.hpp"

#include <nlohmann/json.hpp>

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

std::string error_text(const HttpReply& reply) {
  const auto p = read_problem(reply);
  std::string out = "error: " + escape_for_terminal(p.code) + ": " + escape_for_terminal(p.detail) + "\n";
  if (p.code == "unauthenticated")
    out += "hint: the token was not accepted; gatewayctl takes it from --token, --token-file or GATEWAY_TOKEN\n";
  else if (p.code == "forbidden")
    out += "hint: the admin routes need an operator token, not an agent token\n";
  else if (exit_for_status(reply.status) == Exit::gateway_error && !reply.request_id.empty())
    out += "hint: the gateway log has the cause under request id " + escape_for_terminal(reply.request_id) + "\n";
  else if (exit_for_status(reply.status) == Exit::no_reply)
    out += "hint: HTTP " + std::to_string(reply.status) + " is not an answer of the operator API; is --url the gateway?\n";
  return out;
}

}  // namespace gwctl
