// What a route is, as data: path template, method, audience, gate. The table
// itself, each entry with the member of App that serves it, is App::routes()
// (service/api/routes.cpp); the OpenAPI document (docs/openapi.json) is checked
// against that very list (tests/http/openapi_tests.cpp).
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace gw {

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

// A template's segments, split once per table: an empty one is a {parameter}.
std::vector<std::string_view> template_parts(const RouteSpec& route);

// Whether a template's parts (template_parts) match these decoded path segments.
bool matches_parts(const std::vector<std::string_view>& parts, bool rest, const std::vector<std::string>& segments);

// Whether the route's template matches these decoded path segments.
bool matches(const RouteSpec& route, const std::vector<std::string>& segments);

}  // namespace gw
