#include "http/problem.hpp"

namespace gw::http {

Response json_text_reply(Code code, std::string body) {
  Response r;
  r.status = http_status(code);
  r.set("Content-Type", "application/json");
  r.set("Gateway-Status", std::string(name(code)));
  r.body = std::move(body);
  return r;
}

Response json_reply(Code code, nlohmann::json body) {
  body["code"] = name(code);
  return json_text_reply(code, body.dump());
}

Response problem(Code code, std::string detail, nlohmann::json extra) {
  nlohmann::json body = std::move(extra);
  body["type"] = "urn:write-gateway:code:" + std::string(name(code));
  body["title"] = title(code);
  body["status"] = http_status(code);
  body["code"] = name(code);
  body["detail"] = std::move(detail);
  Response r;
  r.status = http_status(code);
  r.set("Content-Type", "application/problem+json");
  r.set("Gateway-Status", std::string(name(code)));
  if (code == Code::authority_unavailable) r.set("Retry-After", "1");
  if (code == Code::unauthenticated) r.set("WWW-Authenticate", "Bearer");
  // Replace invalid UTF-8 rather than throw: details may quote client input.
  r.body = body.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  return r;
}

}  // namespace gw::http
