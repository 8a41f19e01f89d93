#include "service/app.hpp"

#include "core/digest.hpp"
#include "core/labels.hpp"
#include "http/problem.hpp"
#include "service/rejection.hpp"
#include "service/route_table.hpp"

#include <iostream>

namespace gw {

App::App(Deps deps)
    : deps_(deps), auth_(std::make_shared<const Authenticator>(deps.config)), providers_(provider_routes(deps.config)) {
  if (deps_.upstream)
    reconciler_ = std::make_unique<Reconciler>(deps_.config, deps_.database, deps_.reconcile, deps_.resolutions,
                                               deps_.metrics, *deps_.upstream, providers_);
}

App::Reply App::handle(http::Request request) {
  const auto started = std::chrono::steady_clock::now();
  Call call;
  auto id = request.header("X-Request-Id");
  call.request_id = id && is_label(*id) ? std::string(*id) : to_hex(random_bytes(12));
  call.request = std::move(request);
  std::optional<http::Response> reply;
  try {
    auto target = split_target(call.request.target);
    if (!target) throw Rejection(Code::invalid_request, "request target is not a valid origin-form path");
    call.target = std::move(*target);
    reply = co_await dispatch(call);
  } catch (const Rejection& r) {
    reply = http::problem(r.code, r.what());
  } catch (const AuthorityUnavailable& e) {
    std::cerr << "request " << call.request_id << ": authority unavailable: " << e.what() << std::endl;
    deps_.metrics.count_event("authority_unavailable");
    reply = http::problem(Code::authority_unavailable, "the authority did not answer; nothing was forwarded");
  } catch (const std::exception& e) {
    std::cerr << "request " << call.request_id << ": internal error: " << e.what() << std::endl;
    reply = http::problem(Code::internal_error, "internal error; see the gateway log");
  }
  reply->set("X-Request-Id", call.request_id);
  // Provider replies passed through for unprotected methods carry no code.
  auto code = reply->header("Gateway-Status").value_or("passthrough");
  deps_.metrics.count_reply(call.route, code, std::chrono::steady_clock::now() - started);
  co_return std::move(*reply);
}

void App::reload_tokens(const Config& config) { auth_.store(std::make_shared<const Authenticator>(config)); }

std::optional<http::Response> App::screen(const http::Request& head) {
  Call call;
  call.request = head;
  auto id = head.header("X-Request-Id");
  call.request_id = id && is_label(*id) ? std::string(*id) : to_hex(random_bytes(12));
  std::optional<http::Response> refusal;
  std::string_view allow;
  try {
    auto target = split_target(head.target);
    if (!target) throw Rejection(Code::invalid_request, "request target is not a valid origin-form path");
    call.target = std::move(*target);
    const auto route = route_for(call.target.segments);
    if (!route) throw Rejection(Code::not_found, "no such route");
    call.route = route->name;
    if (!route->method.empty() && head.method != route->method) {
      allow = route->method;
      throw Rejection(Code::method_not_allowed, "use " + std::string(route->method) + " here");
    }
    const auto& s = call.target.segments;
    if (route->name.starts_with("admin")) {
      require_operator(call);
    } else if (s.size() >= 5 && s[0] == "v1" && s[1] == "tenants") {
      require_agent_for(call, task_scope(call).tenant);
      if (route->name == "proxy") {
        auto found = providers_.find(s[6]);
        if (found == providers_.end()) throw Rejection(Code::not_found, "no provider named '" + s[6] + "'");
        const ProviderConfig& config = *found->second.config;
        if (!config.credential_for(s[2]))
          throw Rejection(Code::forbidden, "provider " + config.name + " has no account for tenant " + s[2]);
        auto length = head.header("Content-Length");
        if (length && decimal_integer(*length).value_or(0) > static_cast<std::int64_t>(config.max_request_body_bytes))
          throw Rejection(Code::payload_too_large, "request body exceeds this provider's " +
                                                       std::to_string(config.max_request_body_bytes) + " bytes");
      }
    }
  } catch (const Rejection& r) {
    refusal = http::problem(r.code, r.what());
  } catch (const std::exception& e) {
    std::cerr << "request " << call.request_id << ": internal error while screening: " << e.what() << std::endl;
    refusal = http::problem(Code::internal_error, "internal error; see the gateway log");
  }
  if (refusal) {
    if (!allow.empty()) refusal->set("Allow", std::string(allow));
    refusal->set("X-Request-Id", call.request_id);
    deps_.metrics.count_reply(call.route, refusal->header("Gateway-Status").value_or("refused"),
                              std::chrono::steady_clock::duration::zero());
  }
  return refusal;
}

std::optional<App::Route> App::route_for(const std::vector<std::string>& s) const {
  const RouteSpec* spec = match_route(s);
  if (!spec) return std::nullopt;
  // A gated route does not exist at all without its feature: 404, not 405.
  if (spec->gate == RouteGate::manual_clock && !deps_.authority.clock().manual()) return std::nullopt;
  if (spec->gate == RouteGate::providers && !reconciler_) return std::nullopt;
  Reply (App::*handler)(Call&) = nullptr;
  // No default: a route added to the table without a handler does not compile (-Wswitch).
  switch (spec->id) {
    case RouteId::healthz: handler = &App::healthz; break;
    case RouteId::readyz: handler = &App::readyz; break;
    case RouteId::metrics: handler = &App::metrics; break;
    case RouteId::openapi: handler = &App::openapi; break;
    case RouteId::ui_page:
    case RouteId::ui_script:
    case RouteId::ui_style: handler = &App::ui_asset; break;
    case RouteId::claim: handler = &App::claim; break;
    case RouteId::renew: handler = &App::renew; break;
    case RouteId::release: handler = &App::release; break;
    case RouteId::task: handler = &App::task_view; break;
    case RouteId::operation: handler = &App::operation_receipt; break;
    case RouteId::proxy: handler = &App::proxy; break;
    case RouteId::webhook: handler = &App::webhook; break;
    case RouteId::admin_held: handler = &App::held_operations; break;
    case RouteId::admin_rejections: handler = &App::rejections; break;
    case RouteId::admin_webhooks: handler = &App::unmatched_webhooks; break;
    case RouteId::admin_rotate_realm: handler = &App::rotate_realm; break;
    case RouteId::admin_revoke: handler = &App::revoke_task; break;
    case RouteId::admin_operation: handler = &App::operation_detail; break;
    case RouteId::admin_resolve: handler = &App::resolve_operation; break;
    case RouteId::admin_reconcile: handler = &App::reconcile_operation; break;
    case RouteId::admin_clock: handler = &App::set_clock; break;
  }
  return Route{spec->name, spec->method, handler};
}

App::Reply App::dispatch(Call& call) {
  const auto route = route_for(call.target.segments);
  if (!route) co_return http::problem(Code::not_found, "no such route");
  call.route = route->name;
  if (!route->method.empty() && call.request.method != route->method) {
    auto r = http::problem(Code::method_not_allowed, "use " + std::string(route->method) + " here");
    r.set("Allow", std::string(route->method));
    co_return r;
  }
  co_return co_await (this->*route->handler)(call);
}

const Principal& App::require_principal(Call& call) {
  if (!call.principal) {
    call.principal = auth_.load()->authenticate(call.request);
    if (!call.principal)
      throw Rejection(Code::unauthenticated, "send Authorization: Bearer <token> with a known token");
  }
  return *call.principal;
}

TaskScope App::task_scope(const Call& call) const {
  const auto& s = call.target.segments;
  if (!is_label(s[2]))
    throw Rejection(Code::invalid_request, "tenant in the path must be a label: 1 to 80 printable ASCII characters");
  if (!is_label(s[4]))
    throw Rejection(Code::invalid_request, "task in the path must be a label: 1 to 80 printable ASCII characters");
  return TaskScope{s[2], s[4]};
}

const Principal& App::require_agent_for(Call& call, const std::string& tenant) {
  const auto& p = require_principal(call);
  if (p.kind != Principal::Kind::agent)
    throw Rejection(Code::forbidden, "this route needs an agent token");
  if (!p.may_act_for(tenant))
    throw Rejection(Code::forbidden, "this agent token is not bound to the path's tenant");
  return p;
}

const Principal& App::require_operator(Call& call) {
  const auto& p = require_principal(call);
  if (p.kind != Principal::Kind::operator_)
    throw Rejection(Code::forbidden, "this route needs an operator token");
  return p;
}

}  // namespace gw
