#include "service/app.hpp"

#include "core/digest.hpp"
#include "core/labels.hpp"
#include "http/problem.hpp"
#include "service/rejection.hpp"

#include <iostream>

namespace gw {

App::App(Deps deps) : deps_(deps), auth_(deps.config) {
  for (const auto& p : deps_.config.providers) {
    upstream::Endpoint e;
    e.name = p.name;
    e.tls = p.tls;
    e.host = p.host;
    e.port = p.port;
    e.ca_file = p.ca_file;
    e.connect_timeout = p.connect_timeout;
    e.request_timeout = p.request_timeout;
    e.max_connections = p.max_connections;
    e.queue_timeout = p.queue_timeout;
    e.idle_retire = p.idle_retire;
    e.max_response_body = p.max_response_body_bytes;
    providers_.emplace(p.name, ProviderRoute{&p, std::move(e)});
  }
}

void App::handle(http::Request request, http::Responder done) {
  auto call = std::make_shared<Call>();
  call->started = std::chrono::steady_clock::now();
  auto id = request.header("X-Request-Id");
  call->request_id = id && is_label(*id) ? std::string(*id) : to_hex(random_bytes(12));
  call->request = std::move(request);
  call->done = std::move(done);
  try {
    auto target = split_target(call->request.target);
    if (!target) throw Rejection(Code::invalid_request, "request target is not a valid origin-form path");
    call->target = std::move(*target);
    dispatch(call);
  } catch (const Rejection& r) {
    finish(call, http::problem(r.code, r.what()));
  } catch (const std::exception& e) {
    std::cerr << "request " << call->request_id << ": internal error: " << e.what() << std::endl;
    finish(call, http::problem(Code::internal_error, "internal error; see the gateway log"));
  }
}

void App::dispatch(const CallPtr& call) {
  const auto& s = call->target.segments;
  const auto& method = call->request.method;
  auto only = [&](std::string_view allowed, std::string route, void (App::*fn)(const CallPtr&)) {
    call->route = std::move(route);
    if (method != allowed) {
      auto r = http::problem(Code::method_not_allowed, "use " + std::string(allowed) + " here");
      r.set("Allow", std::string(allowed));
      return finish(call, std::move(r));
    }
    (this->*fn)(call);
  };
  if (s.size() == 1 && s[0] == "healthz") return only("GET", "healthz", &App::healthz);
  if (s.size() == 1 && s[0] == "readyz") return only("GET", "readyz", &App::readyz);
  if (s.size() == 1 && s[0] == "metrics") return only("GET", "metrics", &App::metrics);
  if (s.size() >= 5 && s[0] == "v1" && s[1] == "tenants" && s[3] == "tasks") {
    if (s.size() == 5) return only("GET", "task", &App::task_view);
    if (s.size() == 6 && s[5] == "claim") return only("POST", "claim", &App::claim);
    if (s.size() == 6 && s[5] == "renew") return only("POST", "renew", &App::renew);
    if (s.size() == 6 && s[5] == "release") return only("POST", "release", &App::release);
    if (s.size() == 7 && s[5] == "operations") return only("GET", "operation", &App::operation_receipt);
    if (s.size() >= 7 && s[5] == "providers") {
      call->route = "proxy";
      return proxy(call);
    }
  }
  if (s.size() == 3 && s[0] == "v1" && s[1] == "admin" && s[2] == "held")
    return only("GET", "admin_held", &App::held_operations);
  // Without the explicit manual-clock option this route does not exist at all.
  if (s.size() == 3 && s[0] == "v1" && s[1] == "admin" && s[2] == "clock" && deps_.authority.clock().manual())
    return only("POST", "admin_clock", &App::set_clock);
  finish(call, http::problem(Code::not_found, "no such route"));
}

void App::finish(const CallPtr& call, http::Response response) {
  response.set("X-Request-Id", call->request_id);
  // Provider replies passed through for unprotected methods carry no code.
  auto code = response.header("Gateway-Status").value_or("passthrough");
  deps_.metrics.count_reply(call->route, code, std::chrono::steady_clock::now() - call->started);
  auto done = std::move(call->done);
  done(std::move(response));
}

void App::on_database(const CallPtr& call, std::function<std::optional<http::Response>(Session&)> work,
                      std::optional<http::Response> if_unavailable) {
  auto unavailable = [this, call, if_unavailable] {
    deps_.metrics.count_event("authority_unavailable");
    finish(call, if_unavailable ? *if_unavailable
                                : http::problem(Code::authority_unavailable,
                                                "the authority did not answer; nothing was forwarded"));
  };
  deps_.pool.submit(Pool::Job{
      [this, call, work = std::move(work), unavailable](Session& session) {
        try {
          if (auto reply = work(session)) finish(call, std::move(*reply));
        } catch (const AuthorityUnavailable& e) {
          std::cerr << "request " << call->request_id << ": authority unavailable: " << e.what()
                    << std::endl;
          unavailable();
        } catch (const Rejection& r) {
          finish(call, http::problem(r.code, r.what()));
        } catch (const std::exception& e) {
          std::cerr << "request " << call->request_id << ": internal error: " << e.what() << std::endl;
          finish(call, http::problem(Code::internal_error, "internal error; see the gateway log"));
        }
      },
      unavailable});
}

const Principal& App::require_principal(Call& call) {
  if (!call.principal) {
    call.principal = auth_.authenticate(call.request);
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
