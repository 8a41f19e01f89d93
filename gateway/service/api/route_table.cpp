#include "service/api/route_table.hpp"

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
    RouteSpec{RouteId::admin_operation, "admin_operation", "GET", "/v1/admin/operation", false, RouteGate::always, true},
    RouteSpec{RouteId::admin_resolve, "admin_resolve", "POST", "/v1/admin/operation/resolve", false, RouteGate::always,
              true},
    RouteSpec{RouteId::admin_reconcile, "admin_reconcile", "POST", "/v1/admin/operation/reconcile", false,
              RouteGate::providers, true},
    RouteSpec{RouteId::admin_clock, "admin_clock", "POST", "/v1/admin/clock", false, RouteGate::manual_clock},
};

// A template's segments; an empty one is a {parameter}.
std::vector<std::string_view> template_parts(const RouteSpec& route) {
  std::vector<std::string_view> parts;
  std::string_view rest = route.path.substr(1);  // after the leading '/'
  while (true) {
    const auto slash = rest.find('/');
    const auto part = rest.substr(0, slash);
    parts.push_back(part.starts_with('{') ? std::string_view() : part);
    if (slash == std::string_view::npos) break;
    rest = rest.substr(slash + 1);
  }
  return parts;
}

bool matches_parts(const std::vector<std::string_view>& parts, bool rest, const std::vector<std::string>& segments) {
  if (rest ? segments.size() < parts.size() : segments.size() != parts.size()) return false;
  for (std::size_t i = 0; i < parts.size(); ++i)
    if (!parts[i].empty() && segments[i] != parts[i]) return false;
  return true;
}

}  // namespace

std::span<const RouteSpec> route_table() { return routes; }

bool matches(const RouteSpec& route, const std::vector<std::string>& segments) {
  return matches_parts(template_parts(route), route.rest, segments);
}

const RouteSpec* match_route(const std::vector<std::string>& segments) {
  // Split once: every request is matched against the whole table.
  static const auto parts = [] {
    std::array<std::vector<std::string_view>, routes.size()> out;
    for (std::size_t i = 0; i < routes.size(); ++i) out[i] = template_parts(routes[i]);
    return out;
  }();
  for (std::size_t i = 0; i < routes.size(); ++i)
    if (matches_parts(parts[i], routes[i].rest, segments)) return &routes[i];
  return nullptr;
}

}  // namespace gw
