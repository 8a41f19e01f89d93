// Probes, metrics, the OpenAPI document and the manual test clock (spec
// sections 6 and 7).
#include "core/labels.hpp"
#include "http/problem.hpp"
#include "service/ops/allocator.hpp"
#include "service/api/app.hpp"
#include "service/ops/build_info.hpp"
#include "service/ops/logger.hpp"
#include "service/api/json_body.hpp"
#include "service/api/openapi.hpp"
#include "service/api/refusal.hpp"

namespace gw {

App::Reply App::healthz(Call&) {
  co_return http::json_reply(Code::ok, {{"status", "up"}});
}

App::Reply App::readyz(Call& call) {
  const bool manual = deps_.authority.clock().manual();
  co_await db(call).once([&](Session& session) {
    deps_.authority.ping(session);
    return true;
  });
  co_return http::json_reply(Code::ok, {{"status", "ready"},
                                        {"authority", "reachable"},
                                        {"clock", manual ? "manual" : "database"}});
}

App::Reply App::metrics(Call&) {
  Metrics::Gauges g;
  const auto& pool = deps_.pool;
  g.pool_size = pool.size();
  g.in_use = pool.busy();
  g.open = pool.open_connections();
  g.direct_open = deps_.database.direct_open();
  g.direct_waiting = deps_.database.direct_waiting();
  g.direct_lent = deps_.database.direct_lent();
  g.queued_requests = pool.queued(Lane::request);
  g.queued_outcomes = pool.queued(Lane::outcome);
  g.interrupted = pool.interrupted();
  g.groups_committed = pool.groups_committed();
  g.grouped_decisions = pool.grouped_decisions();
  g.groups_split = pool.groups_split();
  g.database_reachable = pool.reachable();
  g.log_lines_dropped = Logger::process().dropped();
  g.version = build_version();
  g.commit = build_commit();
  g.allocator = malloc_library();
  http::Response r;
  r.set("Content-Type", "text/plain; version=0.0.4");
  r.set("Gateway-Status", "ok");
  r.body = deps_.metrics.render(g);
  co_return r;
}

// The document as built into the binary: it describes this binary's routes,
// whatever docs/ says today. No auth, like the probes: it holds no secrets.
App::Reply App::openapi(Call&) {
  http::Response r;
  r.set("Content-Type", "application/json");
  r.set("Gateway-Status", "ok");
  r.body = std::string(openapi_document());
  co_return r;
}

App::Reply App::set_clock(Call& call) {
  JsonBody body(call.request.body, {"now_ms"});
  auto now_ms = body.integer("now_ms");
  auto code = co_await db(call).once(
      [&](Session& session) { return deps_.authority.set_manual_clock(session, now_ms); });
  if (code != Code::ok)
    co_return http::problem(Code::authority_clock_rollback, "now_ms is below the authority's current time");
  co_return http::json_reply(Code::ok, {{"now_ms", now_ms}});
}

}  // namespace gw
