#include "service/route_table.hpp"

#include <array>

namespace gw {
namespace {

constexpr std::array routes{
    RouteSpec{RouteId::healthz, "healthz", "GET", "/healthz"},
    RouteSpec{RouteId::readyz, "readyz", "GET", "/readyz"},
    RouteSpec{RouteId::metrics, "metrics", "GET", "/metrics"},
    RouteSpec{RouteId::openapi, "openapi", "GET", "/openapi.json"},
    // The operator page (gateway/ui/): static files, no data, no token.
    RouteSpec{RouteId::ui_page, "ui", "GET", "/ui"},
    RouteSpec{RouteId::ui_script, "ui_script", "GET", "/ui/app.js"},
    RouteSpec{RouteId::ui_style, "ui_style", "GET", "/ui/ui.css"},
    RouteSpec{RouteId::claim, "claim", "POST", "/v1/tenants/{tenant}/tasks/{task}/claim"},
    RouteSpec{RouteId::renew, "renew", "POST", "/v1/tenants/{tenant}/tasks/{task}/renew"},
    RouteSpec{RouteId::release, "release", "POST", "/v1/tenants/{tenant}/tasks/{task}/release"},
    RouteSpec{RouteId::task, "task", "GET", "/v1/tenants/{tenant}/tasks/{task}"},
    RouteSpec{RouteId::operation, "operation", "GET", "/v1/tenants/{tenant}/tasks/{task}/operations/{id}"},
    // Any method: the provider's rules decide what is protected. With and
    // without a path after the provider's name (its base path).
    RouteSpec{RouteId::proxy, "proxy", "", "/v1/tenants/{tenant}/tasks/{task}/providers/{provider}"},
    RouteSpec{RouteId::proxy, "proxy", "", "/v1/tenants/{tenant}/tasks/{task}/providers/{provider}/{path}", true},
    RouteSpec{RouteId::webhook, "webhook", "POST", "/v1/webhooks/{provider}"},
    RouteSpec{RouteId::admin_held, "admin_held", "GET", "/v1/admin/held"},
    RouteSpec{RouteId::admin_rejections, "admin_rejections", "GET", "/v1/admin/rejections"},
    RouteSpec{RouteId::admin_webhooks, "admin_webhooks", "GET", "/v1/admin/webhooks"},
    RouteSpec{RouteId::admin_rotate_realm, "admin_rotate_realm", "POST", "/v1/admin/authority/rotate-realm"},
    RouteSpec{RouteId::admin_revoke, "admin_revoke", "POST", "/v1/admin/tasks/{tenant}/{task}/revoke"},
    RouteSpec{RouteId::admin_operation, "admin_operation", "GET", "/v1/admin/operations/{tenant}/{task}/{id}"},
    RouteSpec{RouteId::admin_resolve, "admin_resolve", "POST", "/v1/admin/operations/{tenant}/{task}/{id}/resolve"},
    RouteSpec{RouteId::admin_reconcile, "admin_reconcile", "POST",
              "/v1/admin/operations/{tenant}/{task}/{id}/reconcile", false, RouteGate::providers},
    RouteSpec{RouteId::admin_clock, "admin_clock", "POST", "/v1/admin/clock", false, RouteGate::manual_clock},
};

}  // namespace

std::span<const RouteSpec> route_table() { return routes; }

bool matches(const RouteSpec& route, const std::vector<std::string>& segments) {
  std::string_view rest = route.path.substr(1);  // after the leading '/'
  std::size_t i = 0;
  while (true) {
    const auto slash = rest.find('/');
    const auto part = rest.substr(0, slash);
    if (i == segments.size()) return false;
    if (!part.starts_with('{') && segments[i] != part) return false;
    ++i;
    if (slash == std::string_view::npos) break;
    rest = rest.substr(slash + 1);
  }
  return i == segments.size() || route.rest;
}

const RouteSpec* match_route(const std::vector<std::string>& segments) {
  for (const auto& route : routes)
    if (matches(route, segments)) return &route;
  return nullptr;
}

}  // namespace gw
