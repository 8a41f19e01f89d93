#include "service/api/route_table.hpp"

#include <array>

namespace gw {
namespace {

// Who may call each route is part of its entry (Audience): nothing is served
// to a caller the table does not name.
constexpr std::array routes{
    RouteSpec{.id = RouteId::healthz, .name = "healthz", .method = "GET", .path = "/healthz",
              .audience = Audience::anyone},
    RouteSpec{.id = RouteId::readyz, .name = "readyz", .method = "GET", .path = "/readyz",
              .audience = Audience::anyone},
    RouteSpec{.id = RouteId::metrics, .name = "metrics", .method = "GET", .path = "/metrics",
              .audience = Audience::anyone},
    RouteSpec{.id = RouteId::openapi, .name = "openapi", .method = "GET", .path = "/openapi.json",
              .audience = Audience::anyone},
    // The operator page (gateway/ui/): static files, no data, no token.
    RouteSpec{.id = RouteId::ui_page, .name = "ui", .method = "GET", .path = "/ui", .audience = Audience::anyone},
    RouteSpec{.id = RouteId::ui_script, .name = "ui_script", .method = "GET", .path = "/ui/app.js",
              .audience = Audience::anyone},
    RouteSpec{.id = RouteId::ui_style, .name = "ui_style", .method = "GET", .path = "/ui/ui.css",
              .audience = Audience::anyone},
    RouteSpec{.id = RouteId::claim, .name = "claim", .method = "POST",
              .path = "/v1/tenants/{tenant}/tasks/{task}/claim", .audience = Audience::agent},
    RouteSpec{.id = RouteId::renew, .name = "renew", .method = "POST",
              .path = "/v1/tenants/{tenant}/tasks/{task}/renew", .audience = Audience::agent},
    RouteSpec{.id = RouteId::release, .name = "release", .method = "POST",
              .path = "/v1/tenants/{tenant}/tasks/{task}/release", .audience = Audience::agent},
    RouteSpec{.id = RouteId::task, .name = "task", .method = "GET", .path = "/v1/tenants/{tenant}/tasks/{task}",
              .audience = Audience::agent_or_operator},
    RouteSpec{.id = RouteId::operation, .name = "operation", .method = "GET",
              .path = "/v1/tenants/{tenant}/tasks/{task}/operations/{id}", .audience = Audience::agent},
    // Any method: the provider's rules decide what is protected. With and
    // without a path after the provider's name (its base path).
    RouteSpec{.id = RouteId::proxy, .name = "proxy", .method = "",
              .path = "/v1/tenants/{tenant}/tasks/{task}/providers/{provider}", .audience = Audience::agent},
    RouteSpec{.id = RouteId::proxy, .name = "proxy", .method = "",
              .path = "/v1/tenants/{tenant}/tasks/{task}/providers/{provider}/{path}", .audience = Audience::agent,
              .rest = true},
    RouteSpec{.id = RouteId::webhook, .name = "webhook", .method = "POST", .path = "/v1/webhooks/{provider}",
              .audience = Audience::provider},
    RouteSpec{.id = RouteId::admin_held, .name = "admin_held", .method = "GET", .path = "/v1/admin/held",
              .audience = Audience::operator_},
    RouteSpec{.id = RouteId::admin_rejections, .name = "admin_rejections", .method = "GET",
              .path = "/v1/admin/rejections", .audience = Audience::operator_},
    RouteSpec{.id = RouteId::admin_webhooks, .name = "admin_webhooks", .method = "GET", .path = "/v1/admin/webhooks",
              .audience = Audience::operator_},
    RouteSpec{.id = RouteId::admin_rotate_realm, .name = "admin_rotate_realm", .method = "POST",
              .path = "/v1/admin/authority/rotate-realm", .audience = Audience::operator_},
    RouteSpec{.id = RouteId::admin_revoke, .name = "admin_revoke", .method = "POST",
              .path = "/v1/admin/tasks/{tenant}/{task}/revoke", .audience = Audience::operator_},
    RouteSpec{.id = RouteId::admin_operation, .name = "admin_operation", .method = "GET",
              .path = "/v1/admin/operations/{tenant}/{task}/{id}", .audience = Audience::operator_},
    RouteSpec{.id = RouteId::admin_resolve, .name = "admin_resolve", .method = "POST",
              .path = "/v1/admin/operations/{tenant}/{task}/{id}/resolve", .audience = Audience::operator_},
    RouteSpec{.id = RouteId::admin_reconcile, .name = "admin_reconcile", .method = "POST",
              .path = "/v1/admin/operations/{tenant}/{task}/{id}/reconcile", .audience = Audience::operator_,
              .gate = RouteGate::providers},
    RouteSpec{.id = RouteId::admin_operation, .name = "admin_operation", .method = "GET", .path = "/v1/admin/operation",
              .audience = Audience::operator_, .scope_in_query = true},
    RouteSpec{.id = RouteId::admin_resolve, .name = "admin_resolve", .method = "POST",
              .path = "/v1/admin/operation/resolve", .audience = Audience::operator_, .scope_in_query = true},
    RouteSpec{.id = RouteId::admin_reconcile, .name = "admin_reconcile", .method = "POST",
              .path = "/v1/admin/operation/reconcile", .audience = Audience::operator_, .gate = RouteGate::providers,
              .scope_in_query = true},
    RouteSpec{.id = RouteId::admin_clock, .name = "admin_clock", .method = "POST", .path = "/v1/admin/clock",
              .audience = Audience::operator_, .gate = RouteGate::manual_clock},
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
