#include "service/api/app.hpp"
#include "service/api/path.hpp"
#include "service/api/route_table.hpp"

#include <doctest/doctest.h>

using namespace gw;

namespace {

std::vector<std::string_view> parts(std::string_view path) {
  std::vector<std::string_view> out;
  path.remove_prefix(1);
  for (auto slash = path.find('/'); slash != std::string_view::npos; slash = path.find('/')) {
    out.push_back(path.substr(0, slash));
    path.remove_prefix(slash + 1);
  }
  out.push_back(path);
  return out;
}

bool parameter(std::string_view part) { return part.starts_with('{'); }

// Whether some path matches both templates.
bool overlap(const RouteSpec& a, const RouteSpec& b) {
  const auto pa = parts(a.path), pb = parts(b.path);
  const auto n = std::min(pa.size(), pb.size());
  for (std::size_t i = 0; i < n; ++i)
    if (!parameter(pa[i]) && !parameter(pb[i]) && pa[i] != pb[i]) return false;
  if (pa.size() == pb.size()) return true;
  // The shorter one matches longer paths only when its last parameter takes the rest.
  const auto& shorter = pa.size() < pb.size() ? a : b;
  return shorter.rest;
}

const App::Route* route_of(std::string_view target) {
  auto split = split_target(target);
  REQUIRE(split);
  return App::match_route(split->segments);
}

}  // namespace

TEST_CASE("route table: no two templates match the same path, so the order cannot matter") {
  const auto table = App::routes();
  for (std::size_t i = 0; i < table.size(); ++i)
    for (std::size_t j = i + 1; j < table.size(); ++j) {
      CAPTURE(table[i].path);
      CAPTURE(table[j].path);
      CHECK_FALSE(overlap(table[i], table[j]));
    }
}

TEST_CASE("route table: each template matches its own paths") {
  for (const auto& route : App::routes()) {
    CAPTURE(route.path);
    std::vector<std::string> segments;
    for (auto part : parts(route.path)) segments.emplace_back(parameter(part) ? "x" : part);
    CHECK(App::match_route(segments) == &route);
    segments.emplace_back("more");
    CHECK(matches(route, segments) == route.rest);
  }
}

TEST_CASE("route table: the paths the router has always served") {
  struct Case {
    const char* target;
    const char* route;  // nullptr: no route
  };
  const Case cases[] = {
      {"/healthz", "healthz"},
      {"/readyz", "readyz"},
      {"/metrics", "metrics"},
      {"/openapi.json", "openapi"},
      {"/v1/tenants/t/tasks/k", "task"},
      {"/v1/tenants/t/tasks/k/claim", "claim"},
      {"/v1/tenants/t/tasks/k/renew", "renew"},
      {"/v1/tenants/t/tasks/k/release", "release"},
      {"/v1/tenants/t/tasks/k/operations/op-1", "operation"},
      {"/v1/tenants/t/tasks/k/providers/booking", "proxy"},
      {"/v1/tenants/t/tasks/k/providers/booking/bookings", "proxy"},
      {"/v1/tenants/t/tasks/k/providers/booking/a/b/c?x=1", "proxy"},
      {"/v1/tenants/claim/tasks/claim/claim", "claim"},
      {"/v1/tenants//tasks/k/claim", "claim"},  // the route refuses the empty label
      {"/v1/webhooks/booking", "webhook"},
      {"/v1/admin/held?limit=5", "admin_held"},
      {"/v1/admin/rejections", "admin_rejections"},
      {"/v1/admin/webhooks", "admin_webhooks"},
      {"/v1/admin/authority/rotate-realm", "admin_rotate_realm"},
      {"/v1/admin/tasks/t/k/revoke", "admin_revoke"},
      {"/v1/admin/operations/t/k/op-1", "admin_operation"},
      {"/v1/admin/operations/t/k/op-1/resolve", "admin_resolve"},
      {"/v1/admin/operations/t/k/op-1/reconcile", "admin_reconcile"},
      {"/v1/admin/operation?tenant=t&task=.&id=..", "admin_operation"},
      {"/v1/admin/operation/resolve?tenant=t&task=k&id=..", "admin_resolve"},
      {"/v1/admin/operation/reconcile?tenant=t&task=k&id=.", "admin_reconcile"},
      {"/v1/admin/clock", "admin_clock"},
      {"/", nullptr},
      {"/healthz/", nullptr},
      {"/v1/tenants/t/tasks", nullptr},
      {"/v1/tenants/t/tasks/k/providers", nullptr},
      {"/v1/tenants/t/tasks/k/operations/op-1/more", nullptr},
      {"/v1/tenants/t/jobs/k", nullptr},
      {"/v1/webhooks/booking/x", nullptr},
      {"/v1/admin/operations/t/k/op-1/other", nullptr},
      {"/v1/admin/tasks/t/k/release", nullptr},
      {"/v1/admin/operation/other?tenant=t&task=k&id=op", nullptr},
      {"/v2/admin/held", nullptr},
  };
  for (const auto& c : cases) {
    CAPTURE(c.target);
    const auto* route = route_of(c.target);
    if (!c.route) {
      CHECK(route == nullptr);
      continue;
    }
    REQUIRE(route);
    CHECK(route->name == c.route);
  }
}

TEST_CASE("route table: the gated routes and the route that takes any method") {
  CHECK(route_of("/v1/admin/clock")->gate == RouteGate::manual_clock);
  CHECK(route_of("/v1/admin/operations/t/k/op/reconcile")->gate == RouteGate::providers);
  CHECK(route_of("/v1/tenants/t/tasks/k/providers/p/x")->method.empty());
  for (const auto& route : App::routes())
    if (route.name != "proxy") CHECK_FALSE(route.method.empty());
}

TEST_CASE("route table: every route names who may call it, and the admin and tenant paths are never open") {
  for (const auto& route : App::routes()) {
    CAPTURE(route.path);
    const std::string_view path = route.path;
    if (path.starts_with("/v1/admin/")) {
      CHECK(route.audience == Audience::operator_);
    } else if (path.starts_with("/v1/tenants/")) {
      // Only the diagnostic view is also an operator's; every other tenant
      // route is the tenant's agents' alone.
      CHECK(route.audience == (route.name == "task" ? Audience::agent_or_operator : Audience::agent));
    } else if (path.starts_with("/v1/webhooks/")) {
      CHECK(route.audience == Audience::provider);
    } else {
      CHECK_FALSE(path.starts_with("/v1/"));
      CHECK(route.audience == Audience::anyone);
    }
  }
}
