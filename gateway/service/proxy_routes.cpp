// Protected mutations through the reverse proxy (SPEC section 3):
// validate -> admission transaction (the linearization point) -> forward ->
// outcome transaction -> reply. Unprotected methods are forwarded with agent
// authentication only. Each stage runs where it belongs: validation on the
// I/O thread, transactions on database workers, the exchange in the
// upstream client.
#include "core/digest.hpp"
#include "core/fingerprint.hpp"
#include "core/labels.hpp"
#include "core/outcome.hpp"
#include "http/problem.hpp"
#include "service/app.hpp"
#include "service/forwarding.hpp"
#include "service/json_body.hpp"
#include "service/outcome_reply.hpp"
#include "service/refusal.hpp"
#include "service/rejection.hpp"
#include "upstream/client.hpp"

#include <iostream>
#include <thread>

namespace gw {
namespace {

http::Fields to_fields(const std::vector<upstream::Header>& headers) {
  http::Fields out;
  for (const auto& h : headers) out.emplace_back(h.name, h.value);
  return out;
}

std::vector<upstream::Header> to_upstream(const http::Fields& fields) {
  std::vector<upstream::Header> out;
  for (const auto& [k, v] : fields) out.push_back({k, v});
  return out;
}

http::Response provider_reply(unsigned status, http::Fields headers, std::string body) {
  http::Response r;
  r.status = status;
  r.headers = std::move(headers);
  r.body = std::move(body);
  return r;
}

// A recorded provider reply, replayed byte for byte.
http::Response replay(const StoredOperation& op) {
  const auto& rec = *op.response;
  auto r = provider_reply(rec.status, headers_from_json(rec.headers_json), rec.body);
  r.set("Gateway-Status", "historical_retry");
  r.set("Idempotent-Replayed", "true");
  if (op.committed_version) r.set("Committed-Version", std::to_string(*op.committed_version));
  return r;
}


}  // namespace

struct App::ProxyCall {
  CallPtr call;
  const ProviderRoute* provider = nullptr;
  TaskScope scope;
  upstream::Request upstream;
  bool is_protected = false;
  // Protected only:
  GrantToken token;
  std::string operation_id;
  std::int64_t expected_version = 0;
  std::string fingerprint;
  int attempt = 0;
};

void App::proxy(const CallPtr& call) {
  require_principal(*call);
  auto scope = task_scope(*call);
  require_agent_for(*call, scope.tenant);
  const auto& segments = call->target.segments;
  if (!is_label(segments[6]))
    throw Rejection(Code::invalid_request, "provider in the path must be a label");
  auto found = providers_.find(segments[6]);
  if (found == providers_.end()) throw Rejection(Code::not_found, "no provider named '" + segments[6] + "'");

  auto p = std::make_shared<ProxyCall>();
  p->call = call;
  p->provider = &found->second;
  p->scope = scope;
  const auto& config = *p->provider->config;
  const auto& rq = call->request;
  if (rq.body.size() > config.max_request_body_bytes)
    throw Rejection(Code::payload_too_large, "request body exceeds this provider's " +
                                                 std::to_string(config.max_request_body_bytes) + " bytes");

  const auto [rest, query] = split_provider_target(rq.target);
  const std::string upstream_path = upstream_target(config, rest, query);

  p->is_protected = config.protected_methods.count(rq.method) > 0;
  if (p->is_protected) {
    auto grant = rq.header("Fence-Grant");
    if (!grant) throw Rejection(Code::invalid_grant, "Fence-Grant header required for " + rq.method);
    p->token = parse_grant_token(*grant, "Fence-Grant");
    auto key = rq.header("Idempotency-Key");
    if (!key) throw Rejection(Code::missing_idempotency_key, "Idempotency-Key header required for " + rq.method);
    if (!is_label(*key))
      throw Rejection(Code::invalid_request, "Idempotency-Key must be a label: 1 to 80 printable ASCII characters");
    p->operation_id = std::string(*key);
    auto version = rq.header("Expected-Version");
    if (!version) throw Rejection(Code::missing_expected_version, "Expected-Version header required for " + rq.method);
    auto parsed = decimal_integer(*version);
    if (!parsed) throw Rejection(Code::invalid_request, "Expected-Version must be an integer from 0 to 2^63-1");
    p->expected_version = *parsed;
    p->fingerprint = payload_fingerprint({rq.method, config.name, std::string(rest) + std::string(query),
                                          p->expected_version, rq.body});
  }
  ForwardContext context{call->request_id, rq.remote,
                         rq.header("Host") ? std::optional<std::string>(*rq.header("Host")) : std::nullopt};
  p->upstream.method = rq.method;
  p->upstream.target = upstream_path;
  p->upstream.body = rq.body;
  if (!p->is_protected) {
    p->upstream.headers = to_upstream(upstream_headers(rq.headers, config, context, std::nullopt));
    return forward(p);
  }

  on_database(call, [this, p, context](Session& session) -> std::optional<http::Response> {
    const auto& provider = *p->provider->config;
    AdmissionRequest a{p->scope, p->token, p->operation_id, p->fingerprint, p->upstream.method,
                       provider.name, p->upstream.target, p->expected_version,
                       (provider.forward_budget() + deps_.config.recovery.forward_margin).count()};
    auto admitted = deps_.ledger.admit(session, a);
    switch (admitted.decision.action) {
      case Admission::reject:
        return refusal(admitted.decision.code);
      case Admission::replay:
        return replay(*admitted.recorded);
      case Admission::admit_new:
      case Admission::readmit:
        break;
    }
    p->attempt = admitted.attempt;
    const auto& id = p->token.identity;
    FenceHeaders fence{admitted.upstream_key, admitted.realm, id.epoch, id.owner};
    p->upstream.headers =
        to_upstream(upstream_headers(p->call->request.headers, *p->provider->config, context, fence));
    // Committed: from here on the request may be sent, and only now.
    forward(p);
    return std::nullopt;
  });
}

void App::forward(const std::shared_ptr<ProxyCall>& p) {
  deps_.upstream->send(p->provider->endpoint, p->upstream, [this, p](upstream::Result result) {
    const auto& config = *p->provider->config;
    if (!p->is_protected) {
      if (!result.response)
        return finish(p->call, http::problem(Code::provider_unavailable,
                                             "provider " + config.name + " did not answer: " +
                                                 std::string(upstream::to_string(result.failure))));
      auto& r = *result.response;
      auto fields = to_fields(r.headers);
      auto reply = provider_reply(r.status, reply_headers(fields, config), std::move(r.body));
      if (p->call->request.method == "HEAD")
        if (auto length = http::find_header(fields, "Content-Length"))
          reply.content_length_override = std::string(*length);
      return finish(p->call, std::move(reply));
    }
    record(p, std::move(result));
  });
}

void App::record(const std::shared_ptr<ProxyCall>& p, upstream::Result result) {
  const auto& config = *p->provider->config;
  std::optional<unsigned> status;
  if (result.response) status = result.response->status;
  auto state = classify_outcome(config.outcomes, result.request_bytes_sent, status);

  OutcomeRecord outcome{p->scope, p->operation_id, p->attempt, state, std::nullopt,
                        result.response ? "provider replied " + std::to_string(*status)
                                        : std::string(upstream::to_string(result.failure)) + ": " + result.detail};
  std::optional<ProviderReply> reply;
  if (result.response) {
    auto& provider = *result.response;
    reply = ProviderReply{*status, reply_headers(to_fields(provider.headers), config), std::move(provider.body)};
    outcome.response = RecordedResponse{*status, headers_to_json(reply->headers), reply->body,
                                        sha256_hex(reply->body), static_cast<std::int64_t>(reply->body.size())};
  }
  on_database(
      p->call, [this, p, outcome = std::move(outcome),
                reply = std::move(reply)](Session& session) mutable -> std::optional<http::Response> {
    // The provider may have acted: losing this record would lose the effect,
    // so a database hiccup gets a few more tries. If they all fail, the
    // operation stays in flight for reconciliation and the agent is told the
    // outcome is unknown to it (never "nothing was forwarded": it was).
    OutcomeResult recorded;
    for (int attempt = 1;; ++attempt) {
      try {
        recorded = deps_.ledger.record_outcome(session, outcome, p->token);
        break;
      } catch (const AuthorityUnavailable& e) {
        if (attempt == 3) {
          std::cerr << "request " << p->call->request_id << ": outcome not recorded: " << e.what() << std::endl;
          return unrecorded_outcome_reply();
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(500));
      }
    }
    return outcome_reply(outcome.state, std::move(reply),
                         RecordedAttempt{recorded.recorded, recorded.reply_gate, recorded.version});
  }, unrecorded_outcome_reply());
}

void App::operation_receipt(const CallPtr& call) {
  require_principal(*call);
  auto scope = task_scope(*call);
  require_agent_for(*call, scope.tenant);
  const auto& id = call->target.segments[6];
  if (!is_label(id)) throw Rejection(Code::invalid_request, "operation id must be a label");
  auto grant = call->request.header("Fence-Grant");
  if (!grant) throw Rejection(Code::invalid_grant, "Fence-Grant header required");
  auto token = parse_grant_token(*grant, "Fence-Grant");
  on_database(call, [this, scope, token, id](Session& session) -> std::optional<http::Response> {
    auto r = deps_.ledger.receipt(session, scope, token, id);
    if (r.code == Code::not_found) return http::problem(Code::not_found, "no operation with this id on this task");
    if (r.code != Code::ok) return refusal(r.code);
    const auto& op = *r.operation;
    nlohmann::json receipt{{"id", id},
                           {"state", name(op.state)},
                           {"attempts", op.attempts},
                           {"method", op.method},
                           {"provider", op.provider},
                           {"target", op.target},
                           {"expected_version", op.expected_version},
                           {"committed_version", op.committed_version ? nlohmann::json(*op.committed_version) : nullptr}};
    if (op.response)
      receipt["response"] = {{"status", op.response->status},
                             {"sha256", op.response->body_sha256},
                             {"length", op.response->body_length}};
    return http::json_reply(Code::ok, {{"operation", receipt}});
  });
}

}  // namespace gw
