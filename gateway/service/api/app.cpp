#include "service/api/app.hpp"

#include "core/digest.hpp"
#include "core/labels.hpp"
#include "http/problem.hpp"
#include "service/ops/log_line.hpp"
#include "service/ops/logger.hpp"
#include "service/api/query.hpp"
#include "service/api/refusal.hpp"
#include "store/authority_guard.hpp"
#include "service/ops/request_log.hpp"
#include "service/api/route_table.hpp"

#include <algorithm>

namespace gw {

App::App(Deps deps)
    : deps_(deps),
      auth_(std::make_shared<const Authenticator>(deps.config)),
      providers_(deps.config, deps.upstream) {
  if (deps_.upstream)
    reconciler_ = std::make_unique<Reconciler>(deps_.config, deps_.database, deps_.reconcile, deps_.resolutions,
                                               deps_.metrics, *deps_.upstream, providers_);
}

namespace {

std::vector<std::string_view> all_headers(const http::Fields& headers, std::string_view name) {
  std::vector<std::string_view> out;
  for (const auto& [k, v] : headers)
    if (http::iequals(k, name)) out.push_back(v);
  return out;
}

// Microsecond resolution is plenty for a log line.
std::chrono::microseconds micros(std::chrono::nanoseconds d) {
  return std::chrono::duration_cast<std::chrono::microseconds>(d);
}

}  // namespace

void App::identify(Call& call) {
  auto id = call.request.header("X-Request-Id");
  call.request_id = id && is_label(*id) ? std::string(*id) : random_hex(12);
  call.trace = continue_trace(all_headers(call.request.headers, "traceparent"),
                              all_headers(call.request.headers, "tracestate"), random_hex(16));
}

App::Reply App::handle(http::Request request) {
  const auto started = std::chrono::steady_clock::now();
  Call call;
  call.request = std::move(request);
  identify(call);
  std::optional<http::Response> reply;
  try {
    const auto handler = admit(call);
    reply = co_await (this->*handler)(call);
  } catch (const Refusal& r) {
    reply = http::problem(r.code, r.what(), r.extra);
    if (!r.allow.empty()) reply->set("Allow", r.allow);
  } catch (const AuthorityRefused& e) {
    // The authority regression guard (store/authority_guard.hpp): why, by name.
    call.error = e.what();
    deps_.metrics.count_event("authority_unavailable");
    reply = http::problem(Code::authority_unavailable, e.what(), {{"reason", std::string(name(e.verdict))}});
  } catch (const AuthorityUnavailable& e) {
    call.error = e.what();
    deps_.metrics.count_event("authority_unavailable");
    // A read forwards nothing whatever happens, so saying so would tell its reader nothing: it
    // was not served, and changed nothing. A write was refused before it was forwarded.
    const bool read = call.request.method == "GET" || call.request.method == "HEAD";
    reply = http::problem(Code::authority_unavailable,
                          read ? "the authority did not answer; this read was not served and nothing was changed"
                               : "the authority did not answer; nothing was forwarded");
  } catch (const std::exception& e) {
    call.error = e.what();
    reply = http::problem(Code::internal_error, "internal error; see the gateway log");
  }
  reply->set("X-Request-Id", call.request_id);
  // Provider replies passed through for unprotected methods carry no code.
  auto code = reply->header("Gateway-Status").value_or("passthrough");
  const auto took = std::chrono::steady_clock::now() - started;
  deps_.metrics.count_reply(call.route, code, took);
  log_request(call, *reply, took);
  co_return std::move(*reply);
}

void App::reload(const Config& config) {
  auth_.store(std::make_shared<const Authenticator>(config));
  providers_.replace(config);
}

void App::log_request(const Call& call, const http::Response& reply, std::chrono::nanoseconds took) const {
  const std::string code(reply.header("Gateway-Status").value_or("passthrough"));
  const auto level = request_line_level(call.route, code);
  auto& logger = Logger::process();
  if (!request_line_wanted(level, LogConfig{logger.level(), logger.access()})) return;
  RequestLine line{.request_id = call.request_id,
                   .trace_id = call.trace.trace_id,
                   .method = call.request.method,
                   .route = call.route,
                   .code = code,
                   .status = reply.status,
                   .duration = micros(took),
                   .db_time = micros(call.db_time),
                   .operation = call.operation_id,
                   .provider = call.provider,
                   .error = call.error,
                   .attempt = call.attempt,
                   .epoch = call.epoch};
  // The path's tenant and task, when they are labels (never raw bytes).
  const auto& s = call.target.segments;
  if (s.size() >= 5 && s[0] == "v1" && s[1] == "tenants" && is_label(s[2]) && is_label(s[4])) {
    line.tenant = s[2];
    line.task = s[4];
  }
  // Only for a request that was forwarded (a refused admission was not).
  if (call.upstream_time.count() > 0)
    line.forwarded = RequestLine::Forwarded{micros(call.upstream_time), call.provider_status, call.span_id};
  if (call.trace.parent_id) line.parent_span_id = *call.trace.parent_id;
  // One buffer per thread, handed to each line and back: the line allocates nothing.
  thread_local std::string buffer;
  buffer = request_line(std::move(buffer), std::chrono::system_clock::now(), level, line);
  logger.write_line(level, buffer);
}

asio::awaitable<upstream::Result> App::forward(Call& call, const ProviderRoute& provider,
                                               upstream::Request request) {
  const auto started = std::chrono::steady_clock::now();
  auto result = co_await deps_.upstream->exchange(provider.endpoint, std::move(request));
  const auto took = std::chrono::steady_clock::now() - started;
  call.upstream_time += took;
  if (result.response) call.provider_status = result.response->status;
  deps_.metrics.observe_upstream(provider.config->name, took);
  co_return result;
}

std::optional<http::Response> App::screen(const http::Request& head) {
  Call call;
  call.request = head;
  identify(call);
  std::optional<http::Response> refusal;
  try {
    admit(call);
  } catch (const Refusal& r) {
    refusal = http::problem(r.code, r.what(), r.extra);
    if (!r.allow.empty()) refusal->set("Allow", r.allow);
  } catch (const std::exception& e) {
    call.error = e.what();
    refusal = http::problem(Code::internal_error, "internal error; see the gateway log");
  }
  if (refusal) {
    refusal->set("X-Request-Id", call.request_id);
    deps_.metrics.count_reply(call.route, refusal->header("Gateway-Status").value_or("refused"),
                              std::chrono::steady_clock::duration::zero());
    log_request(call, *refusal, std::chrono::nanoseconds(0));
  }
  return refusal;
}

const App::Route* App::match_route(const std::vector<std::string>& segments) {
  // Split once, and indexed by how many segments a path has: every request
  // is matched, and only the few templates of its length (in table order, so
  // the first match is the table's first) are compared.
  struct Index {
    std::vector<std::vector<std::string_view>> parts;  // by route
    std::vector<std::vector<std::size_t>> by_length;   // the routes a path of n segments may match
  };
  static const Index index = [] {
    Index out;
    const auto table = routes();
    std::size_t longest = 0;
    for (const auto& route : table) {
      out.parts.push_back(template_parts(route));
      longest = std::max(longest, out.parts.back().size());
    }
    // The last entry serves every longer path: only `rest` templates match one.
    out.by_length.resize(longest + 2);
    for (std::size_t n = 0; n < out.by_length.size(); ++n)
      for (std::size_t i = 0; i < table.size(); ++i)
        if (table[i].rest ? out.parts[i].size() <= n : out.parts[i].size() == n) out.by_length[n].push_back(i);
    return out;
  }();
  const auto table = routes();
  const auto& candidates = index.by_length[std::min(segments.size(), index.by_length.size() - 1)];
  for (const std::size_t i : candidates)
    if (matches_parts(index.parts[i], table[i].rest, segments)) return &table[i];
  return nullptr;
}

const App::Route* App::route_for(const std::vector<std::string>& s) const {
  const Route* route = match_route(s);
  if (!route) return nullptr;
  // A gated route does not exist at all without its feature: 404, not 405.
  if (route->gate == RouteGate::manual_clock && !deps_.authority.clock().manual()) return nullptr;
  if (route->gate == RouteGate::providers && !reconciler_) return nullptr;
  return route;
}

App::Handler App::admit(Call& call) {
  auto target = split_target(call.request.target);
  if (!target) throw Refusal(Code::invalid_request, "request target is not a valid origin-form path");
  call.target = std::move(*target);
  const Route* route = route_for(call.target.segments);
  if (!route) throw no_such_route();
  const Route& spec = *route;
  call.route = spec.name;
  if (!spec.method.empty() && call.request.method != spec.method) {
    Refusal wrong_method(Code::method_not_allowed, "use " + std::string(spec.method) + " here");
    wrong_method.allow = spec.method;
    throw wrong_method;
  }
  authorize(call, spec);
  if (spec.scope_in_query) {
    // /v1/admin/operation[/action]?tenant=&task=&id= is served as
    // /v1/admin/operations/{tenant}/{task}/{id}[/action], by the same handler.
    const auto q = parse_query(call.target.query, {"tenant", "task", "id"});
    std::vector<std::string> segments{"v1", "admin", "operations"};
    for (const char* name : {"tenant", "task", "id"}) {
      auto found = q.find(name);
      if (found == q.end()) throw Refusal(Code::invalid_request, std::string("query parameter ") + name + " required");
      segments.push_back(found->second);
    }
    if (call.target.segments.size() == 4) segments.push_back(call.target.segments[3]);
    call.target.segments = std::move(segments);
    call.target.query = {};
  }
  return route->handler;
}

void App::authorize(Call& call, const Route& route) {
  switch (route.audience) {
    case Audience::anyone:
    case Audience::provider:  // the webhook's signature is its credential
      return;
    case Audience::operator_:
      require_operator(require_principal(call));
      return;
    case Audience::agent:
    case Audience::agent_or_operator: {
      // Authenticated before the path's labels are judged: a caller without a
      // token learns nothing about them.
      const auto& principal = require_principal(call);
      call.scope = task_scope(call);
      if (route.audience == Audience::agent || principal.kind == Principal::Kind::agent)
        require_agent_for(principal, call.scope->tenant);
      if (route.handler == &App::proxy) choose_provider(call);
      return;
    }
  }
}

void App::choose_provider(Call& call) {
  const auto& name = call.target.segments[6];
  if (!is_label(name)) throw Refusal(Code::invalid_request, "provider in the path must be a label");
  call.providers = providers_.current();
  auto found = call.providers->routes.find(name);
  if (found == call.providers->routes.end())
    throw Refusal(Code::not_found, "no provider named '" + name + "'", {{"missing", "provider"}});
  call.provider_route = &found->second;
  const ProviderConfig& config = *found->second.config;
  // The tenant's own account at the provider, for every method: a read is
  // another tenant's data too.
  if (!config.credential_for(call.scope->tenant))
    throw Refusal(Code::forbidden, "provider " + config.name + " has no account for tenant " + call.scope->tenant);
  // Declared by the head (screen(), before the body is invited), or received.
  const auto length = call.request.header("Content-Length");
  const auto declared = length ? decimal_integer(*length).value_or(0) : 0;
  const auto limit = config.max_request_body_bytes;
  if (declared > static_cast<std::int64_t>(limit) || call.request.body.size() > limit)
    throw Refusal(Code::payload_too_large,
                    "request body exceeds this provider's " + std::to_string(limit) + " bytes");
}

const Principal& App::require_principal(Call& call) {
  if (!call.principal) {
    call.principal = auth_.load()->authenticate(call.request);
    if (!call.principal)
      throw Refusal(Code::unauthenticated, "send Authorization: Bearer <token> with a known token");
  }
  return *call.principal;
}

TaskScope App::task_scope(const Call& call) const {
  const auto& s = call.target.segments;
  if (!is_label(s[2]))
    throw Refusal(Code::invalid_request, "tenant in the path must be a label: 1 to 80 printable ASCII characters");
  if (!is_label(s[4]))
    throw Refusal(Code::invalid_request, "task in the path must be a label: 1 to 80 printable ASCII characters");
  return TaskScope{s[2], s[4]};
}

void App::require_agent_for(const Principal& p, const std::string& tenant) {
  if (p.kind != Principal::Kind::agent)
    throw Refusal(Code::forbidden, "this route needs an agent token");
  if (!p.may_act_for(tenant))
    throw Refusal(Code::forbidden, "this agent token is not bound to the path's tenant");
}

void App::require_operator(const Principal& p) {
  if (p.kind != Principal::Kind::operator_)
    throw Refusal(Code::forbidden, "this route needs an operator token");
}

}  // namespace gw
