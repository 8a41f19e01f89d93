// Reconciliation by provider lookup (spec section 4). A loop hands out held
// operations whose lookup is due (store/reconcile_store.hpp), asks each
// provider by the upstream idempotency key, keeps the answer as evidence,
// decides with the pure rules (core/reconcile.hpp), and resolves the
// operation when the answer settles it (store/resolution_store.hpp). At most
// recovery.reconcile.max_concurrent lookups are out at once; the schedule's
// backoff and jitter live in the store and the rules, not here.
#pragma once

#include "service/db/database.hpp"
#include "service/ops/event_log.hpp"
#include "service/ops/metrics.hpp"
#include "service/proxy/provider_registry.hpp"
#include "store/reconcile_store.hpp"
#include "store/resolution_store.hpp"

#include <boost/asio/steady_timer.hpp>

#include <atomic>
#include <optional>
#include <string>

namespace gw {

// What one lookup found, for the operator who asked and for the log.
struct LookupReport {
  std::optional<unsigned> status;  // the lookup reply's status; nullopt: no reply
  OperationState outcome = OperationState::unknown;  // what the answer proves; unknown: nothing
  std::string detail;
  std::int64_t evidence_id = 0;
  // Set when the answer settled the operation: resolve_held's code (resolved, or
  // why it was not resolved, e.g. settled meanwhile by another path).
  std::optional<Code> resolution{};
};

class Reconciler {
 public:
  Reconciler(const Config& config, Database& database, ReconcileStore& store, ResolutionStore& resolutions,
             Metrics& metrics, upstream::Client& upstream, const LiveProviders& providers);

  // The loop, on the timer's executor, until stop().
  asio::awaitable<void> run(asio::steady_timer& timer);
  void stop() { stopping_ = true; }

  // One lookup of one held operation, recorded, and resolved if it settles.
  asio::awaitable<LookupReport> look_up(DueLookup due);
  bool has_lookup(const std::string& provider) const;

 private:
  asio::awaitable<void> look_up_in_background(DueLookup due);
  // A lookup reply (or the original reply it holds) withheld for revealing a credential: counted and logged.
  void withheld(const std::string& provider, unsigned status, const std::string& request_id, std::string_view what);

  const Config& config_;
  Database& database_;
  ReconcileStore& store_;
  ResolutionStore& resolutions_;
  Metrics& metrics_;
  upstream::Client& upstream_;
  const LiveProviders& providers_;  // each lookup takes the current credential and limits
  const std::vector<std::string> lookup_providers_;
  std::atomic<unsigned> in_progress_{0};
  std::atomic<bool> stopping_{false};
  FailureStreak streak_;  // of run()'s rounds
};

}  // namespace gw
