// Every route the gateway serves, as data: path template and method.
// App::route_for matches requests against this table and nothing else, so the
// OpenAPI document (docs/openapi.json) is checked against the very list the
// router uses (tests/http/openapi_tests.cpp).
#pragma once

#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace gw {

enum class RouteId {
  healthz,
  readyz,
  metrics,
  openapi,
  ui_page,
  ui_script,
  ui_style,
  claim,
  renew,
  release,
  task,
  operation,
  proxy,
  webhook,
  admin_held,
  admin_rejections,
  admin_webhooks,
  admin_rotate_realm,
  admin_revoke,
  admin_operation,
  admin_resolve,
  admin_reconcile,
  admin_clock,
};

// Routes that exist only in some gateways; elsewhere their path is 404.
enum class RouteGate {
  always,
  manual_clock,  // started with --manual-clock (spec section 6)
  providers,     // at least one provider configured (the reconciler exists)
};

// Who may call a route. App::admit checks it, once, before any handler runs
// (and before `100 Continue` invites a body): a route names its audience or
// does not exist.
enum class Audience {
  anyone,             // probes, metrics, the OpenAPI document, the page's static files
  agent,              // an agent token bound to the path's tenant
  agent_or_operator,  // the diagnostic task view: an operator, or the tenant's agent
  operator_,          // an operator token
  provider,           // a provider's webhook: its signature, checked by the handler
};

struct RouteSpec {
  RouteId id;
  std::string_view name;    // the route label in metrics and logs
  std::string_view method;  // empty: any method (the handler decides)
  // An OpenAPI path template: literal segments and {parameters}, one
  // percent-decoded segment each.
  std::string_view path;
  Audience audience;
  // The last parameter takes one or more segments ("a/b/c"): the provider path.
  bool rest = false;
  RouteGate gate = RouteGate::always;
  // The operation is named by the query (?tenant=&task=&id=) instead of the
  // path: a browser, curl and Node's fetch turn a path segment "." or ".."
  // (also spelt %2e) into a step up, so an operation with such a label can
  // only be addressed this way. App::admit rewrites the target to the
  // path form, and the route's handler serves both.
  bool scope_in_query = false;
};

// No two templates match the same path, so the order does not matter.
std::span<const RouteSpec> route_table();

// Whether the route's template matches these decoded path segments.
bool matches(const RouteSpec& route, const std::vector<std::string>& segments);

// The table's route for these segments, whatever the method and gate.
const RouteSpec* match_route(const std::vector<std::string>& segments);

}  // namespace gw
