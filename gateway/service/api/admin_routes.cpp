// Operator routes (spec section 4), operator tokens only: the held
// operations an on-call engineer has to act on.
#include "core/labels.hpp"
#include "http/problem.hpp"
#include "service/api/app.hpp"
#include "service/api/query.hpp"
#include "service/api/refusal.hpp"

#include <nlohmann/json.hpp>

namespace gw {
namespace {

// The held listing's cursor: [since_ms, tenant, task, id] of the last row.
HeldCursor decode_held_cursor(const std::string& text) {
  auto j = cursor_fields(text, 4);
  if (!j[0].is_number_integer() || !j[1].is_string() || !j[2].is_string() || !j[3].is_string()) bad_cursor();
  HeldCursor c{j[0].get<std::int64_t>(), j[1].get<std::string>(), j[2].get<std::string>(), j[3].get<std::string>()};
  if (!is_label(c.tenant) || !is_label(c.task) || !is_label(c.operation_id)) bad_cursor();
  return c;
}

HeldFilter held_filter(std::string_view query) {
  const auto q = parse_query(query, {"tenant", "task", "provider", "state", "reason", "older_than_ms", "limit", "cursor"});
  HeldFilter f;
  f.limit = page_limit(q);
  if (auto it = q.find("tenant"); it != q.end()) f.tenant = label_param(it->second, "tenant");
  if (auto it = q.find("task"); it != q.end()) f.task = label_param(it->second, "task");
  if (auto it = q.find("provider"); it != q.end()) f.provider = label_param(it->second, "provider");
  if (auto it = q.find("state"); it != q.end()) {
    auto s = parse_operation_state(it->second);
    if (s != OperationState::in_flight && s != OperationState::unknown)
      throw Refusal(Code::invalid_request, "state must be in_flight or unknown");
    f.state = s;
  }
  if (auto it = q.find("reason"); it != q.end()) {
    f.reason = parse_held_reason(it->second);
    if (!f.reason) throw Refusal(Code::invalid_request, "reason must be outcome_unknown or forward_abandoned");
  }
  if (auto it = q.find("older_than_ms"); it != q.end()) {
    f.older_than_ms = decimal_integer(it->second);
    if (!f.older_than_ms) throw Refusal(Code::invalid_request, "older_than_ms must be an integer from 0 to 2^63-1");
  }
  if (auto it = q.find("cursor"); it != q.end()) f.after = decode_held_cursor(it->second);
  return f;
}

}  // namespace

App::Reply App::held_operations(Call& call) {
  auto filter = held_filter(call.target.query);
  auto page = co_await db(call).once([&](Session& session) { return deps_.held.list(session, filter); });
  auto rows = nlohmann::json::array();
  for (const auto& op : page.operations)
    rows.push_back({{"tenant", op.scope.tenant},
                    {"task", op.scope.task},
                    {"operation", op.operation_id},
                    {"state", name(op.state)},
                    {"reason", why_held(op, page.now_ms)},
                    {"provider", op.provider},
                    {"method", op.method},
                    {"target", op.target},
                    {"upstream_key", op.upstream_key},
                    {"attempts", op.attempts},
                    {"held_since_ms", op.since_ms},
                    {"held_for_ms", page.now_ms - op.since_ms},
                    {"forward_deadline_ms", op.forward_deadline_ms ? nlohmann::json(*op.forward_deadline_ms)
                                                                   : nlohmann::json(nullptr)}});
  nlohmann::json body{{"held", rows}, {"now_ms", page.now_ms}};
  body["next_cursor"] = nullptr;
  if (page.more) {
    const auto& last = page.operations.back();
    body["next_cursor"] =
        encode_cursor(nlohmann::json::array({last.since_ms, last.scope.tenant, last.scope.task, last.operation_id}));
  }
  co_return http::json_reply(Code::ok, std::move(body));
}

}  // namespace gw
