// Probes, metrics and the manual test clock (SPEC sections 6 and 7).
#include "core/labels.hpp"
#include "http/problem.hpp"
#include "service/app.hpp"
#include "service/json_body.hpp"
#include "service/rejection.hpp"

namespace gw {

void App::healthz(const CallPtr& call) {
  finish(call, http::json_reply(Code::ok, {{"status", "up"}}));
}

void App::readyz(const CallPtr& call) {
  const bool manual = deps_.authority.clock().manual();
  on_database(call, [this, manual](Session& session) {
    deps_.authority.ping(session);
    return http::json_reply(Code::ok, {{"status", "ready"},
                                       {"authority", "reachable"},
                                       {"clock", manual ? "manual" : "database"}});
  });
}

void App::metrics(const CallPtr& call) {
  http::Response r;
  r.set("Content-Type", "text/plain; version=0.0.4");
  r.set("Gateway-Status", "ok");
  r.body = deps_.metrics.render({deps_.pool.size(), deps_.pool.busy(), deps_.pool.queued()});
  finish(call, std::move(r));
}

void App::set_clock(const CallPtr& call) {
  require_operator(*call);
  JsonBody body(call->request.body, {"now_ms"});
  auto now_ms = body.integer("now_ms");
  on_database(call, [this, now_ms](Session& session) {
    if (deps_.authority.set_manual_clock(session, now_ms) != Code::ok)
      return http::problem(Code::authority_clock_rollback,
                           "now_ms is below the authority's current time");
    return http::json_reply(Code::ok, {{"now_ms", now_ms}});
  });
}

}  // namespace gw
