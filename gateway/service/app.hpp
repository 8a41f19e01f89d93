// The application behind the HTTP server: routing, authentication, input
// validation on the I/O thread, then every database decision on a pool
// worker. Route handlers live in *_routes.cpp beside this file.
#pragma once

#include "config/config.hpp"
#include "http/message.hpp"
#include "service/auth.hpp"
#include "service/metrics.hpp"
#include "service/path.hpp"
#include "store/authority_store.hpp"
#include "store/held_store.hpp"
#include "store/ledger_store.hpp"
#include "store/pool.hpp"
#include "upstream/client.hpp"

#include <chrono>
#include <functional>
#include <map>
#include <memory>

namespace gw {

class App {
 public:
  struct Deps {
    const Config& config;
    Pool& pool;
    AuthorityStore& authority;
    LedgerStore& ledger;
    HeldStore& held;
    Metrics& metrics;
    upstream::Client* upstream = nullptr;  // null: no providers configured
  };
  explicit App(Deps deps);

  void handle(http::Request request, http::Responder done);

  // One request in progress.
  struct Call {
    http::Request request;
    SplitTarget target;
    std::string route = "unmatched";
    std::string request_id;
    std::optional<Principal> principal;
    http::Responder done;
    std::chrono::steady_clock::time_point started;
  };
  using CallPtr = std::shared_ptr<Call>;

 private:
  void dispatch(const CallPtr& call);
  void finish(const CallPtr& call, http::Response response);
  // Runs `work` on a database worker; AuthorityUnavailable and a full or
  // stopped pool answer 503 authority_unavailable, a Rejection its code.
  // A work that returns nullopt has taken the call over and finishes it.
  // `if_unavailable` replaces the 503 when the work may already have had
  // effects elsewhere (the outcome of a forwarded request).
  void on_database(const CallPtr& call, std::function<std::optional<http::Response>(Session&)> work,
                   std::optional<http::Response> if_unavailable = std::nullopt);

  const Principal& require_principal(Call& call);
  const Principal& require_agent_for(Call& call, const std::string& tenant);
  const Principal& require_operator(Call& call);
  TaskScope task_scope(const Call& call) const;

  // ownership_routes.cpp
  void claim(const CallPtr& call);
  void renew(const CallPtr& call);
  void release(const CallPtr& call);
  void task_view(const CallPtr& call);
  // service_routes.cpp
  void healthz(const CallPtr& call);
  void readyz(const CallPtr& call);
  void metrics(const CallPtr& call);
  void set_clock(const CallPtr& call);
  // admin_routes.cpp
  void held_operations(const CallPtr& call);
  // proxy_routes.cpp
  struct ProxyCall;
  void proxy(const CallPtr& call);
  void forward(const std::shared_ptr<ProxyCall>& p);
  void record(const std::shared_ptr<ProxyCall>& p, upstream::Result result);
  void operation_receipt(const CallPtr& call);

  struct ProviderRoute {
    const ProviderConfig* config;
    upstream::Endpoint endpoint;
  };

  Deps deps_;
  Authenticator auth_;
  std::map<std::string, ProviderRoute, std::less<>> providers_;
};

}  // namespace gw
