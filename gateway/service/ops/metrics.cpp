#include "service/ops/metrics.hpp"

namespace gw {
namespace {

// Seconds. Requests and database decisions: 1 ms to 5 s; provider
// exchanges run longer (request_timeout_ms defaults to 10 s): 5 ms to 30 s.
constexpr std::array<double, 10> request_bounds{0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1.0, 5.0};
constexpr std::array<double, 11> upstream_bounds{0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 10.0, 30.0};

double seconds(std::chrono::nanoseconds d) { return std::chrono::duration<double>(d).count(); }

template <class Map>
Histogram& histogram_for(Map& map, std::string_view key, std::span<const double> bounds) {
  auto it = map.find(key);
  if (it == map.end()) it = map.emplace(std::string(key), Histogram(bounds)).first;
  return it->second;
}

}  // namespace

void Metrics::count(PairCounts& counts, std::string_view first, std::string_view second) {
  const std::pair<std::string_view, std::string_view> key(first, second);
  auto it = counts.find(key);
  if (it == counts.end()) it = counts.emplace(LabelPair(first, second), 0).first;
  ++it->second;
}

Metrics::Metrics() {
  for (const auto event : events) events_.emplace(event, 0);
}

void Metrics::declare_providers(const std::vector<std::string>& providers) {
  std::lock_guard lock(mutex_);
  for (const auto& provider : providers)
    for (const auto outcome : outcomes) outcomes_.emplace(LabelPair(provider, outcome), 0);
}

void Metrics::count_reply(const std::string& route, std::string_view code, std::chrono::nanoseconds took) {
  std::lock_guard lock(mutex_);
  count(replies_, route, code);
  histogram_for(latency_, route, request_bounds).observe(seconds(took));
}

void Metrics::count_event(const std::string& name, std::uint64_t n) {
  std::lock_guard lock(mutex_);
  events_[name] += n;
}

void Metrics::observe_upstream(const std::string& provider, std::chrono::nanoseconds took) {
  std::lock_guard lock(mutex_);
  histogram_for(upstream_, provider, upstream_bounds).observe(seconds(took));
}

void Metrics::count_outcome(const std::string& provider, std::string_view outcome) {
  std::lock_guard lock(mutex_);
  count(outcomes_, provider, outcome);
}

void Metrics::observe_decision(std::string_view kind, std::chrono::nanoseconds took) {
  std::lock_guard lock(mutex_);
  histogram_for(decisions_, kind, request_bounds).observe(seconds(took));
}

void Metrics::count_conflict_retry() {
  std::lock_guard lock(mutex_);
  ++conflict_retries_;
}

void Metrics::count_conflict_give_up() {
  std::lock_guard lock(mutex_);
  ++conflict_give_ups_;
}

void Metrics::count_sweep_done(std::uint64_t swept) {
  std::lock_guard lock(mutex_);
  ++sweeps_ok_;
  swept_ += swept;
}

void Metrics::count_sweep_failed() {
  std::lock_guard lock(mutex_);
  ++sweeps_failed_;
}

void Metrics::count_lookup(const std::string& provider, std::string_view result) {
  std::lock_guard lock(mutex_);
  count(lookups_, provider, result);
}

void Metrics::count_resolved(std::string_view source, std::string_view outcome) {
  std::lock_guard lock(mutex_);
  count(resolved_, source, outcome);
}

void Metrics::watch_authority(std::function<double()> seconds_without) {
  std::lock_guard lock(watch_mutex_);
  seconds_without_authority_ = std::move(seconds_without);
}

void Metrics::set_held(std::vector<Held> held) {
  std::lock_guard lock(mutex_);
  held_ = std::move(held);
}

std::string Metrics::render(const Gauges& g) const {
  PromText out;
  using u64 = std::uint64_t;
  // Read before mutex_ is taken: the guard reports its events (count_event,
  // under mutex_) while it holds its own lock, which this takes too.
  double without_authority = 0;
  {
    std::lock_guard watch(watch_mutex_);
    if (seconds_without_authority_) without_authority = seconds_without_authority_();
  }
  std::lock_guard lock(mutex_);

  out.family("gateway_build_info", "gauge",
             "The running build: version, git commit and the library malloc comes from (value 1).");
  out.sample("gateway_build_info", {{"version", g.version}, {"commit", g.commit}, {"allocator", g.allocator}}, u64{1});

  out.family("gateway_replies_total", "counter", "Replies by route and Gateway-Status code.");
  for (const auto& [key, n] : replies_) out.sample("gateway_replies_total", {{"route", key.first}, {"code", key.second}}, n);
  out.family("gateway_request_seconds", "histogram", "Time from a complete request to its reply.");
  for (const auto& [route, h] : latency_) out.histogram("gateway_request_seconds", {{"route", route}}, h);
  out.family("gateway_events_total", "counter", "Notable internal events.");
  for (const auto& [name, n] : events_) out.sample("gateway_events_total", {{"event", name}}, n);

  out.family("gateway_provider_outcomes_total", "counter",
             "Protected attempts forwarded to a provider, by the outcome their reply (or its absence) was classified as.");
  for (const auto& [key, n] : outcomes_)
    out.sample("gateway_provider_outcomes_total", {{"provider", key.first}, {"outcome", key.second}}, n);
  out.family("gateway_upstream_request_seconds", "histogram",
             "Time of one forwarded exchange with a provider, connection wait included, whatever it ended in.");
  for (const auto& [provider, h] : upstream_) out.histogram("gateway_upstream_request_seconds", {{"provider", provider}}, h);

  out.family("gateway_db_decision_seconds", "histogram",
             "Time a request waited for one database decision (admission or outcome record): queue wait, "
             "transaction and conflict retries.");
  for (const auto& [kind, h] : decisions_) out.histogram("gateway_db_decision_seconds", {{"kind", kind}}, h);
  out.family("gateway_db_serialization_retries_total", "counter",
             "SERIALIZABLE decisions that conflicted (serialization failure, deadlock) and were tried again.");
  out.sample("gateway_db_serialization_retries_total", {}, conflict_retries_);
  out.family("gateway_db_serialization_give_ups_total", "counter",
             "Decisions that still conflicted after database.max_attempts: answered authority_unavailable.");
  out.sample("gateway_db_serialization_give_ups_total", {}, conflict_give_ups_);

  out.family("gateway_db_pool_size", "gauge", "Database worker threads (database.pool_size).");
  out.sample("gateway_db_pool_size", {}, u64{g.pool_size});
  out.family("gateway_db_connections_open", "gauge", "Workers holding an open database connection.");
  out.sample("gateway_db_connections_open", {}, u64{g.open});
  out.family("gateway_db_direct_connections_open", "gauge",
             "Database connections the I/O threads drive themselves (database.direct_connections per thread).");
  out.sample("gateway_db_direct_connections_open", {}, u64{g.direct_open});
  out.family("gateway_db_direct_waiting", "gauge",
             "Decisions waiting their turn for an I/O thread's own connection, all of them lent.");
  out.sample("gateway_db_direct_waiting", {}, u64{g.direct_waiting});
  out.family("gateway_db_direct_lent", "gauge",
             "Decisions holding an I/O thread's own connection; above the connections open, statements are sent "
             "behind one another (database.direct_pipeline).");
  out.sample("gateway_db_direct_lent", {}, u64{g.direct_lent});
  out.family("gateway_db_direct_decisions_total", "counter",
             "Decisions made as one statement on an I/O thread's own connection, without a database worker.");
  out.sample("gateway_db_direct_decisions_total", {}, u64{direct_decisions_.load(std::memory_order_relaxed)});
  out.family("gateway_db_connections_in_use", "gauge", "Database connections running a job now.");
  out.sample("gateway_db_connections_in_use", {}, u64{g.in_use});
  out.family("gateway_db_queue_depth", "gauge", "Database jobs waiting for a worker, by lane.");
  out.sample("gateway_db_queue_depth", {{"lane", "request"}}, u64{g.queued_requests});
  out.sample("gateway_db_queue_depth", {{"lane", "outcome"}}, u64{g.queued_outcomes});
  out.family("gateway_db_watchdog_interrupts_total", "counter",
             "Database connections cut by the call_timeout watchdog.");
  out.sample("gateway_db_watchdog_interrupts_total", {}, u64{g.interrupted});
  out.family("gateway_db_shared_commits_total", "counter",
             "Transactions that carried more than one decision (database.group_max).");
  out.sample("gateway_db_shared_commits_total", {}, u64{g.groups_committed});
  out.family("gateway_db_shared_decisions_total", "counter", "Decisions committed in a shared transaction.");
  out.sample("gateway_db_shared_decisions_total", {}, u64{g.grouped_decisions});
  out.family("gateway_db_shared_splits_total", "counter",
             "Shared transactions that failed before their commit, each decision then made alone.");
  out.sample("gateway_db_shared_splits_total", {}, u64{g.groups_split});
  out.family("gateway_db_up", "gauge", "1 unless the last database connect failed.");
  out.sample("gateway_db_up", {}, u64{g.database_reachable ? 1u : 0u});
  out.family("gateway_without_authority_seconds", "gauge",
             "How long this gateway has had no primary it may use (database lost or refused by the guard); 0 while it has one.");
  out.sample("gateway_without_authority_seconds", {}, without_authority);
  // The old names, kept for existing dashboards.
  out.family("gateway_db_pool_connections", "gauge", "Deprecated: gateway_db_pool_size.");
  out.sample("gateway_db_pool_connections", {}, u64{g.pool_size});
  out.family("gateway_db_pool_busy", "gauge", "Deprecated: gateway_db_connections_in_use.");
  out.sample("gateway_db_pool_busy", {}, u64{g.in_use});
  out.family("gateway_db_pool_queued", "gauge", "Deprecated: the sum of gateway_db_queue_depth.");
  out.sample("gateway_db_pool_queued", {}, u64{g.queued_requests + g.queued_outcomes});

  if (held_) {
    // Both states always present, so an alert on 0 -> N has a series to watch.
    constexpr std::array<std::string_view, 2> states{"in_flight", "unknown"};
    auto find = [&](std::string_view state) -> Held {
      for (const auto& h : *held_)
        if (h.state == state) return h;
      return {std::string(state), 0, 0};
    };
    out.family("gateway_held_operations", "gauge",
               "Operations holding their task, by state (in_flight, unknown), as of the sweep loop's last count.");
    for (auto state : states)
      out.sample("gateway_held_operations", {{"state", std::string(state)}}, u64(find(state).count));
    out.family("gateway_held_oldest_age_seconds", "gauge",
               "Authority time since the longest-held operation of each state was admitted or became unknown "
               "(0 when none).");
    for (auto state : states)
      out.sample("gateway_held_oldest_age_seconds", {{"state", std::string(state)}}, find(state).oldest_age_seconds);
  }

  out.family("gateway_sweeps_total", "counter", "Sweep rounds over abandoned forwards, by result (ok, failed).");
  out.sample("gateway_sweeps_total", {{"result", "ok"}}, sweeps_ok_);
  out.sample("gateway_sweeps_total", {{"result", "failed"}}, sweeps_failed_);
  out.family("gateway_swept_operations_total", "counter",
             "In-flight operations past their forward deadline that the sweep declared unknown.");
  out.sample("gateway_swept_operations_total", {}, swept_);
  out.family("gateway_reconcile_lookups_total", "counter",
             "Provider status lookups of held operations, by result: settled, held (answer settled nothing), failed "
             "(not recorded).");
  for (const auto& [key, n] : lookups_)
    out.sample("gateway_reconcile_lookups_total", {{"provider", key.first}, {"result", key.second}}, n);
  out.family("gateway_operations_resolved_total", "counter",
             "Held operations resolved, by source (lookup, webhook, operator) and outcome.");
  for (const auto& [key, n] : resolved_)
    out.sample("gateway_operations_resolved_total", {{"source", key.first}, {"outcome", key.second}}, n);

  out.family("gateway_log_lines_dropped_total", "counter", "Log lines dropped because the log queue was full.");
  out.sample("gateway_log_lines_dropped_total", {}, g.log_lines_dropped);
  return out.text();
}

}  // namespace gw
