// The application behind the HTTP server: routing, authentication, and each
// route as one coroutine that reads top to bottom (validate, decide, forward,
// record, reply). Validation runs on the connection's I/O thread; every database
// decision is awaited on a pool worker. Route handlers live in *_routes.cpp.
#pragma once

#include "config/config.hpp"
#include "core/trace_context.hpp"
#include "http/message.hpp"
#include "service/api/auth.hpp"
#include "service/db/database.hpp"
#include "service/ops/metrics.hpp"
#include "service/api/path.hpp"
#include "service/api/route_table.hpp"
#include "service/proxy/provider_registry.hpp"
#include "store/authority_store.hpp"
#include "store/held_store.hpp"
#include "store/ledger_store.hpp"
#include "store/operator_store.hpp"
#include "store/rejection_store.hpp"
#include "store/webhook_store.hpp"
#include "service/runtime/reconciler.hpp"
#include "upstream/client.hpp"

#include <atomic>
#include <chrono>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <span>

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
    OperatorStore& operators;
    ResolutionStore& resolutions;
    RejectionStore& rejections;
    ReconcileStore& reconcile;
    WebhookStore& webhooks;
    Metrics& metrics;
    upstream::Client* upstream = nullptr;  // null: no providers configured
  };
  explicit App(Deps deps);

  // Never throws: every failure becomes a problem reply.
  asio::awaitable<http::Response> handle(http::Request request);

  // What handle() would refuse from the head alone, before `100 Continue`
  // invites the body (http::Screen): whatever admit() refuses. nullopt:
  // invite the body.
  std::optional<http::Response> screen(const http::Request& head);

  // Swaps in the tokens and the providers' credentials and limits of
  // `config` (SIGHUP, after config/reload.hpp found nothing else changed):
  // requests that already authenticated keep their principal, and requests
  // already past their provider lookup keep their provider settings; the
  // next ones see the new ones.
  void reload(const Config& config);

  // The provider-lookup loop, run by the runtime on its duties strand.
  Reconciler& reconciler() { return *reconciler_; }

  // Outcome records still being retried (their agents may have been answered).
  std::size_t pending_outcomes() const;
  // Called each time pending_outcomes() drops to 0 (on the thread that
  // settled the last one): what a drain waits for. Set before serving.
  void on_outcomes_settled(std::function<void()> callback) { outcomes_settled_ = std::move(callback); }
  // Stops retrying outcome records: what is not recorded by now is left in
  // flight, for the sweep. Each one is logged with the reply it would record.
  void stop();

  // One request in progress.
  struct Call {
    http::Request request;
    SplitTarget target;
    std::string route = "unmatched";
    std::string request_id;
    std::shared_ptr<const Principal> principal;
    TraceContext trace;
    // Set by admit() for the routes that name them: the path's task, and for
    // the proxy its provider, from one snapshot of the providers' settings
    // (credential, limits) kept to the outcome, whatever a reload swaps in.
    std::optional<TaskScope> scope;
    std::shared_ptr<const ProviderSet> providers;
    const ProviderRoute* provider_route = nullptr;
    // What the route learned, for the request's log line (service/ops/request_log.hpp).
    // Never a token, a secret, a credential or a body.
    std::string operation_id, provider;
    std::optional<std::int64_t> epoch;
    std::optional<int> attempt;
    std::optional<unsigned> provider_status;
    std::string span_id;  // the gateway's span, sent to the provider as parent-id
    std::chrono::nanoseconds upstream_time{0}, db_time{0};
    std::string error;  // why an authority_unavailable or internal_error, for the log only
  };
  using Reply = asio::awaitable<http::Response>;
  using Handler = Reply (App::*)(Call&);

  // A route: what it is (service/api/route_table.hpp) and the member that serves it.
  struct Route : RouteSpec {
    Handler handler;
  };
  // Every route, in one table (service/api/routes.cpp).
  static std::span<const Route> routes();
  // The table's route for these decoded path segments, whatever the method
  // and gate; null when none matches.
  static const Route* match_route(const std::vector<std::string>& segments);

  struct PendingOutcome;

 private:
  // The screening every request passes, once, from its head alone (handle()
  // and screen() both): the route and its method, who may call it (the
  // route's Audience: token, kind of token, the agent's tenant binding), and
  // for the proxy the provider, the tenant's account there and the body's
  // size. Returns the route's handler, with call.route, call.scope and the
  // provider set; throws a Refusal otherwise. Not a coroutine: the
  // handler's own is the only frame a request adds here.
  Handler admit(Call& call);
  // match_route, and null also for a gated route this gateway does not serve.
  const Route* route_for(const std::vector<std::string>& segments) const;

  // The database, with the time spent added to the call's db_time.
  TimedDatabase db(Call& call) { return TimedDatabase(deps_.database, call.db_time); }
  // One forward to a provider: timed for the log and the metrics.
  asio::awaitable<upstream::Result> forward(Call& call, const ProviderRoute& provider, upstream::Request request);
  // The request's log line, when the config and its level want it.
  void log_request(const Call& call, const http::Response& reply, std::chrono::nanoseconds took) const;

  // admit()'s parts: the caller against the route's audience, and the proxy's provider.
  void authorize(Call& call, const Route& route);
  void choose_provider(Call& call);
  const Principal& require_principal(Call& call);
  static void require_agent_for(const Principal& principal, const std::string& tenant);
  static void require_operator(const Principal& principal);
  TaskScope task_scope(const Call& call) const;
  // A new call's request id and trace, from its request's headers.
  static void identify(Call& call);

  // ownership_routes.cpp
  Reply claim(Call& call);
  Reply renew(Call& call);
  Reply release(Call& call);
  Reply task_view(Call& call);
  // service_routes.cpp
  Reply healthz(Call& call);
  Reply readyz(Call& call);
  Reply metrics(Call& call);
  Reply openapi(Call& call);
  Reply set_clock(Call& call);
  // ui_routes.cpp: the operator page's files, by call.route
  Reply ui_asset(Call& call);
  // admin_routes.cpp
  Reply held_operations(Call& call);
  // operator_routes.cpp
  Reply operation_detail(Call& call);
  Reply resolve_operation(Call& call);
  Reply reconcile_operation(Call& call);
  Reply revoke_task(Call& call);
  Reply rotate_realm(Call& call);
  Reply rejections(Call& call);
  Reply unmatched_webhooks(Call& call);
  // webhook_routes.cpp
  Reply webhook(Call& call);
  // proxy_routes.cpp
  Reply proxy(Call& call);
  Reply operation_receipt(Call& call);
  // unresolved_operation, naming the operation that holds the task (the
  // caller passed the grant check: it is the task's current owner).
  Reply unresolved_refusal(Call& call, const TaskScope& scope);
  // A protected attempt refused before its admission, into the rejection audit.
  asio::awaitable<void> record_rejection(const RejectionRecord& rejection);
  // A provider's reply withheld for revealing a credential (service/proxy/reply_screen.hpp): counted and logged.
  void reply_withheld(const Call& call, const std::string& provider, unsigned status);
  // proxy/outcome_retry.cpp
  Reply record(Call& call, const ProviderConfig& provider, const AdmissionRequest& admission,
               const AdmissionResult& admitted, upstream::Result result);
  asio::awaitable<void> keep_recording(std::shared_ptr<PendingOutcome> pending);

  Deps deps_;
  // Replaced whole on reload; each request reads the one current at its start.
  std::atomic<std::shared_ptr<const Authenticator>> auth_;
  LiveProviders providers_;
  std::unique_ptr<Reconciler> reconciler_;

  std::atomic<bool> stopping_{false};
  mutable std::mutex pending_mutex_;
  std::function<void()> outcomes_settled_;
  std::set<std::shared_ptr<PendingOutcome>> pending_;
};

}  // namespace gw
