// What GET /metrics reports (Prometheus text format, service/ops/prometheus_text.hpp):
// replies by route and code, request latency, per-provider outcomes and
// upstream latency, database decision latency and conflicts, the sweeper's
// and reconciler's progress, and gauges read at scrape time (the pool, held
// operations, the log queue, the build). Counters only go up; every method
// is thread-safe.
#pragma once

#include "core/codes.hpp"
#include "service/ops/prometheus_text.hpp"

#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace gw {

class Metrics {
 public:
  // Every event count_event is given. Each is exported at zero from the
  // start: an alert's increase() over a series that first appears at 1 sees
  // no increase, so the first outcome_record_failed would never page.
  static constexpr auto events = std::to_array<std::string_view>({
      "authority_unavailable", "database_lost", "database_regained",
      "outcome_record_waiting", "outcome_record_failed", "outcome_unrecorded_at_stop",
      "operations_held", "operations_swept", "sweep_failed",
      "lookups", "lookup_failed", "reconcile_failed", "operations_reconciled",
      "provider_reply_withheld", "rejection_unrecorded",
      "operations_resolved_by_operator", "operations_resolved_by_webhook", "webhooks_refused",
      "retention_operations_removed", "retention_rejections_removed", "retention_webhooks_removed",
      "retention_failed",
      "authority_primary_changed", "authority_regained", "without_authority_ms",
      "authority_guard_tripped", "authority_guard_refused", "authority_guard_overridden",
      "authority_guard_state_unwritten"});
  // The outcomes count_outcome classifies a protected attempt as.
  static constexpr auto outcomes = std::to_array<std::string_view>({"succeeded", "rejected", "not_executed", "unknown"});

  Metrics();
  // Each provider's outcome series at zero, for the same reason as events.
  void declare_providers(const std::vector<std::string>& providers);

  void count_reply(const std::string& route, std::string_view code, std::chrono::nanoseconds took);
  void count_event(const std::string& name, std::uint64_t n = 1);
  // One forwarded exchange (protected or not): its time, whatever it ended in.
  void observe_upstream(const std::string& provider, std::chrono::nanoseconds took);
  // A protected attempt's outcome as classified (succeeded, rejected, not_executed, unknown).
  void count_outcome(const std::string& provider, std::string_view outcome);
  // One decision awaited by a request: "admission" or "outcome", queue wait
  // and conflict retries included.
  void observe_decision(std::string_view kind, std::chrono::nanoseconds took);
  // A SERIALIZABLE decision that conflicted and is tried again; one that
  // conflicted max_attempts times and gave up (authority_unavailable).
  void count_conflict_retry();
  void count_conflict_give_up();
  // A decision made on an I/O thread's own connection (service/db/direct_connections.hpp).
  void count_direct_decision() { direct_decisions_.fetch_add(1, std::memory_order_relaxed); }
  // One sweep round, and the abandoned forwards it declared unknown; or
  // one that failed (the database was away).
  void count_sweep_done(std::uint64_t swept);
  void count_sweep_failed();
  // One provider lookup: "settled", "held" (answered, nothing settled) or "failed" (not recorded).
  void count_lookup(const std::string& provider, std::string_view result);
  // A held operation resolved: source "lookup", "webhook" or "operator".
  void count_resolved(std::string_view source, std::string_view outcome);

  // Read at scrape time, not counted.
  struct Gauges {
    std::size_t pool_size = 0, in_use = 0, open = 0;
    std::size_t direct_open = 0;     // the I/O threads' own connections
    std::size_t direct_waiting = 0;  // decisions waiting their turn for one
    std::size_t direct_lent = 0;     // decisions holding one (several on one when pipelined)
    std::size_t queued_requests = 0, queued_outcomes = 0, interrupted = 0;
    std::size_t groups_committed = 0, grouped_decisions = 0, groups_split = 0;  // shared commits
    bool database_reachable = true;
    std::uint64_t log_lines_dropped = 0;
    std::string version, commit, allocator;
  };
  std::string render(const Gauges& gauges) const;

  // Held operations by state, as counted by the sweep loop's last round
  // (a scrape never waits for the database: it is most needed when the pool
  // is stuck). Until the first count, the two held families are left out.
  struct Held {
    std::string state;
    std::int64_t count = 0;
    double oldest_age_seconds = 0;
  };
  void set_held(std::vector<Held> held);

  // The gauge gateway_without_authority_seconds, read at scrape time (the
  // authority guard's running stretch without a usable primary). Set once,
  // before the first scrape; until then the gauge is 0.
  void watch_authority(std::function<double()> seconds_without);

 private:
  // Two labels; looked up by string_views, so counting a reply that has
  // been counted before allocates nothing.
  using LabelPair = std::pair<std::string, std::string>;
  struct LabelPairLess {
    using is_transparent = void;
    template <class A, class B>
    bool operator()(const A& a, const B& b) const {
      return std::pair<std::string_view, std::string_view>(a.first, a.second) <
             std::pair<std::string_view, std::string_view>(b.first, b.second);
    }
  };
  using PairCounts = std::map<LabelPair, std::uint64_t, LabelPairLess>;
  static void count(PairCounts& counts, std::string_view first, std::string_view second);

  mutable std::mutex mutex_;
  PairCounts replies_;
  std::map<std::string, Histogram, std::less<>> latency_;
  std::map<std::string, std::uint64_t> events_;
  std::map<std::string, Histogram, std::less<>> upstream_;
  PairCounts outcomes_;
  std::map<std::string, Histogram, std::less<>> decisions_;
  std::uint64_t conflict_retries_ = 0, conflict_give_ups_ = 0;
  std::uint64_t sweeps_ok_ = 0, sweeps_failed_ = 0, swept_ = 0;
  PairCounts lookups_;
  PairCounts resolved_;
  std::optional<std::vector<Held>> held_;
  mutable std::mutex watch_mutex_;  // never held with mutex_
  std::function<double()> seconds_without_authority_;
  std::atomic<std::uint64_t> direct_decisions_{0};
};

}  // namespace gw
