// Request handling shared by both provider kinds: auth, routing to the rules,
// Idempotency-Key replay, the status lookup by key, and the test records.
#include "provider_core.hpp"

#include "reply_headers.hpp"

#include <string_view>
#include <utility>

namespace demo_provider {
namespace {

bool is_mutation(std::string_view method) {
  return method == "POST" || method == "PUT" || method == "PATCH" || method == "DELETE";
}

plain_reply error_reply(unsigned status, std::string_view error) {
  return json_reply(status, {{"error", error}});
}

}  // namespace

provider_core::provider_core(core_config config)
    : config_(std::move(config)), rules_(make_rules(config_.kind)) {}

void provider_core::record(const plain_request& request) {
  requests_.push_back(request);
  ++in_progress_;
}

void provider_core::finished() { --in_progress_; }

plain_reply provider_core::answer(const plain_request& request, const fault& injected, clock::time_point now) {
  plain_reply reply;
  if (injected.mode == fault_mode::error_5xx)
    reply = injected_unavailable_reply();
  else if (injected.mode == fault_mode::reply_status)
    reply = injected_status_reply(injected);
  else
    reply = handle_business(request, now);
  reply.headers.insert(reply.headers.end(), reply_headers_.begin(), reply_headers_.end());
  return reply;
}

std::optional<std::string> provider_core::set_reply_headers(const nlohmann::json& body) {
  auto parsed = parse_reply_headers(body);
  if (!parsed.headers) return parsed.error;
  reply_headers_ = std::move(*parsed.headers);
  return std::nullopt;
}

bool provider_core::authorized(const plain_request& request) const {
  if (!config_.credential) return true;
  const auto value = find_header(request.headers, "Authorization");
  if (!value) return false;
  const auto space = value->find(' ');
  if (space == std::string_view::npos) return false;
  // The scheme name is case-insensitive (RFC 9110); the token is not.
  return iequals(value->substr(0, space), "Bearer") && value->substr(space + 1) == *config_.credential;
}

plain_reply provider_core::handle_business(const plain_request& request, clock::time_point now) {
  if (!authorized(request)) {
    plain_reply reply = error_reply(401, "unauthorized");
    reply.headers.emplace_back("WWW-Authenticate", "Bearer");
    return reply;
  }

  // Routes: /{collection}, /{collection}/{id}, /{collection}/by-key/{key}.
  const std::string_view path = path_of(request.target);
  const std::string prefix = "/" + std::string(rules_->collection());
  if (!path.starts_with(prefix)) return error_reply(404, "not_found");
  std::string_view rest = path.substr(prefix.size());
  if (!rest.empty() && rest.front() != '/') return error_reply(404, "not_found");
  if (!rest.empty()) rest.remove_prefix(1);

  constexpr std::string_view by_key = "by-key/";
  if (rest.starts_with(by_key)) {
    if (request.method != "GET" && request.method != "HEAD") return error_reply(405, "method_not_allowed");
    // The key is the rest of the path, so a key holding '/' may come raw or as %2F.
    const auto key = percent_decode(rest.substr(by_key.size()));
    if (!key) return error_reply(400, "invalid_path");
    return lookup_by_key(*key, now);
  }
  if (rest.find('/') != std::string_view::npos) return error_reply(404, "not_found");
  const auto id = percent_decode(rest);
  if (!id) return error_reply(400, "invalid_path");
  return execute(request, *id, now);
}

plain_reply provider_core::execute(const plain_request& request, const std::string& id,
                                   clock::time_point now) {
  std::string key;
  if (is_mutation(request.method))
    if (const auto header = find_header(request.headers, "Idempotency-Key")) key = *header;

  if (!key.empty()) {
    if (const auto it = replies_by_key_.find(key); it != replies_by_key_.end()) {
      // Whatever the new body says: a repeated key gets the first answer, and
      // no second effect.
      return plain_reply{it->second.status, it->second.body, {{"Idempotent-Replayed", "true"}}};
    }
  }

  // HEAD is GET without the body, which the server leaves out.
  const std::string_view method = request.method == "HEAD" ? std::string_view("GET") : request.method;
  const rule_outcome outcome = rules_->apply(method, id, request.body);
  if (outcome.effect) {
    ++effects_;
    ++effects_by_key_[key];
  }
  plain_reply reply = json_reply(outcome.status, outcome.body);
  if (!key.empty() && outcome.remember)
    replies_by_key_.emplace(key, stored_reply{outcome.status, reply.body, now});
  return reply;
}

plain_reply provider_core::lookup_by_key(const std::string& key, clock::time_point now) const {
  const auto it = replies_by_key_.find(key);
  if (it == replies_by_key_.end() || now < it->second.executed_at + config_.settle)
    return json_reply(404, {{"state", "not_found"}});
  return json_reply(200, {{"state", "executed"},
                          {"status", it->second.status},
                          {"body", nlohmann::json::parse(it->second.body)}});
}

nlohmann::json provider_core::requests_json() const {
  nlohmann::json list = nlohmann::json::array();
  for (const plain_request& request : requests_) {
    nlohmann::json headers = nlohmann::json::object();
    for (const auto& [name, value] : request.headers) {
      // A repeated field is one field with its values comma-joined (RFC 9110).
      nlohmann::json& field = headers[name];
      field = field.is_null() ? nlohmann::json(value) : nlohmann::json(field.get<std::string>() + ", " + value);
    }
    list.push_back(nlohmann::json{{"method", request.method},
                                  {"target", request.target},
                                  {"headers", std::move(headers)},
                                  {"body", request.body}});
  }
  return nlohmann::json{{"requests", std::move(list)}};
}

nlohmann::json provider_core::effects_json() const {
  return nlohmann::json{{"effects", effects_}, {"by_key", effects_by_key_}};
}

nlohmann::json provider_core::activity_json() const {
  return nlohmann::json{{"in_progress", in_progress_}, {"held", holds_.held()}};
}

void provider_core::reset() {
  holds_.cancel_all();
  reply_headers_.clear();
  rules_->reset();
  faults_.clear();
  requests_.clear();
  replies_by_key_.clear();
  effects_ = 0;
  effects_by_key_.clear();
}

}  // namespace demo_provider
