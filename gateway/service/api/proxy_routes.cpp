// Protected mutations through the reverse proxy (spec section 3), top to
// bottom: validate -> admission transaction (the linearization point) ->
// forward -> outcome record -> reply. Unprotected methods are forwarded with
// agent authentication only. The outcome record itself is proxy/outcome_retry.cpp.
#include "core/digest.hpp"
#include "core/fingerprint.hpp"
#include "core/labels.hpp"
#include "core/methods.hpp"
#include "core/outcome.hpp"
#include "core/provider_path.hpp"
#include "core/trace_context.hpp"
#include "http/problem.hpp"
#include "service/api/app.hpp"
#include "service/ops/event_log.hpp"
#include "core/utc_time.hpp"
#include "service/proxy/forwarding.hpp"
#include "service/api/json_body.hpp"
#include "service/api/operation_view.hpp"
#include "service/proxy/outcome_reply.hpp"
#include "service/api/refusal.hpp"
#include "service/proxy/reply_screen.hpp"
#include "upstream/client.hpp"

namespace gw {
namespace {

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

// An unprotected request's reply: the provider's, less what must not cross,
// or withheld whole when it reveals a credential (service/proxy/reply_screen.hpp).
http::Response passthrough(upstream::Result result, const ProviderConfig& config, bool head, bool& withheld) {
  if (!result.response) {
    // Unfenced, so nothing is recorded or held either way; the agent is told
    // whether its request may have reached the provider.
    std::string detail = "provider " + config.name + " did not answer: " + std::string(upstream::to_string(result.failure));
    detail += result.request_bytes_sent ? "; the request was sent and may have been processed"
                                        : "; nothing was sent";
    return http::problem(Code::provider_unavailable, std::move(detail));
  }
  auto& r = *result.response;
  std::optional<std::string> length;  // read before the filter drops it
  if (head)
    if (auto l = http::find_header(r.headers, "Content-Length")) length = std::string(*l);
  auto screened = screen_reply(r.status, std::move(r.headers), std::move(r.body), config);
  withheld = screened.withheld;
  auto reply = provider_reply(r.status, std::move(screened.reply.headers), std::move(screened.reply.body));
  if (!withheld) reply.content_length_override = std::move(length);  // a withheld body is the gateway's own
  return reply;
}

// The headers a protected method needs, read in the spec's order; each refusal
// names its header. What was read before a refusal goes into the audit row.
struct ProtectedHeaders {
  GrantToken token;
  std::string key;
  std::int64_t expected_version = 0;
};

ProtectedHeaders read_protected(const http::Request& rq, RejectionRecord& audit) {
  auto grant = rq.header("Fence-Grant");
  if (!grant) throw Refusal(Code::invalid_grant, "Fence-Grant header required for " + rq.method);
  auto token = parse_grant_token(*grant, "Fence-Grant");
  audit.presented = token.identity;
  auto key = rq.header("Idempotency-Key");
  if (!key) throw Refusal(Code::missing_idempotency_key, "Idempotency-Key header required for " + rq.method);
  if (!is_label(*key))
    throw Refusal(Code::invalid_request, "Idempotency-Key must be a label: 1 to 80 printable ASCII characters");
  audit.operation_id = std::string(*key);
  auto version = rq.header("Expected-Version");
  if (!version) throw Refusal(Code::missing_expected_version, "Expected-Version header required for " + rq.method);
  const auto expected_version = decimal_integer(*version);
  if (!expected_version) throw Refusal(Code::invalid_request, "Expected-Version must be an integer from 0 to 2^63-1");
  return {std::move(token), std::string(*key), *expected_version};
}

}  // namespace

asio::awaitable<void> App::record_rejection(const RejectionRecord& rejection) {
  try {
    co_await deps_.database.once([&](Session& s) {
      deps_.rejections.record(s, rejection);
      return true;
    });
  } catch (const std::exception&) {
    // The agent still gets its refusal; the audit misses this one row.
    deps_.metrics.count_event("rejection_unrecorded");
  }
}

void App::reply_withheld(const Call& call, const std::string& provider, unsigned status) {
  // One line per withheld reply, naming the provider, never the credential.
  deps_.metrics.count_event("provider_reply_withheld");
  log_event(LogLevel::warn, "provider_reply_withheld",
            {{"request_id", call.request_id}, {"provider", provider}, {"provider_status", status},
             {"reason", "the reply contained a provider credential"}});
}

App::Reply App::proxy(Call& call) {
  // admit() chose the provider (one snapshot of its settings, kept to the
  // outcome), found the tenant's account there and checked the body's size.
  const auto& scope = *call.scope;
  const ProviderRoute& provider = *call.provider_route;
  const ProviderConfig& config = *provider.config;
  const std::string* credential = config.credential_for(scope.tenant);
  const auto& rq = call.request;

  const auto [rest, query] = split_provider_target(rq.target);
  // Whatever the method: a read that climbs out of the base path is as bad.
  if (auto why = provider_path_problem(rest, config.allowed_path_forms)) throw Refusal(Code::invalid_request, *why);
  const auto host = rq.header("Host");
  ForwardContext context{call.request_id, rq.remote, host ? std::optional<std::string>(*host) : std::nullopt};
  // The forward is the gateway's span in the caller's trace (or a new one).
  call.provider = config.name;
  call.span_id = random_hex(8);
  if (call.span_id == "0000000000000000") call.span_id.back() = '1';  // all-zero is invalid
  context.traceparent = format_traceparent(call.trace, call.span_id);
  context.tracestate = call.trace.tracestate;
  // The body joins the request at the forward, moved: nothing reads it after
  // the fingerprint, and it may be a megabyte.
  upstream::Request upstream{rq.method, upstream_target(config, rest, query), {}, {}};
  // Pooled connections are never shared between tenants (upstream::Request::partition).
  upstream.partition = scope.tenant;

  const auto rule = method_rule(rq.method, config.unfenced_methods);
  if (rule == MethodRule::refused)
    throw Refusal(Code::method_not_allowed, rq.method + " is never forwarded to a provider");
  if (rule == MethodRule::unfenced) {
    upstream.headers = upstream_headers(rq.headers, config, *credential, std::move(context), std::nullopt);
    upstream.body = std::move(call.request.body);
    // A read the caller asked for is safe to send again; an unfenced method
    // that is not one (configured) is not.
    upstream.resend_if_stale = rq.method == "GET" || rq.method == "HEAD";
    auto result = co_await forward(call, provider, std::move(upstream));
    bool withheld = false;
    auto reply = passthrough(std::move(result), config, rq.method == "HEAD", withheld);
    if (withheld) reply_withheld(call, config.name, reply.status);
    co_return reply;
  }

  // Validate everything before the authority is asked anything. A refusal
  // here is audited like the admission's own (an authenticated agent's
  // protected attempt), then answered.
  RejectionRecord audit;
  audit.scope = scope;
  audit.method = rq.method;
  audit.provider = config.name;
  audit.target = upstream.target;
  audit.request_id = call.request_id;
  std::optional<ProtectedHeaders> read;
  std::optional<Refusal> refused;
  try {
    read = read_protected(rq, audit);
  } catch (const Refusal& r) {
    refused = r;
  }
  if (refused) {
    audit.code = refused->code;
    co_await record_rejection(audit);
    throw *refused;
  }
  const auto& [token, key, expected_version] = *read;
  call.operation_id = key;
  call.epoch = token.identity.epoch;

  const AdmissionRequest admission{
      .scope = scope,
      .token = token,
      .operation_id = key,
      .fingerprint = payload_fingerprint({.method = rq.method,
                                          .provider = config.name,
                                          .target = std::string(rest) + std::string(query),
                                          .expected_version = expected_version,
                                          .body = rq.body}),
      .method = rq.method,
      .provider = config.name,
      .target = upstream.target,
      .expected_version = expected_version,
      .forward_budget_ms = (config.forward_budget() + deps_.config.recovery.forward_margin).count(),
      .request_id = call.request_id,  // the rejection audit names the request
  };
  const auto asked = std::chrono::steady_clock::now();
  auto admitted = co_await db(call).decide_direct(
      [&] { return deps_.ledger.new_admission(admission); },
      [&](Session& s, bool new_tried) { return deps_.ledger.admit(s, admission, new_tried); },
      [&](pqxx::dbtransaction& tx) { return deps_.ledger.admit(tx, admission); });
  deps_.metrics.observe_decision("admission", std::chrono::steady_clock::now() - asked);
  switch (admitted.decision.action) {
    case Admission::reject:
      if (admitted.decision.code == Code::unresolved_operation) co_return co_await unresolved_refusal(call, scope);
      co_return refusal(admitted.decision.code);
    case Admission::replay:
      co_return replay(*admitted.recorded);
    case Admission::admit_new:
    case Admission::readmit:
      break;
  }

  // Committed: from here on the request may be sent, and only now.
  call.attempt = admitted.attempt;
  const auto& id = token.identity;
  FenceHeaders fence{admitted.upstream_key, admitted.realm, id.epoch, id.owner};
  upstream.headers = upstream_headers(rq.headers, config, *credential, std::move(context), fence);
  upstream.body = std::move(call.request.body);
  auto result = co_await forward(call, provider, std::move(upstream));
  co_return co_await record(call, config, admission, admitted, std::move(result));
}

App::Reply App::unresolved_refusal(Call& call, const TaskScope& scope) {
  // Only the task's current owner gets here: the admission refuses with the
  // grant codes first (and another tenant's token is forbidden before that),
  // so naming the operation discloses nothing to anyone else. A read after
  // the decision, for people, like the task view: if it fails, or the
  // operation was settled meanwhile, the refusal goes out without it.
  std::optional<HeldOperation> holder;
  std::int64_t now_ms = 0;
  try {
    HeldFilter filter;
    filter.tenant = scope.tenant;
    filter.task = scope.task;
    filter.limit = 1;
    auto page = co_await db(call).once([&](Session& session) { return deps_.held.list(session, filter); });
    now_ms = page.now_ms;
    if (!page.operations.empty()) holder = std::move(page.operations.front());
  } catch (const std::exception&) {
    holder.reset();
  }
  if (!holder) co_return refusal(Code::unresolved_operation);
  const auto since = utc_text(holder->since_ms);  // authority time: any integer, the manual clock's too
  const auto why = why_held(*holder, now_ms);
  co_return http::problem(
      Code::unresolved_operation,
      "operation " + holder->operation_id + " holds this task (" + std::string(name(holder->state)) + ", " + why +
          ", since " + since + "): no other operation is admitted until its outcome is known (a provider lookup, "
          "a webhook or an operator settles it; its receipt shows when)",
      {{"unresolved_operation",
        {{"id", holder->operation_id},
         {"state", name(holder->state)},
         {"reason", why},
         {"held_since_ms", holder->since_ms},
         {"held_for_ms", now_ms - holder->since_ms}}}});
}

App::Reply App::operation_receipt(Call& call) {
  const auto& scope = *call.scope;
  const auto& id = call.target.segments[6];
  if (!is_label(id)) throw Refusal(Code::invalid_request, "operation id must be a label");
  auto grant = call.request.header("Fence-Grant");
  if (!grant) throw Refusal(Code::invalid_grant, "Fence-Grant header required");
  const auto token = parse_grant_token(*grant, "Fence-Grant");
  call.operation_id = id;
  auto r = co_await db(call).decide([&](Session& s) { return deps_.ledger.receipt(s, scope, token, id); });
  if (r.code == Code::not_found) co_return no_such_operation();
  if (r.code != Code::ok) co_return refusal(r.code);
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
  receipt["resolution"] = resolution_view(op.resolution);
  co_return http::json_reply(Code::ok, {{"operation", receipt}});
}

}  // namespace gw
