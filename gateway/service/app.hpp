// The application behind the HTTP server: routing, authentication, and each
// route as one coroutine that reads top to bottom (validate, decide, forward,
// record, reply). Validation runs on the connection's strand; every database
// decision is awaited on a pool worker. Route handlers live in *_routes.cpp.
#pragma once

#include "config/config.hpp"
#include "http/message.hpp"
#include "service/auth.hpp"
#include "service/database.hpp"
#include "service/metrics.hpp"
#include "service/path.hpp"
#include "store/authority_store.hpp"
#include "store/held_store.hpp"
#include "store/ledger_store.hpp"
#include "upstream/client.hpp"

#include <atomic>
#include <chrono>
#include <map>
#include <memory>
#include <mutex>
#include <set>

namespace gw {

class App {
 public:
  struct Deps {
    const Config& config;
    Database& database;
    Pool& pool;  // for its gauges
    AuthorityStore& authority;
    LedgerStore& ledger;
    HeldStore& held;
    Metrics& metrics;
    upstream::Client* upstream = nullptr;  // null: no providers configured
  };
  explicit App(Deps deps);

  // Never throws: every failure becomes a problem reply.
  asio::awaitable<http::Response> handle(http::Request request);

  // Outcome records still being retried (their agents may have been answered).
  std::size_t pending_outcomes() const;
  // Stops retrying outcome records: what is not recorded by now is left in
  // flight, for the sweep. Each one is logged with the reply it would record.
  void stop();

  // One request in progress.
  struct Call {
    http::Request request;
    SplitTarget target;
    std::string route = "unmatched";
    std::string request_id;
    std::optional<Principal> principal;
  };
  using Reply = asio::awaitable<http::Response>;

  struct PendingOutcome;

 private:
  Reply dispatch(Call& call);
  struct Route {
    std::string_view name;
    std::string_view method;  // empty: any
    Reply (App::*handler)(Call&);
  };
  std::optional<Route> route_for(const std::vector<std::string>& segments) const;

  const Principal& require_principal(Call& call);
  const Principal& require_agent_for(Call& call, const std::string& tenant);
  const Principal& require_operator(Call& call);
  TaskScope task_scope(const Call& call) const;

  // ownership_routes.cpp
  Reply claim(Call& call);
  Reply renew(Call& call);
  Reply release(Call& call);
  Reply task_view(Call& call);
  // service_routes.cpp
  Reply healthz(Call& call);
  Reply readyz(Call& call);
  Reply metrics(Call& call);
  Reply set_clock(Call& call);
  // admin_routes.cpp
  Reply held_operations(Call& call);
  // proxy_routes.cpp
  Reply proxy(Call& call);
  Reply operation_receipt(Call& call);
  asio::awaitable<upstream::Result> exchange(const upstream::Endpoint& endpoint, upstream::Request request);
  // outcome_lane.cpp
  Reply record(const ProviderConfig& provider, const AdmissionRequest& admission, int attempt,
               const std::string& request_id, upstream::Result result);
  asio::awaitable<void> keep_recording(std::shared_ptr<PendingOutcome> pending);

  struct ProviderRoute {
    const ProviderConfig* config;
    upstream::Endpoint endpoint;
  };

  Deps deps_;
  Authenticator auth_;
  std::map<std::string, ProviderRoute, std::less<>> providers_;

  std::atomic<bool> stopping_{false};
  mutable std::mutex pending_mutex_;
  std::set<std::shared_ptr<PendingOutcome>> pending_;
};

}  // namespace gw
