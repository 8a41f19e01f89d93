// Operator routes on one operation or task (spec section 4), operator tokens
// only: an operation's whole history and evidence, looking it up at its
// provider now, resolving it with evidence, ending a lease, rotating the
// realm after a restore, the rejection audit and unmatched webhooks. Every
// action is logged as one event line with the operator's name.
#include "core/digest.hpp"
#include "core/labels.hpp"
#include "http/problem.hpp"
#include "service/api/app.hpp"
#include "service/ops/event_log.hpp"
#include "service/api/json_body.hpp"
#include "service/api/operation_view.hpp"
#include "service/api/query.hpp"
#include "service/api/refusal.hpp"
#include "store/authority_guard.hpp"

#include <nlohmann/json.hpp>

namespace gw {
namespace {


template <class T>
nlohmann::json or_null(const std::optional<T>& v) {
  return v ? nlohmann::json(*v) : nlohmann::json(nullptr);
}

// A stored body as JSON text: its first body_preview_bytes (store/operator_store.hpp), bytes
// that are not UTF-8 replaced by U+FFFD (a JSON string must be UTF-8). The page shows it as text.
nlohmann::json body_text(const std::optional<std::string>& body) {
  if (!body) return nullptr;
  return nlohmann::json::parse(
      nlohmann::json(*body).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
}

// Whether body_text shows less than the whole body (its stored length).
bool body_cut(const std::optional<std::string>& body, const std::optional<std::int64_t>& length) {
  return body && length && *length > static_cast<std::int64_t>(body->size());
}

nlohmann::json operation_json(const OperationDetail& op) {
  auto attempts = nlohmann::json::array();
  for (const auto& a : op.attempts)
    attempts.push_back({{"attempt", a.attempt},
                        {"realm", a.grant.realm},
                        {"owner", a.grant.owner},
                        {"epoch", a.grant.epoch},
                        {"admitted_ms", a.admitted_ms},
                        {"outcome", a.outcome ? nlohmann::json(name(*a.outcome)) : nlohmann::json(nullptr)},
                        {"outcome_ms", or_null(a.outcome_ms)},
                        {"upstream_status", or_null(a.upstream_status)},
                        {"detail", or_null(a.detail)}});
  auto evidence = nlohmann::json::array();
  for (const auto& e : op.evidence)
    evidence.push_back({{"id", e.id},
                        {"attempt", e.attempt},
                        {"source", name(e.source)},
                        {"outcome", e.outcome ? nlohmann::json(name(*e.outcome)) : nlohmann::json(nullptr)},
                        {"upstream_status", or_null(e.upstream_status)},
                        {"detail", e.detail},
                        {"sha256", or_null(e.body_sha256)},
                        {"length", or_null(e.body_length)},
                        {"reference", or_null(e.reference)},
                        {"actor", or_null(e.actor)},
                        {"recorded_ms", e.recorded_ms},
                        {"count", e.count},
                        {"last_id", e.last_id},
                        {"last_recorded_ms", e.last_recorded_ms},
                        {"body", body_text(e.body)},
                        {"body_truncated", body_cut(e.body, e.body_length)}});
  nlohmann::json response = nullptr;
  if (op.reply)
    response = {{"status", op.reply->status},
                {"sha256", or_null(op.reply->sha256)},
                {"length", or_null(op.reply->length)},
                {"body", body_text(op.reply->body)},
                {"body_truncated", body_cut(op.reply->body, op.reply->length)}};
  return {{"tenant", op.scope.tenant},
          {"task", op.scope.task},
          {"id", op.operation_id},
          {"state", name(op.state)},
          {"held_reason", op.held_reason ? nlohmann::json(name(*op.held_reason)) : nlohmann::json(nullptr)},
          {"holds_task", op.task_open_operation == op.operation_id},
          {"method", op.method},
          {"provider", op.provider},
          {"target", op.target},
          {"fingerprint", op.fingerprint_hex},
          {"expected_version", op.expected_version},
          {"committed_version", or_null(op.committed_version)},
          {"task_version", op.task_version},
          {"upstream_key", op.upstream_key},
          {"created_ms", op.created_ms},
          {"updated_ms", op.updated_ms},
          {"forward_deadline_ms", or_null(op.forward_deadline_ms)},
          {"response", response},
          {"resolution", resolution_view(op.resolution)},
          {"attempts", attempts},
          {"evidence", evidence}};
}

// A cursor of `count` integers (authority ms and row ids).
std::vector<std::int64_t> cursor_ids(const std::string& text, std::size_t count) {
  std::vector<std::int64_t> out;
  for (const auto& v : cursor_fields(text, count)) {
    if (!v.is_number_integer()) bad_cursor();
    out.push_back(v.get<std::int64_t>());
  }
  return out;
}

}  // namespace

// /v1/admin/operations/{tenant}/{task}/{id}[/action]
App::Reply App::operation_detail(Call& call) {
  const auto& s = call.target.segments;
  const TaskScope scope{label_param(s[3], "tenant"), label_param(s[4], "task")};
  const auto id = label_param(s[5], "operation id");
  auto detail = co_await db(call).once([&](Session& db) { return deps_.operators.detail(db, scope, id); });
  if (!detail) co_return no_such_operation();
  co_return http::json_reply(Code::ok, {{"operation", operation_json(*detail)}, {"now_ms", detail->now_ms}});
}

App::Reply App::resolve_operation(Call& call) {
  const auto& who = *call.principal;  // an operator: admit() checked
  const auto& s = call.target.segments;
  const TaskScope scope{label_param(s[3], "tenant"), label_param(s[4], "task")};
  const auto id = label_param(s[5], "operation id");
  JsonBody body(call.request.body, {"outcome", "evidence", "note"});
  const auto outcome = parse_operation_state(body.string("outcome"));
  if (!outcome || (*outcome != OperationState::succeeded && *outcome != OperationState::rejected &&
                   *outcome != OperationState::not_executed))
    throw Refusal(Code::invalid_request, "outcome must be succeeded, rejected or not_executed");
  HeldResolution resolution;
  resolution.scope = scope;
  resolution.operation_id = id;
  resolution.source = EvidenceSource::operator_;
  resolution.outcome = *outcome;
  resolution.actor = who.name;
  resolution.reference = body.text("evidence", 1000);
  if (body.has("note")) resolution.note = body.text("note", 4000);

  auto resolved =
      co_await db(call).decide([&](Session& db) { return deps_.resolutions.resolve_held(db, resolution); });
  if (resolved.code != Code::resolved) {
    if (resolved.code == Code::not_found) co_return no_such_operation();
    if (resolved.code == Code::operation_not_held)
      co_return http::problem(Code::operation_not_held,
                              "the operation is " +
                                  std::string(resolved.found_state ? name(*resolved.found_state) : "unknown") +
                                  "; only a held operation can be resolved");
    if (resolved.code == Code::operation_in_flight)
      co_return http::problem(Code::operation_in_flight,
                              "the operation is being forwarded now and its forward deadline has not passed; "
                              "its own forwarder will settle it");
    co_return refusal(resolved.code);
  }
  log_event("operation_resolved", {{"request_id", call.request_id},
                                   {"tenant", scope.tenant},
                                   {"task", scope.task},
                                   {"operation", id},
                                   {"source", "operator"},
                                   {"operator", who.name},
                                   {"outcome", name(*outcome)},
                                   {"reference", resolution.reference},
                                   {"evidence", resolved.evidence_id},
                                   {"authority_ms", resolved.now_ms}});
  deps_.metrics.count_event("operations_resolved_by_operator");
  deps_.metrics.count_resolved("operator", name(*outcome));
  auto detail = co_await db(call).once([&](Session& db) { return deps_.operators.detail(db, scope, id); });
  co_return http::json_reply(Code::resolved, {{"operation", detail ? operation_json(*detail) : nlohmann::json(nullptr)},
                                              {"evidence", resolved.evidence_id}});
}

App::Reply App::reconcile_operation(Call& call) {
  const auto& who = *call.principal;  // an operator: admit() checked
  const auto& s = call.target.segments;
  const TaskScope scope{label_param(s[3], "tenant"), label_param(s[4], "task")};
  const auto id = label_param(s[5], "operation id");
  JsonBody body(call.request.body.empty() ? std::string_view("{}") : std::string_view(call.request.body), {});
  auto before = co_await db(call).once([&](Session& db) { return deps_.operators.detail(db, scope, id); });
  if (!before) co_return no_such_operation();
  if (!reconciler_->has_lookup(before->provider))
    co_return http::problem(Code::invalid_request,
                            "provider " + before->provider + " has no status lookup configured; resolve it instead");
  if (before->state != OperationState::unknown)
    co_return http::problem(Code::operation_not_held, "the operation is " + std::string(name(before->state)) +
                                                          "; only an operation held unknown is looked up");
  DueLookup due;
  due.scope = scope;
  due.operation_id = id;
  due.attempt = before->attempt_count;
  due.provider = before->provider;
  due.upstream_key = before->upstream_key;
  due.forward_deadline_ms = before->forward_deadline_ms;
  due.handed_out_ms = before->now_ms;
  log_event("operation_lookup_requested",
            {{"request_id", call.request_id}, {"tenant", scope.tenant}, {"task", scope.task}, {"operation", id},
             {"operator", who.name}});
  auto report = co_await reconciler_->look_up(due);
  auto after = co_await db(call).once([&](Session& db) { return deps_.operators.detail(db, scope, id); });
  const bool resolved = report.resolution == Code::resolved;
  co_return http::json_reply(
      Code::ok, {{"lookup",
                  {{"status", or_null(report.status)},
                   {"decision", resolved ? "resolved" : "held"},
                   {"outcome", report.outcome == OperationState::unknown ? nlohmann::json(nullptr)
                                                                         : nlohmann::json(name(report.outcome))},
                   {"detail", report.detail},
                   {"evidence", report.evidence_id}}},
                 {"operation", after ? operation_json(*after) : nlohmann::json(nullptr)}});
}

App::Reply App::revoke_task(Call& call) {
  const auto& who = *call.principal;  // an operator: admit() checked
  const auto& s = call.target.segments;
  const TaskScope scope{label_param(s[3], "tenant"), label_param(s[4], "task")};
  JsonBody body(call.request.body.empty() ? std::string_view("{}") : std::string_view(call.request.body), {});
  auto r = co_await db(call).decide([&](Session& db) { return deps_.operators.revoke(db, scope, who.name); });
  if (r.code == Code::not_found) co_return not_found("task", "this task has no lease to end");
  if (r.code != Code::revoked) co_return refusal(r.code);
  log_event("lease_revoked", {{"request_id", call.request_id},
                              {"tenant", scope.tenant},
                              {"task", scope.task},
                              {"operator", who.name},
                              {"owner", r.grant ? r.grant->owner : ""},
                              {"epoch", r.grant ? r.grant->epoch : 0},
                              {"authority_ms", r.now_ms}});
  co_return http::json_reply(Code::revoked,
                             {{"revoked", r.grant ? nlohmann::json{{"realm", r.grant->realm},
                                                                   {"owner", r.grant->owner},
                                                                   {"epoch", r.grant->epoch}}
                                                  : nlohmann::json(nullptr)},
                              {"expires_at_ms", r.expires_at_ms},
                              {"previous_expires_at_ms", r.previous_expires_at_ms}});
}

App::Reply App::rotate_realm(Call& call) {
  const auto& who = *call.principal;  // an operator: admit() checked
  JsonBody body(call.request.body.empty() ? std::string_view("{}") : std::string_view(call.request.body),
                {"expected_realm", "at_least_epoch"});
  RotationOptions options;
  if (body.has("expected_realm")) options.expected_realm = body.string("expected_realm");
  if (body.has("at_least_epoch")) options.at_least = body.integer("at_least_epoch", 1);
  // Also on a primary the regression guard refused: rotating is the way out
  // once what was in flight is reconciled (docs/deployment.md).
  auto r = co_await db(call).decide([&](Session& db) {
    AuthorityGuard::Override through_guard;
    return deps_.operators.rotate_realm(db, who.name, options);
  });
  if (r.code != Code::realm_rotated)
    co_return http::problem(r.code, "the realm is not expected_realm; nothing changed");
  log_event("realm_rotated", {{"request_id", call.request_id},
                              {"operator", who.name},
                              {"previous_realm", r.previous_realm},
                              {"realm", r.realm},
                              {"next_epoch", r.next_epoch},
                              {"leases_ended", r.leases_ended},
                              {"authority_ms", r.rotated_ms}});
  co_return http::json_reply(Code::realm_rotated, {{"realm", r.realm},
                                                   {"previous_realm", r.previous_realm},
                                                   {"next_epoch", r.next_epoch},
                                                   {"leases_ended", r.leases_ended},
                                                   {"rotated_ms", r.rotated_ms}});
}

App::Reply App::rejections(Call& call) {
  const auto q =
      parse_query(call.target.query, {"tenant", "task", "code", "since_ms", "newer_than_ms", "limit", "cursor"});
  RejectionFilter f;
  f.limit = page_limit(q);
  if (auto it = q.find("tenant"); it != q.end()) f.tenant = label_param(it->second, "tenant");
  if (auto it = q.find("task"); it != q.end()) f.task = label_param(it->second, "task");
  if (auto it = q.find("code"); it != q.end()) {
    f.code = parse_code(it->second);
    if (!f.code) throw Refusal(Code::invalid_request, "code is not one of the gateway's codes");
  }
  if (auto it = q.find("since_ms"); it != q.end()) {
    f.since_ms = decimal_integer(it->second);
    if (!f.since_ms) throw Refusal(Code::invalid_request, "since_ms must be an integer from 0 to 2^63-1");
  }
  if (auto it = q.find("newer_than_ms"); it != q.end()) {
    f.newer_than_ms = decimal_integer(it->second);
    if (!f.newer_than_ms)
      throw Refusal(Code::invalid_request, "newer_than_ms must be an integer from 0 to 2^63-1");
  }
  if (auto it = q.find("cursor"); it != q.end()) {
    auto ids = cursor_ids(it->second, 2);
    f.after = RejectionCursor{ids[0], ids[1]};
  }
  auto page = co_await db(call).once([&](Session& db) { return deps_.rejections.list(db, f); });
  auto rows = nlohmann::json::array();
  for (const auto& r : page.rejections) {
    const auto& x = r.rejection;
    rows.push_back({{"id", r.id},
                    {"tenant", x.scope.tenant},
                    {"task", x.scope.task},
                    {"operation", or_null(x.operation_id)},
                    {"realm", x.presented ? nlohmann::json(x.presented->realm) : nlohmann::json(nullptr)},
                    {"owner", x.presented ? nlohmann::json(x.presented->owner) : nlohmann::json(nullptr)},
                    {"epoch", x.presented ? nlohmann::json(x.presented->epoch) : nlohmann::json(nullptr)},
                    {"code", r.code_name},
                    {"method", x.method},
                    {"provider", x.provider},
                    {"target", x.target},
                    {"expected_version", or_null(x.expected_version)},
                    {"fingerprint", x.fingerprint ? nlohmann::json(to_hex(*x.fingerprint)) : nlohmann::json(nullptr)},
                    {"request_id", or_null(x.request_id)},
                    {"authority_ms", r.recorded_ms}});
  }
  nlohmann::json body{{"rejections", rows}, {"now_ms", page.now_ms}};
  body["next_cursor"] = nullptr;
  if (page.more) {
    const auto& last = page.rejections.back();
    body["next_cursor"] = encode_cursor(nlohmann::json::array({last.recorded_ms, last.id}));
  }
  co_return http::json_reply(Code::ok, std::move(body));
}

App::Reply App::unmatched_webhooks(Call& call) {
  const auto q = parse_query(call.target.query, {"provider", "limit", "cursor"});
  std::optional<std::string> provider;
  if (auto it = q.find("provider"); it != q.end()) provider = label_param(it->second, "provider");
  const unsigned limit = page_limit(q);
  std::optional<WebhookCursor> cursor;
  if (auto it = q.find("cursor"); it != q.end()) cursor = WebhookCursor{cursor_ids(it->second, 1)[0]};
  auto page =
      co_await db(call).once([&](Session& db) { return deps_.webhooks.list_unmatched(db, provider, limit, cursor); });
  auto rows = nlohmann::json::array();
  for (const auto& d : page.deliveries)
    rows.push_back({{"id", d.id},
                    {"provider", d.provider},
                    {"webhook_id", d.webhook_id},
                    {"status", d.status},
                    {"upstream_key", or_null(d.upstream_key)},
                    {"outcome", or_null(d.outcome)},
                    {"detail", or_null(d.detail)},
                    {"received_ms", d.received_ms},
                    {"sha256", d.body_sha256},
                    {"length", d.body.size()}});
  nlohmann::json body{{"webhooks", rows}};
  body["next_cursor"] = page.next ? nlohmann::json(encode_cursor(nlohmann::json::array({page.next->after_id}))) : nlohmann::json(nullptr);
  co_return http::json_reply(Code::ok, std::move(body));
}

}  // namespace gw
