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

}  // namespace

provider_core::provider_core(core_config config) : config_(std::move(config)) {
  if (config_.credentials.empty()) config_.credentials.emplace_back();
  for (const auto& credential : config_.credentials) accounts_[credential].rules = make_rules(config_.kind);
}

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
  apply_echo(echo_, request, reply);
  return reply;
}

std::optional<std::string> provider_core::set_echo(const nlohmann::json& body) {
  auto parsed = parse_echo(body);
  if (!parsed.forms) return parsed.error;
  echo_ = std::move(*parsed.forms);
  return std::nullopt;
}

std::optional<std::string> provider_core::set_reply_headers(const nlohmann::json& body) {
  auto parsed = parse_reply_headers(body);
  if (!parsed.headers) return parsed.error;
  reply_headers_ = std::move(*parsed.headers);
  return std::nullopt;
}

provider_core::account* provider_core::account_of(const plain_request& request) {
  if (const auto open = accounts_.find(""); open != accounts_.end()) return &open->second;
  const auto value = find_header(request.headers, "Authorization");
  if (!value) return nullptr;
  const auto space = value->find(' ');
  if (space == std::string_view::npos) return nullptr;
  // The scheme name is case-insensitive (RFC 9110); the token is not.
  if (!iequals(value->substr(0, space), "Bearer")) return nullptr;
  const auto it = accounts_.find(std::string(value->substr(space + 1)));
  return it == accounts_.end() ? nullptr : &it->second;
}

const provider_core::stored_reply* provider_core::find_reply(const std::string& key) const {
  for (const auto& [credential, a] : accounts_)
    if (const auto it = a.replies_by_key.find(key); it != a.replies_by_key.end()) return &it->second;
  return nullptr;
}

plain_reply provider_core::handle_business(const plain_request& request, clock::time_point now) {
  account* to = account_of(request);
  if (!to) {
    plain_reply reply = error_reply(401, "unauthorized");
    reply.headers.emplace_back("WWW-Authenticate", "Bearer");
    return reply;
  }

  // Routes: /{collection}, /{collection}/{id}, /{collection}/by-key/{key}.
  const std::string_view path = path_of(request.target);
  const std::string prefix = "/" + std::string(to->rules->collection());
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
    return lookup_by_key(*to, *key, now);
  }
  if (rest.find('/') != std::string_view::npos) return error_reply(404, "not_found");
  const auto id = percent_decode(rest);
  if (!id) return error_reply(400, "invalid_path");
  return execute(*to, request, *id, now);
}

plain_reply provider_core::execute(account& to, const plain_request& request, const std::string& id,
                                   clock::time_point now) {
  std::string key;
  if (is_mutation(request.method))
    if (const auto header = find_header(request.headers, "Idempotency-Key")) key = *header;

  if (!key.empty()) {
    if (const auto it = to.replies_by_key.find(key); it != to.replies_by_key.end()) {
      // Whatever the new body says: a repeated key gets the first answer, and
      // no second effect.
      return plain_reply{it->second.status, it->second.body, {{"Idempotent-Replayed", "true"}}};
    }
  }

  // HEAD is GET without the body, which the server leaves out.
  const std::string_view method = request.method == "HEAD" ? std::string_view("GET") : request.method;
  const rule_outcome outcome = to.rules->apply(method, id, request.body);
  if (outcome.effect) {
    ++effects_;
    ++effects_by_key_[key];
  }
  plain_reply reply = json_reply(outcome.status, outcome.body);
  if (!key.empty() && outcome.remember) {
    to.replies_by_key.emplace(key, stored_reply{outcome.status, reply.body, now});
    if (config_.webhooks) webhooks_queued_.push_back(webhook_event{next_webhook_id(), key, "executed", outcome.status});
  }
  return reply;
}

plain_reply provider_core::lookup_by_key(const account& in, const std::string& key, clock::time_point now) const {
  const auto it = in.replies_by_key.find(key);
  if (it == in.replies_by_key.end() || now < it->second.executed_at + config_.settle)
    return json_reply(404, {{"state", "not_found"}});
  return json_reply(200, {{"state", "executed"},
                          {"status", it->second.status},
                          {"body", nlohmann::json::parse(it->second.body)}});
}

std::string provider_core::next_webhook_id() {
  return config_.webhook_id_prefix + std::to_string(++webhook_sequence_);
}

std::variant<webhook_event, std::string> provider_core::queue_webhook(const nlohmann::json& body) {
  if (!body.is_object()) return std::string("the body must be a JSON object");
  for (auto it = body.begin(); it != body.end(); ++it)
    if (it.key() != "key" && it.key() != "status" && it.key() != "state" && it.key() != "id" &&
        it.key() != "signature" && it.key() != "timestamp_offset_s")
      return "unknown member " + it.key();
  auto text = [&](const char* name) -> std::optional<std::string> {
    const auto it = body.find(name);
    if (it == body.end() || !it->is_string() || it->get<std::string>().empty()) return std::nullopt;
    return it->get<std::string>();
  };
  webhook_event event;
  const auto key = text("key");
  if (!key) return std::string("key must be a non-empty string");
  event.key = *key;
  if (const auto it = body.find("status"); it != body.end()) {
    if (!it->is_number_unsigned() || it->get<std::uint64_t>() < 100 || it->get<std::uint64_t>() > 599)
      return std::string("status must be an integer from 100 to 599");
    event.status = it->get<unsigned>();
  } else if (const auto* done = find_reply(event.key)) {
    event.status = done->status;
  } else {
    return "status is required: nothing was executed under key " + event.key;
  }
  if (body.contains("state")) {
    const auto state = text("state");
    if (!state) return std::string("state must be a non-empty string");
    event.state = *state;
  }
  if (body.contains("id")) {
    const auto id = text("id");
    if (!id) return std::string("id must be a non-empty string");
    event.id = *id;
  } else {
    event.id = next_webhook_id();
  }
  if (body.contains("signature")) {
    const auto signing = text("signature");
    if (!signing || !signing_from_string(*signing)) return std::string("signature must be valid, bad or missing");
    event.signing = *signing_from_string(*signing);
  }
  if (const auto it = body.find("timestamp_offset_s"); it != body.end()) {
    if (!it->is_number_integer() || it->get<std::int64_t>() < -315'360'000 || it->get<std::int64_t>() > 315'360'000)
      return std::string("timestamp_offset_s must be an integer within ten years either way");
    event.timestamp_offset_s = it->get<std::int64_t>();
  }
  webhooks_queued_.push_back(event);
  return event;
}

std::vector<webhook_event> provider_core::take_webhooks() { return std::exchange(webhooks_queued_, {}); }

void provider_core::webhook_delivered(webhook_delivery delivery) { webhooks_delivered_.push_back(std::move(delivery)); }

nlohmann::json provider_core::webhooks_json() const {
  nlohmann::json delivered = nlohmann::json::array();
  for (const auto& d : webhooks_delivered_) delivered.push_back(delivery_json(d));
  return nlohmann::json{{"delivered", std::move(delivered)}, {"queued", webhooks_queued_.size()}};
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
                                  {"body", request.body},
                                  {"connection", request.connection}});
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
  echo_.clear();
  for (auto& [credential, a] : accounts_) {
    a.rules->reset();
    a.replies_by_key.clear();
  }
  faults_.clear();
  requests_.clear();
  effects_ = 0;
  effects_by_key_.clear();
  webhooks_queued_.clear();
  webhooks_delivered_.clear();
}

}  // namespace demo_provider
