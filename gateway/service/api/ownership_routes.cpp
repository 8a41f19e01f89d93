// Agent API for ownership (spec section 2): claim, renew, release and the
// diagnostic task view.
#include "http/problem.hpp"
#include "service/api/app.hpp"
#include "service/api/grant_reply.hpp"
#include "service/api/json_body.hpp"
#include "service/api/refusal.hpp"

namespace gw {

App::Reply App::claim(Call& call) {
  const auto& scope = *call.scope;
  JsonBody body(call.request.body, {"owner", "lease_ms"});
  auto owner = body.label("owner");
  auto lease_ms = body.integer("lease_ms", 1, deps_.config.leases.max_lease.count());
  auto r = co_await db(call).decide_direct(
      [&] { return deps_.authority.fresh_claim(scope, owner, lease_ms); },
      [&](Session& session, bool fresh_tried) {
        return deps_.authority.claim(session, scope, owner, lease_ms, fresh_tried);
      },
      [&](pqxx::dbtransaction& tx) { return deps_.authority.claim(tx, scope, owner, lease_ms); });
  if (r.code != Code::granted) co_return refusal(r.code);
  co_return http::json_text_reply(Code::granted, granted_body(r.grant, r.expires_at_ms, r.token, r.version));
}

App::Reply App::renew(Call& call) {
  const auto& scope = *call.scope;
  JsonBody body(call.request.body, {"grant_token", "lease_ms"});
  auto token = body.grant_token("grant_token");
  auto lease_ms = body.integer("lease_ms", 1, deps_.config.leases.max_lease.count());
  auto r = co_await db(call).decide(
      [&](Session& session) { return deps_.authority.renew(session, scope, token, lease_ms); });
  if (r.code != Code::renewed) co_return refusal(r.code);
  co_return http::json_reply(Code::renewed, {{"expires_at_ms", r.expires_at_ms}});
}

App::Reply App::release(Call& call) {
  const auto& scope = *call.scope;
  JsonBody body(call.request.body, {"grant_token"});
  auto token = body.grant_token("grant_token");
  auto r = co_await db(call).decide(
      [&](Session& session) { return deps_.authority.release(session, scope, token); });
  if (r.code != Code::released) co_return refusal(r.code);
  co_return http::json_reply(Code::released, {{"expires_at_ms", r.expires_at_ms}});
}

App::Reply App::task_view(Call& call) {
  const auto& scope = *call.scope;
  auto v = co_await db(call).once([&](Session& session) { return deps_.authority.view(session, scope); });
  if (!v) co_return not_found("task", "this task has never been claimed");
  nlohmann::json unresolved = nullptr;
  if (v->unresolved_operation)
    unresolved = {{"id", *v->unresolved_operation}, {"state", v->unresolved_state.value_or("")}};
  co_return http::json_reply(
        Code::ok, {{"diagnostic", true},
                   {"note", "a read for people; protected writes are decided at write time"},
                   {"realm", v->realm},
                   {"tenant", scope.tenant},
                   {"task", scope.task},
                   {"owner", v->owner},
                   {"epoch", v->epoch},
                   {"expires_at_ms", v->expires_at_ms},
                   {"now_ms", v->now_ms},
                   {"expired", v->now_ms >= v->expires_at_ms},
                   {"version", v->version},
                   {"unresolved_operation", unresolved}});
}

}  // namespace gw
