// Agent API for ownership (SPEC section 2): claim, renew, release and the
// diagnostic task view.
#include "http/problem.hpp"
#include "service/app.hpp"
#include "service/json_body.hpp"
#include "service/refusal.hpp"
#include "service/rejection.hpp"

namespace gw {
namespace {

nlohmann::json grant_json(const GrantIdentity& g, std::int64_t expires_at_ms) {
  return {{"realm", g.realm},   {"tenant", g.scope.tenant}, {"task", g.scope.task},
          {"owner", g.owner},   {"epoch", g.epoch},         {"expires_at_ms", expires_at_ms}};
}

}  // namespace

void App::claim(const CallPtr& call) {
  require_principal(*call);
  auto scope = task_scope(*call);
  require_agent_for(*call, scope.tenant);
  JsonBody body(call->request.body, {"owner", "lease_ms"});
  auto owner = body.label("owner");
  auto lease_ms = body.integer("lease_ms", 1);
  on_database(call, [this, scope, owner, lease_ms](Session& session) {
    auto r = deps_.authority.claim(session, scope, owner, lease_ms);
    if (r.code != Code::granted) return refusal(r.code);
    return http::json_reply(Code::granted, {{"grant", grant_json(r.grant, r.expires_at_ms)},
                                            {"grant_token", r.token},
                                            {"version", r.version}});
  });
}

void App::renew(const CallPtr& call) {
  require_principal(*call);
  auto scope = task_scope(*call);
  require_agent_for(*call, scope.tenant);
  JsonBody body(call->request.body, {"grant_token", "lease_ms"});
  auto token = body.grant_token("grant_token");
  auto lease_ms = body.integer("lease_ms", 1);
  on_database(call, [this, scope, token, lease_ms](Session& session) {
    auto r = deps_.authority.renew(session, scope, token, lease_ms);
    if (r.code != Code::renewed) return refusal(r.code);
    return http::json_reply(Code::renewed, {{"expires_at_ms", r.expires_at_ms}});
  });
}

void App::release(const CallPtr& call) {
  require_principal(*call);
  auto scope = task_scope(*call);
  require_agent_for(*call, scope.tenant);
  JsonBody body(call->request.body, {"grant_token"});
  auto token = body.grant_token("grant_token");
  on_database(call, [this, scope, token](Session& session) {
    auto r = deps_.authority.release(session, scope, token);
    if (r.code != Code::released) return refusal(r.code);
    return http::json_reply(Code::released, {{"expires_at_ms", r.expires_at_ms}});
  });
}

void App::task_view(const CallPtr& call) {
  const auto& principal = require_principal(*call);
  auto scope = task_scope(*call);
  if (principal.kind == Principal::Kind::agent) require_agent_for(*call, scope.tenant);
  on_database(call, [this, scope](Session& session) {
    auto v = deps_.authority.view(session, scope);
    if (!v) return http::problem(Code::not_found, "this task has never been claimed");
    nlohmann::json unresolved = nullptr;
    if (v->unresolved_operation)
      unresolved = {{"id", *v->unresolved_operation}, {"state", v->unresolved_state.value_or("")}};
    return http::json_reply(
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
  });
}

}  // namespace gw
