// Every route the gateway serves, in one table: its path template, method,
// audience and the member of App that serves it. Adding a route is one entry
// here and its handler; App::match_route is the only way a request finds one,
// and the OpenAPI document is tested against this list (tests/http/openapi_tests.cpp).
#include "service/api/app.hpp"

#include <array>

namespace gw {

std::span<const App::Route> App::routes() {
  // Who may call each route is part of its entry (Audience): nothing is
  // served to a caller the table does not name. No two templates match the
  // same path, so the order does not matter.
  static constexpr std::array table{
      Route{RouteSpec{.name = "healthz", .method = "GET", .path = "/healthz",
                      .audience = Audience::anyone}, &App::healthz},
      Route{RouteSpec{.name = "readyz", .method = "GET", .path = "/readyz",
                      .audience = Audience::anyone}, &App::readyz},
      Route{RouteSpec{.name = "metrics", .method = "GET", .path = "/metrics",
                      .audience = Audience::anyone}, &App::metrics},
      Route{RouteSpec{.name = "openapi", .method = "GET", .path = "/openapi.json",
                      .audience = Audience::anyone}, &App::openapi},
      // The operator page (gateway/ui/): static files, no data, no token.
      Route{RouteSpec{.name = "ui", .method = "GET", .path = "/ui", .audience = Audience::anyone}, &App::ui_asset},
      Route{RouteSpec{.name = "ui_script", .method = "GET", .path = "/ui/app.js",
                      .audience = Audience::anyone}, &App::ui_asset},
      Route{RouteSpec{.name = "ui_style", .method = "GET", .path = "/ui/ui.css",
                      .audience = Audience::anyone}, &App::ui_asset},
      Route{RouteSpec{.name = "claim", .method = "POST",
                      .path = "/v1/tenants/{tenant}/tasks/{task}/claim", .audience = Audience::agent}, &App::claim},
      Route{RouteSpec{.name = "renew", .method = "POST",
                      .path = "/v1/tenants/{tenant}/tasks/{task}/renew", .audience = Audience::agent}, &App::renew},
      Route{RouteSpec{.name = "release", .method = "POST",
                      .path = "/v1/tenants/{tenant}/tasks/{task}/release", .audience = Audience::agent}, &App::release},
      Route{RouteSpec{.name = "task", .method = "GET", .path = "/v1/tenants/{tenant}/tasks/{task}",
                      .audience = Audience::agent_or_operator}, &App::task_view},
      Route{RouteSpec{.name = "operation", .method = "GET",
                      .path = "/v1/tenants/{tenant}/tasks/{task}/operations/{id}", .audience = Audience::agent}, &App::operation_receipt},
      // Any method: the provider's rules decide what is protected. With and
      // without a path after the provider's name (its base path).
      Route{RouteSpec{.name = "proxy", .method = "",
                      .path = "/v1/tenants/{tenant}/tasks/{task}/providers/{provider}", .audience = Audience::agent}, &App::proxy},
      Route{RouteSpec{.name = "proxy", .method = "",
                      .path = "/v1/tenants/{tenant}/tasks/{task}/providers/{provider}/{path}", .audience = Audience::agent,
                      .rest = true}, &App::proxy},
      Route{RouteSpec{.name = "webhook", .method = "POST", .path = "/v1/webhooks/{provider}",
                      .audience = Audience::provider}, &App::webhook},
      Route{RouteSpec{.name = "admin_held", .method = "GET", .path = "/v1/admin/held",
                      .audience = Audience::operator_}, &App::held_operations},
      Route{RouteSpec{.name = "admin_rejections", .method = "GET",
                      .path = "/v1/admin/rejections", .audience = Audience::operator_}, &App::rejections},
      Route{RouteSpec{.name = "admin_webhooks", .method = "GET", .path = "/v1/admin/webhooks",
                      .audience = Audience::operator_}, &App::unmatched_webhooks},
      Route{RouteSpec{.name = "admin_rotate_realm", .method = "POST",
                      .path = "/v1/admin/authority/rotate-realm", .audience = Audience::operator_}, &App::rotate_realm},
      Route{RouteSpec{.name = "admin_revoke", .method = "POST",
                      .path = "/v1/admin/tasks/{tenant}/{task}/revoke", .audience = Audience::operator_}, &App::revoke_task},
      Route{RouteSpec{.name = "admin_operation", .method = "GET",
                      .path = "/v1/admin/operations/{tenant}/{task}/{id}", .audience = Audience::operator_}, &App::operation_detail},
      Route{RouteSpec{.name = "admin_resolve", .method = "POST",
                      .path = "/v1/admin/operations/{tenant}/{task}/{id}/resolve", .audience = Audience::operator_}, &App::resolve_operation},
      Route{RouteSpec{.name = "admin_reconcile", .method = "POST",
                      .path = "/v1/admin/operations/{tenant}/{task}/{id}/reconcile", .audience = Audience::operator_,
                      .gate = RouteGate::providers}, &App::reconcile_operation},
      Route{RouteSpec{.name = "admin_operation", .method = "GET", .path = "/v1/admin/operation",
                      .audience = Audience::operator_, .scope_in_query = true}, &App::operation_detail},
      Route{RouteSpec{.name = "admin_resolve", .method = "POST",
                      .path = "/v1/admin/operation/resolve", .audience = Audience::operator_, .scope_in_query = true}, &App::resolve_operation},
      Route{RouteSpec{.name = "admin_reconcile", .method = "POST",
                      .path = "/v1/admin/operation/reconcile", .audience = Audience::operator_, .gate = RouteGate::providers,
                      .scope_in_query = true}, &App::reconcile_operation},
      Route{RouteSpec{.name = "admin_clock", .method = "POST", .path = "/v1/admin/clock",
                      .audience = Audience::operator_, .gate = RouteGate::manual_clock}, &App::set_clock},
  };
  return table;
}

}  // namespace gw
